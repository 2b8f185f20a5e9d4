"""The ``irqsim`` command: one function per subcommand.

Errors in the user's input print one line naming the file, key or line and
exit with status 2; Ctrl-C prints one line and exits with 130; neither
prints a traceback. Heavy modules (pandas, numpy, matplotlib, dask, duckdb)
are imported inside the commands that need them, so ``irqsim --help`` and
``irqsim validate`` start quickly.
"""

from __future__ import annotations

import errno
import io
import json
import math
import sys
import unicodedata
from pathlib import Path
from typing import Annotated, Optional

import typer

from irqsim import InvariantError, IrqsimError, OutputError, __version__, api, studies

app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False, help="Simulate interrupt and event handling for network I/O.")
plot_app = typer.Typer(rich_markup_mode=None, help="Draw a sweep or a run's timeline (PNG or SVG, by the output's suffix).")
app.add_typer(plot_app, name="plot")

Sets = Annotated[Optional[list[str]], typer.Option("--set", "-s", help="Override a key: KEY.PATH=VALUE (repeatable).")]
AsJson = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
ScenarioArg = Annotated[str, typer.Argument(help="Scenario TOML file, or a bundled scenario name such as mt-interrupts/driver-rx-single.")]
SET = "--set"  # what overrides are called in errors on the command line


def _console():
    """stdout as a rich console: wide when piped so table rows stay one line,
    and no markup or emoji codes, so names and values print as they are."""
    from rich.console import Console

    return Console(highlight=False, markup=False, emoji=False, width=None if sys.stdout.isatty() else 160)


def _table(title: str | None = None, columns: tuple[str, ...] = (), right: tuple[str, ...] = ()):
    from rich.table import Table

    t = Table(title=title, show_edge=False)
    for c in columns:
        t.add_column(c, justify="right" if c in right else "left")
    return t


def _note(msg: str) -> None:
    print(clean(msg), file=sys.stderr)


@app.callback(invoke_without_command=True)
def _options(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    if version:
        print(f"irqsim {__version__}")
        raise typer.Exit()
    if ctx.invoked_subcommand is None:
        print(ctx.get_help())
        raise typer.Exit()


def _fmt(v: float) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "-"
    if float(v).is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.1f}"


def _print_result(r: api.Result, name: str) -> None:
    out = _console()
    from irqsim import metrics

    t = _table(name, ("metric", "value", "unit"), right=("value",))
    for k, v in r.metrics.items():
        t.add_row(k, _fmt(v), metrics.unit(k))
    out.print(t)
    b = r.bins
    bt = _table("cycle bins per hardware thread (% of elapsed)", ("thread", *b.columns), right=tuple(b.columns))
    # A kernel per core (`code.cpus`): each thread's row names the kernel it ran.
    kernel = {0.0: " (abstract costs)", 1.0: " (code)"}
    for thread, row in b.iterrows():
        total = row.sum()
        ran = kernel.get(r.metrics.get(f"cpu{thread}_runs_code"), "")
        bt.add_row(f"{thread}{ran}", *(f"{100 * x / total:.2f}" for x in row))
    out.print(bt)
    cb = r.context_bins
    if len(cb) > len(b):
        ct = _table("cycles per hardware context (% of elapsed)", ("thread / context", *cb.columns), right=tuple(cb.columns))
        for (thread, ctx), row in cb.iterrows():
            ct.add_row(f"{thread} / {ctx}", *(f"{100 * x / r.elapsed_cycles:.2f}" for x in row))
        out.print(ct)


def _run(scenario: str, sets: list[str], timeline: bool = False) -> api.Result:
    """Runs with a progress line on stderr when it is a terminal and the run is long."""
    from irqsim.progress import RunProgress

    drawer = RunProgress.for_terminal(scenario, sets)
    try:
        return api.run(scenario, sets, timeline=timeline, progress=drawer, _label=SET)
    finally:
        if drawer:
            drawer.close()


@app.command()
def run(
    scenario: ScenarioArg,
    set: Sets = None,
    as_json: AsJson = False,
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Also write an output directory: config.toml, metrics.json, Parquet tables.")] = None,
    timeline: Annotated[bool, typer.Option("--timeline", help="With -o: also record the timeline (timeline.json, Chrome trace).")] = False,
) -> None:
    """Run a scenario and print its metrics and cycle bins."""
    timeline = timeline and output is not None
    r = _run(scenario, set or [], timeline=timeline)
    if output is not None:
        from irqsim.output import write_run

        write_run(output, r, scenario, set or [], timeline=timeline)
        _note(f"wrote {output}/")
    if as_json:
        print(json.dumps(r.to_dict(), indent=1, allow_nan=False))
    else:
        _print_result(r, clean(scenario))


