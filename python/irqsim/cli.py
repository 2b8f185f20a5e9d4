"""The ``irqsim`` command: run, validate, reproduce, timeline, bench.

Errors in the user's input print one line naming the file, key or line and
exit with status 2; they never print a traceback.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from irqsim import IrqsimError, __version__, api, studies

app = typer.Typer(add_completion=False, help="Simulate interrupt and event handling for network I/O.")
# Wide when piped, so tables stay one row per line in files and logs.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False)

Sets = Annotated[Optional[list[str]], typer.Option("--set", "-s", help="Override a key: KEY.PATH=VALUE (repeatable).")]
AsJson = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
ScenarioArg = Annotated[str, typer.Argument(help="Scenario TOML file, or a bundled scenario name such as mt-interrupts/driver-rx-single.")]


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
    t = Table(title=name, show_edge=False)
    t.add_column("metric")
    t.add_column("value", justify="right")
    for k, v in r.metrics.items():
        t.add_row(k, _fmt(v))
    out.print(t)
    b = r.bins
    bt = Table(title="cycle bins per hardware thread (% of elapsed)", show_edge=False)
    bt.add_column("thread")
    for c in b.columns:
        bt.add_column(c, justify="right")
    for thread, row in b.iterrows():
        total = row.sum()
        bt.add_row(str(thread), *(f"{100 * x / total:.2f}" for x in row))
    out.print(bt)
    cb = r.context_bins
    if len(cb) > len(b):
        ct = Table(title="cycles per hardware context (% of elapsed)", show_edge=False)
        ct.add_column("thread / context")
        for c in cb.columns:
            ct.add_column(c, justify="right")
        for (thread, ctx), row in cb.iterrows():
            ct.add_row(f"{thread} / {ctx}", *(f"{100 * x / r.elapsed_cycles:.2f}" for x in row))
        out.print(ct)


@app.command()
def run(scenario: ScenarioArg, set: Sets = None, as_json: AsJson = False) -> None:
    """Run a scenario and print its metrics and cycle bins."""
    r = api.run(scenario, set or [])
    if as_json:
        print(json.dumps(r.to_json(), indent=1, allow_nan=False))
    else:
        _print_result(r, scenario)


@app.command()
def scenarios() -> None:
    """List the bundled scenarios (usable by name in run, validate and timeline)."""
    t = Table(show_edge=False)
    t.add_column("scenario")
    t.add_column("name")
    for p in sorted(api.SCENARIOS.rglob("*.toml")):
        t.add_row(str(p.relative_to(api.SCENARIOS).with_suffix("")), api.validate(p).get("name", ""))
    out.print(t)


@app.command()
def validate(scenario: ScenarioArg, set: Sets = None) -> None:
    """Check a scenario without running it; print it with every default filled in."""
    print(json.dumps(api.validate(scenario, set or []), indent=1))
    err.print(f"{scenario}: ok")


@app.command()
def reproduce(
    study: Annotated[Optional[list[str]], typer.Argument(help=f"Studies to reproduce (default: all of {', '.join(studies.names())}).")] = None,
    as_json: AsJson = False,
) -> None:
    """Reproduce the seed studies: the paper's numbers beside the simulated ones."""
    names = study or studies.names()
    unknown = [n for n in names if n not in studies.MODULES]
    if unknown:
        raise IrqsimError(f"unknown study {', '.join(unknown)}; known: {', '.join(studies.names())}")
    rows = [row for n in names for row in studies.reproduce(n)]
    if as_json:
        print(json.dumps([r.to_dict() for r in rows], indent=1))
        return
    for n in names:
        t = Table(title=f"{n}: paper vs simulated", show_edge=False)
        for c in ("experiment", "metric", "unit", "paper", "simulated", "error"):
            t.add_column(c, justify="right" if c in ("paper", "simulated", "error") else "left")
        for r in (r for r in rows if r.study == n):
            t.add_row(r.experiment, r.metric, r.unit, _fmt(r.paper), _fmt(r.simulated), f"{100 * r.rel_error:+.2f}%")
        out.print(t)
        out.print()


@app.command()
def timeline(
    scenario: ScenarioArg,
    output: Annotated[Path, typer.Option("-o", "--output", help="Where to write the Chrome/Perfetto trace JSON.")] = Path("trace.json"),
    set: Sets = None,
) -> None:
    """Write a Chrome/Perfetto trace (one track per hardware context) for chrome://tracing or ui.perfetto.dev."""
    r = api.run(scenario, set or [], timeline=True)
    trace = r.chrome_trace()
    output.write_text(json.dumps(trace))
    n = sum(1 for e in trace["traceEvents"] if e["ph"] != "M")
    dropped = trace["otherData"]["dropped"]
    note = f" ({dropped:,} more not recorded: raise stats.timeline_max_items or shorten run.duration_ms)" if dropped else ""
    err.print(f"wrote {output}: {n:,} events{note}")


@app.command()
def bench(
    as_json: AsJson = False,
    set: Sets = None,
    repeat: Annotated[int, typer.Option(help="Runs; the best is reported.")] = 3,
) -> None:
    """Measure simulator speed on a saturated full receive path (docs/performance.md)."""
    from irqsim.bench import measure

    res = measure(set or [], repeat=repeat)
    if as_json:
        print(json.dumps(res, indent=1))
        return
    t = Table(title=f"irqsim bench: {res['scenario']} (best of {res['repeat']})", show_edge=False)
    t.add_column("measure")
    t.add_column("value", justify="right")
    for k, v in res.items():
        if isinstance(v, (int, float)):
            t.add_row(k, _fmt(v))
    out.print(t)


@app.command("exec")
def exec_(
    program: Annotated[str, typer.Argument(help="MIPS ELF (o32, static, entry __start), or a bundled program name such as arith.")],
    set: Sets = None,
    as_json: AsJson = False,
) -> None:
    """Run a MIPS program on the simulated core (caches, SMT: --set keys in docs/models/cores.md); exits with its exit code."""
    from irqsim.exec import command

    raise typer.Exit(command(program, set or [], as_json))


def main() -> None:
    try:
        app()
    except IrqsimError as e:
        err.print(f"[bold red]error:[/] {e}", soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