@app.command()
def scenarios() -> None:
    """List the bundled scenarios (usable by name in run, validate and timeline)."""
    names = api.bundled()
    width = max(map(len, names))
    for n in names:
        print(f"{n:<{width}}  {api.validate(n).get('name', '')}")


@app.command()
def validate(scenario: ScenarioArg, set: Sets = None) -> None:
    """Check a scenario without running it; print the parts its run uses, every default filled in."""
    doc = api.validate(scenario, set or [], _label=SET)
    print(json.dumps(doc, indent=1))
    used = [k for k, v in doc.items() if isinstance(v, dict)]
    _note(f"{scenario}: ok (parts: {', '.join(used)})")


@app.command()
def parts(
    as_json: AsJson = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print docs/config.md as the code generates it.")] = False,
) -> None:
    """List every part a scenario can have, the workload kinds that use it, and its keys."""
    from irqsim import _core

    if markdown:
        print(_core.parts(markdown=True), end="")
        return
    doc = api.parts()
    if as_json:
        print(json.dumps(doc, indent=1))
        return
    out = _console()
    for part in doc:
        groups = [("", part["params"])] + [(f' (kind = "{k["kind"]}")', k["params"]) for k in part.get("kinds", [])]
        groups += [(f".{p['key']}.{s['name']}", s["params"]) for p in part["params"] for s in p.get("sections", [])]
        for suffix, params in groups:
            head = f"[{part['section']}{suffix}]" if suffix.startswith(".") else f"[{part['section']}]{suffix}"
            title = f"{head}: {part['title']}" if part["section"] else "top level"
            if part["used_by"] and not suffix:
                title += f" — used by {', '.join(part['used_by'])}"
            t = _table(title, ("key", "type", "unit", "default", "range", "meaning"))
            t.title_justify = "left"
            for p in params:
                when = f"; only when {p['when']['key']} is {' or '.join(p['when']['is'])}" if "when" in p else ""
                t.add_row(p["key"], p["type"].replace("`", ""), p["unit"], p["default"], p.get("range", ""), p["help"].replace("`", "") + when)
            out.print(t)
            out.print()


@app.command()
def reproduce(
    study: Annotated[Optional[list[str]], typer.Argument(help=f"Studies to reproduce (default: all of {', '.join(studies.names())}).")] = None,
    as_json: AsJson = False,
    full: Annotated[bool, typer.Option("--full", help="Every row and table, not the one-line summary per study.")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print Markdown tables (for docs).")] = False,
) -> None:
    """Reproduce the seed studies: a line per study (rows, median |error|, agreement), or --full tables of paper vs simulated."""
    from irqsim.progress import Steps
    from irqsim.studies import views

    names = study or studies.names()
    unknown = [n for n in names if n not in studies.MODULES]
    if unknown:
        raise IrqsimError(f"unknown study {', '.join(unknown)}; known: {', '.join(studies.names())}")
    rows, extra = {}, {}
    with Steps("reproducing", "reproduced", names) as steps:
        for n in names:
            steps.start(n)
            rows[n] = studies.reproduce(n)
            extra[n] = studies.tables(n) if full else []
    if as_json:
        print(json.dumps([r.to_dict() for n in names for r in rows[n]], indent=1))
        return
    tables = [(None, views.SUMMARY, [list(views.summary(n, rows[n]).values()) for n in names])] if not full else []
    for n in names if full else ():
        tables.append((f"{n}: paper vs simulated", views.FULL, [views.row_cells(r, _fmt) for r in rows[n]]))
        tables += [(title, tuple(t[0]), [[v if isinstance(v, str) else _fmt(v) for v in row.values()] for row in t]) for title, t in extra[n]]
    against = [] if full else [line for n in names for line in views.disagreeing(n, rows[n])]
    if markdown:
        print("\n".join(views.markdown(*t) for t in tables), end="")
        print("".join(f"\n- {line}" for line in against) + ("\n" if against else ""), end="")
        return
    out = _console()
    for title, columns, cells in tables:
        t = _table(title, columns, right=("rows", "median |error|", "largest |error|", "agree", "disagree", "paper", "simulated", "error", *(c for c in columns if c not in views.SUMMARY + views.FULL)))
        for r in cells:
            t.add_row(*r)
        out.print(t)
        out.print()
    for line in against:
        out.print(f"disagrees: {line}")
    if not full:
        _note("full tables: irqsim reproduce --full (or --markdown, --json)")


@app.command()
def timeline(
    scenario: ScenarioArg,
    output: Annotated[Path, typer.Option("-o", "--output", help="Where to write the Chrome trace JSON.")] = Path("trace.json"),
    set: Sets = None,
) -> None:
    """Write a Chrome trace (one track per hardware context): chrome://tracing, ui.perfetto.dev or `irqsim plot timeline`."""
    from irqsim.output import write_timeline

    r = _run(scenario, set or [], timeline=True)
    n, dropped = write_timeline(output, r)
    note = f" ({dropped:,} more not recorded: raise stats.timeline_max_items or shorten run.duration_ms)" if dropped else ""
    _note(f"wrote {output}: {n:,} events{note}")


@app.command()
def bench(
    as_json: AsJson = False,
    set: Sets = None,
    repeat: Annotated[int, typer.Option(help="Runs; the best (least CPU time) is reported.")] = 3,
    scenario: Annotated[str, typer.Option(help="Scenario to time (default: the saturated receive path).")] = "bench/rx-overload",
    scaling: Annotated[Optional[str], typer.Option(help="Instead: events per CPU-second on bench/msix-scaling at these CPU counts, e.g. 1,8,64.")] = None,
    iss: Annotated[bool, typer.Option("--iss", help="Instead: the MIPS simulator's instructions per CPU-second (bench/kernels; bench/long beside qemu-mips).")] = False,
    overhead: Annotated[bool, typer.Option("--overhead", help="Instead: µs per tiny irqsim.run (10 simulated µs), the core's and Python's.")] = False,
    nic_firmware: Annotated[
        bool, typer.Option("--nic-firmware", help="Instead: the programmable NIC's core-cycles per CPU-second on 1-6 cores, beside the MIPS simulator's fast path.")
    ] = False,
) -> None:
    """Measure simulator speed, per wall second and per CPU-second (docs/performance.md)."""
    from irqsim.bench import iss as iss_bench, measure, nic_firmware as nic_bench, overhead as overhead_bench, parse_counts, scaling as scaling_bench

    if sum([scaling is not None, iss, overhead, nic_firmware]) > 1:
        raise IrqsimError("choose one of --scaling, --iss, --overhead and --nic-firmware")
    if scaling is not None or iss or overhead or nic_firmware:
        if nic_firmware:
            rows, title = nic_bench(repeat=repeat), "programmable NIC"
        elif iss:
            rows, title = iss_bench(repeat=repeat), "instruction-set simulator"
        elif overhead:
            rows, title = overhead_bench(repeat=repeat), "overhead per tiny run"
        else:
            rows, title = scaling_bench(parse_counts(scaling), repeat=repeat), "scaling"
        if as_json:
            print(json.dumps(rows, indent=1))
            return
        t = _table(f"irqsim bench: {title} (best of {repeat})", tuple(rows[0]), right=tuple(rows[0]))
        for row in rows:
            t.add_row(*(v if isinstance(v, str) else "-" if v is None else _fmt(v) for v in row.values()))
        _console().print(t)
        return
    res = measure(set or [], repeat=repeat, scenario=scenario)
    if as_json:
        print(json.dumps(res, indent=1))
        return
    t = _table(f"irqsim bench: {res['scenario']} (best of {res['repeat']})", ("measure", "value"), right=("value",))
    for k, v in res.items():
        if isinstance(v, (int, float)):
            t.add_row(k, _fmt(v))
    _console().print(t)


@app.command()
def sweep(
    spec: Annotated[Path, typer.Argument(help="Sweep spec TOML (docs/sweeps.md).")],
    out: Annotated[Path, typer.Option("-o", "--output", help="Results directory; rerun to resume.")],
    set: Sets = None,
    workers: Annotated[Optional[int], typer.Option(help="Local threads (default: one per core; with --dashboard, dask worker processes).")] = None,
    scheduler: Annotated[Optional[str], typer.Option(help="Address of a running dask scheduler, e.g. tcp://10.0.0.5:8786.")] = None,
    slurm: Annotated[bool, typer.Option("--slurm", help="Run on SLURM through dask-jobqueue (pip install 'irqsim[slurm]').")] = False,
    slurm_jobs: Annotated[int, typer.Option(help="SLURM jobs to start (with --slurm).")] = 1,
    slurm_opt: Annotated[Optional[list[str]], typer.Option(help="SLURMCluster option KEY=VALUE, e.g. queue=\"normal\" (repeatable).")] = None,
    retry_failed: Annotated[bool, typer.Option(help="Run again the runs recorded as failed.")] = False,
    new_build: Annotated[bool, typer.Option(help="OUT was computed by another build of irqsim: compute its runs again with this one.")] = False,
    dashboard: Annotated[bool, typer.Option("--dashboard", help="Run on a local dask cluster and serve its dashboard on http://127.0.0.1:8787 (needs bokeh).")] = False,
) -> None:
    """Run a scenario over a grid of keys and seeds on every core (or dask); results as Parquet in OUT."""
    from irqsim.sweeps import Cluster, run_sweep

    cluster = Cluster(workers=workers, scheduler=scheduler, slurm=slurm, slurm_jobs=slurm_jobs, slurm_options=slurm_opt or [], dashboard=dashboard)
    done = run_sweep(spec, out, sets=set or [], cluster=cluster, progress=True, retry_failed=retry_failed, new_build=new_build)
    _note(f"wrote {out}/: {done.runs} runs ({done.failed} failed, {done.computed} computed now)")


@app.command()
def query(
    directory: Annotated[Path, typer.Argument(help="A sweep's results directory.")],
    sql: Annotated[str, typer.Argument(help='SQL over the views `runs` and `summary`, e.g. "SELECT seed, events FROM runs".')],
    csv: Annotated[bool, typer.Option("--csv", help="Print CSV.")] = False,
    as_json: AsJson = False,
) -> None:
    """Query a sweep's results with DuckDB."""
    from irqsim.sweeps import query as run_query

    df = run_query(directory, sql)
    if as_json:
        print(df.to_json(orient="records", indent=1))
    elif csv:
        print(df.to_csv(index=False), end="")
    else:
        t = _table(None, tuple(clean(str(c)) for c in df.columns))
        for row in df.itertuples(index=False):
            t.add_row(*(_fmt(v) if isinstance(v, float) else clean(str(v)) for v in row))
        _console().print(t)


@app.command()
def report(
    directory: Annotated[Path, typer.Argument(help="A run's output directory (irqsim run -o DIR [--timeline]) or a sweep's.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The HTML file to write.")] = Path("report.html"),
    x: Annotated[str, typer.Option("--x", help="Sweep: the key on the x axis (default: the first grid key).")] = "",
) -> None:
    """Write one self-contained HTML report that opens offline: metrics with units, bins, latency CDF, interactive timeline; or a sweep's plots."""
    from irqsim.report import write_report

    kind = write_report(directory, output, x or None)
    _note(f"wrote {output}: the report of {kind} {directory}")


@plot_app.command("sweep")
def plot_sweep(
    directory: Annotated[Path, typer.Argument(help="A sweep's results directory.")],
    metric: Annotated[str, typer.Option(help="Metric on the y axis.")],
    x: Annotated[str, typer.Option("--x", help="Grid key on the x axis (default: the first).")] = "",
    output: Annotated[Path, typer.Option("-o", "--output", help="PNG or SVG.")] = Path("sweep.png"),
    logx: Annotated[bool, typer.Option(help="Logarithmic x axis.")] = False,
) -> None:
    """A metric against a grid key: one line per value of the other keys, 95% CI bands across seeds."""
    from irqsim.plot import sweep_figure

    lines = sweep_figure(directory, metric, x or None, output, logx=logx)
    _note(f"wrote {output}: {len(lines)} lines")


@plot_app.command("timeline")
def plot_timeline(
    trace: Annotated[Path, typer.Argument(help="Chrome trace JSON (from `irqsim timeline` or `irqsim run -o DIR --timeline`), or that DIR.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="PNG or SVG.")] = Path("timeline.png"),
    start_us: Annotated[Optional[float], typer.Option(help="Window start (µs).")] = None,
    end_us: Annotated[Optional[float], typer.Option(help="Window end (µs).")] = None,
) -> None:
    """A Gantt chart of a run's timeline: one row per hardware context and device."""
    from irqsim.plot import crowded, load_trace, timeline_figure

    doc = load_trace(trace)
    tracks = timeline_figure(doc, output, start_us=start_us, end_us=end_us)
    _note(f"wrote {output}: {len(tracks)} tracks")
    if n := crowded(doc, start_us, end_us):
        _note(f"{n:,} spans are too many to tell apart in one figure: draw a window with --start-us and --end-us, or zoom in the report (irqsim run -o DIR --timeline; irqsim report DIR)")


@app.command("exec")
def exec_(
    program: Annotated[str, typer.Argument(help="MIPS ELF (o32, static, entry __start), or a bundled program name such as arith.")],
    set: Sets = None,
    as_json: AsJson = False,
) -> None:
    """Run a MIPS program on the simulated core (caches, SMT: --set keys in docs/models/cores.md); exits with its exit code."""
    from irqsim.exec import command

    raise typer.Exit(command(program, set or [], as_json))


@app.command()
def ilp(
    program: Annotated[str, typer.Argument(help="MIPS ELF, or a bundled program such as firmware/nic.")],
    profile: Annotated[Path, typer.Option(help="Block profile JSON of a 1-core run (or a whole measured window, the `nic_firmware` part of `irqsim run --json`).")],
    units: Annotated[Optional[list[str]], typer.Option(help="Unit mix INT/MEM/BRANCH (repeatable; default: the paper's seven).")] = None,
    record: Annotated[bool, typer.Option("--record", help="First run the NIC firmware on 1 core and write its profile to --profile.")] = False,
    set: Annotated[Optional[list[str]], typer.Option("--set", "-s", help="With --record: a key of the run's scenario (nic-firmware/duplex-64), e.g. nic_firmware.batch=3.")] = None,
    memory: Annotated[str, typer.Option(help="Memory rule: registers (the seed's: register dependences only) or ordered (loads and stores keep order against stores).")] = "registers",
    as_json: AsJson = False,
) -> None:
    """Schedule a program's basic blocks for VLIW cores, weighted by a profile (docs/models/nic-firmware.md)."""
    from irqsim.ilp import command

    command(program, profile, units or [], record, set or [], as_json, memory)


def clean(msg: str) -> str:
    """``msg`` on one line with control characters and escape sequences
    shown as escapes (``\\x1b``), so input cannot drive the terminal."""
    return "".join(c if unicodedata.category(c)[0] != "C" and c not in "\u2028\u2029" else repr(c)[1:-1] for c in msg)


def _fail(msg: str, status: int) -> None:
    print(f"error: {clean(msg)}", file=sys.stderr)
    if status == 130:
        # CPython notes a KeyboardInterrupt that left code run by a string
        # exec (a dataclass being made during an import) as unhandled, even
        # once caught, and under `python -m` then ends the process with
        # SIGINT in place of this exit (Py_RunMain, exit_sigint: status -2).
        # Each string exec starts by clearing that note.
        exec("", {})
    sys.exit(status)


def _ignore_late_ctrl_c() -> None:
    """Ignores Ctrl-C from here to the process's exit: the command has
    ended, and Python's shutdown restores SIGINT's default action, so a
    Ctrl-C then would kill the process (status -2) after it printed its
    result or its error. A Ctrl-C that came before is raised once ignored."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    pending = False
    while True:
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # raises a pending Ctrl-C first
            break
        except KeyboardInterrupt:
            pending = True
    if pending:
        raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    """Entry point: runs the command, turning errors into one line and an exit status."""
    from typer.exceptions import Exit, TyperException
    from typer.main import get_command

    command = get_command(app)
    if sys.stdout is None:
        # Started with stdout closed (`>&-`): a result printed would be lost, so printing fails.
        sys.stdout = _ClosedStdout()
    try:
        try:
            with command.make_context("irqsim", list(sys.argv[1:] if argv is None else argv)) as ctx:
                command.invoke(ctx)
            sys.stdout.flush()
        finally:
            if argv is None:  # the process's own command, not a call from Python
                _ignore_late_ctrl_c()
    except Exit as e:
        sys.exit(e.exit_code)
    except TyperException as e:  # a usage error: unknown option, missing argument
        _fail(f"{e.format_message()} (see irqsim --help)", getattr(e, "exit_code", 2))
    except (InvariantError, OutputError) as e:
        # Not bad input: the simulator broke a law, or its results could not be written.
        _fail(str(e), 1)
    except IrqsimError as e:
        _fail(str(e), 2)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(1)
    except OSError as e:
        if e.errno != errno.EBADF:
            raise
        _fail("stdout is closed: the result could not be printed", 1)


class _ClosedStdout(io.TextIOBase):
    """What ``sys.stdout`` is when the process started with it closed."""

    def write(self, s: str) -> int:
        raise OSError(errno.EBADF, "stdout is closed")


if __name__ == "__main__":
    main()
