"""Sweeps: the spec, the Parquet results (pandas, pyarrow, DuckDB), the
summary's confidence intervals, failed runs, resuming, the SLURM wiring."""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import irqsim
from irqsim.sweeps import Cluster, Spec, dataset

GRID = {"workload.packet_bytes": [500, 1500], "nic.rx_buffer_bytes": [1000, 16384]}
SPEC = {"scenario": "bench/rx-overload", "seeds": 3, "set": {"run.duration_ms": 20.0}, "grid": GRID}


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    return out, irqsim.sweep(SPEC, out=out, workers=1)


def test_one_row_per_grid_point_and_seed(swept):
    out, df = swept
    got = sorted(zip(df["workload.packet_bytes"], df["nic.rx_buffer_bytes"], df["seed"]))
    want = sorted((p, b, s) for p in GRID["workload.packet_bytes"] for b in GRID["nic.rx_buffer_bytes"] for s in (1, 2, 3))
    assert got == want
    assert {p.name for p in out.iterdir()} >= {"sweep.toml", "runs", "results.parquet", "summary.parquet", "summary.csv"}
    assert len(dataset.finished(out)) == 12 and set(df["run_id"]) == dataset.finished(out)
    assert len(list((out / "runs").glob("*.parquet"))) == 1  # rows are written about once a second: these take less


def test_failing_point_is_recorded_and_the_rest_runs(swept):
    """1,500-byte frames never fit a 1,000-byte buffer: those three runs fail with the key named; all others run."""
    _, df = swept
    bad = df[(df["workload.packet_bytes"] == 1500) & (df["nic.rx_buffer_bytes"] == 1000)]
    assert list(bad["status"]) == ["error"] * 3
    assert all("`workload.packet_bytes`" in e and "never fit" in e for e in bad["error"])
    ok = df[df["status"] == "ok"]
    assert len(ok) == 9 and ok["error"].isna().all() and (ok["rx_delivered"] > 0).all()


def test_integers_stay_integers_and_provenance_is_recorded(swept):
    out, df = swept
    schema = pq.read_table(out / "results.parquet").schema
    for col in ("seed", "events", "rx_delivered", "workload.packet_bytes"):
        assert str(schema.field(col).type) == "int64", col
    assert str(schema.field("rx_throughput_mbps").type) == "double"
    assert str(schema.field("irqsim_dirty").type) == "bool" and str(schema.field("cpu_seconds").type) == "double"
    row = df[df["status"] == "ok"].iloc[0]
    assert row["irqsim_version"] == irqsim.__version__ and row["scenario"] == "bench/rx-overload"
    assert row["irqsim_commit"] == irqsim._core.BUILD["commit"] and row["host"] and row["cpu_model"]
    assert row["started_utc"].endswith("+00:00") and row["wall_seconds"] > 0 and row["cpu_seconds"] > 0
    assert len(row["scenario_sha256"]) == 64
    sets = json.loads(row["overrides"])
    assert f"run.seed={row['seed']}" in sets and "run.duration_ms=20.0" in sets


def test_seeds_give_their_own_numbers(swept):
    """Each run is the run irqsim.run gives for the same overrides."""
    _, df = swept
    row = df[(df["status"] == "ok") & (df["seed"] == 2)].iloc[0]
    direct = irqsim.run("bench/rx-overload", json.loads(row["overrides"])).metrics
    assert row["rx_offered"] == direct["rx_offered"] and row["events"] == direct["events"]
    assert df[df["status"] == "ok"].groupby(list(GRID))["rx_offered"].nunique().max() > 1


def test_summary_is_mean_and_t_interval(swept):
    out, df = swept
    summary = pd.read_parquet(out / "summary.parquet")
    point = (df["workload.packet_bytes"] == 500) & (df["nic.rx_buffer_bytes"] == 16384)
    vals = df.loc[point, "rx_offered"].astype(float).tolist()
    s = summary[(summary["metric"] == "rx_offered") & (summary["workload.packet_bytes"] == 500) & (summary["nic.rx_buffer_bytes"] == 16384)].iloc[0]
    half = 4.302652729 * statistics.stdev(vals) / math.sqrt(3)  # t(0.975, 2)
    assert s["n"] == 3 and s["mean"] == pytest.approx(statistics.mean(vals))
    assert s["ci95_high"] - s["mean"] == pytest.approx(half, rel=1e-6)
    assert not ((summary["workload.packet_bytes"] == 1500) & (summary["nic.rx_buffer_bytes"] == 1000)).any()


def test_t_quantiles():
    assert dataset.t975(1) == pytest.approx(12.7062, abs=1e-3)
    assert dataset.t975(9) == pytest.approx(2.2622, abs=1e-3)
    assert dataset.t975(1000) == pytest.approx(1.9623, abs=1e-3)


def test_results_read_with_pandas_pyarrow_and_duckdb(swept, cli):
    out, df = swept
    assert len(pd.read_parquet(out / "results.parquet")) == 12
    assert pq.read_table(out / "results.parquet").num_rows == 12
    p = cli("query", str(out), 'SELECT "workload.packet_bytes" AS b, count(*) AS n FROM runs WHERE status = \'ok\' GROUP BY b ORDER BY b', "--csv")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["b,n", "500,6", "1500,3"]
    p = cli("query", str(out), "SELEC nonsense")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "query:" in p.stderr


def test_rerun_computes_nothing_and_keeps_every_part(swept):
    out, df = swept
    before = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.parquet")}
    done = irqsim.sweeps.run_sweep(SPEC, out, cluster=Cluster(workers=1))
    assert done.computed == 0 and done.runs == 12 and done.failed == 3
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.parquet")} == before


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"scenario": "bench/msix-scaling"}, "its scenario differ"),
        ({"set": {"run.duration_ms": 10.0}}, "its [set] differ"),
        ({"grid": {**GRID, "cpu.clock_mhz": [200.0]}}, "its [grid] keys differ"),
    ],
)
def test_other_sweep_in_same_directory_is_refused(swept, change, needle):
    out, _ = swept
    with pytest.raises(irqsim.IrqsimError, match=re.escape(needle)):
        irqsim.sweep({**SPEC, **change}, out=out, workers=1)


def test_adding_seeds_and_values_computes_only_the_new_runs(tmp_path):
    """From seeds 1-2 to 1-3, then a third packet size: only the new runs
    are computed, into the same directory, and the earlier parts stay untouched."""
    spec = {**SPEC, "seeds": 2, "grid": {"workload.packet_bytes": [500, 1500]}}
    first = irqsim.sweeps.run_sweep(spec, tmp_path, cluster=Cluster(workers=1))
    parts = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "runs").glob("*.parquet")}
    more = irqsim.sweeps.run_sweep({**spec, "seeds": 3}, tmp_path, cluster=Cluster(workers=1))
    wider = irqsim.sweeps.run_sweep({**spec, "seeds": 3, "grid": {"workload.packet_bytes": [500, 1000, 1500]}}, tmp_path, cluster=Cluster(workers=1))
    assert (first.computed, more.computed, wider.computed) == (4, 2, 3) and wider.runs == 9
    assert sorted(wider.results["seed"]) == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert all((tmp_path / "runs" / n).stat().st_mtime_ns == t for n, t in parts.items())


def test_another_build_is_refused_unless_asked(tmp_path, cli):
    """A directory computed by another commit of irqsim is not resumed
    silently: refused with one line, or computed again with --new-build."""
    spec = {**SPEC, "seeds": 1, "grid": {"workload.packet_bytes": [500]}}
    irqsim.sweeps.run_sweep(spec, tmp_path, cluster=Cluster(workers=1))
    build = json.loads((tmp_path / "build.json").read_text())
    (tmp_path / "build.json").write_text(json.dumps({**build, "build": "0123abc"}))
    with pytest.raises(irqsim.IrqsimError, match="computed by irqsim 0123abc, this is .*--new-build"):
        irqsim.sweeps.run_sweep(spec, tmp_path, cluster=Cluster(workers=1))
    done = irqsim.sweeps.run_sweep(spec, tmp_path, cluster=Cluster(workers=1), new_build=True)
    assert done.computed == 0, "the run ids of this build were already there"
    assert json.loads((tmp_path / "build.json").read_text())["build"] == build["build"]


def test_run_id_depends_on_the_build():
    spec = Spec.load(SPEC)
    first = lambda build: next(spec.runs("x", build)).id  # noqa: E731
    assert first("a") != first("b") and first("a") == first("a")


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        ({"commit": "c0ffee", "dirty": False, "digest": ""}, "c0ffee"),
        ({"commit": "c0ffee", "dirty": True, "digest": "00ff00ff00ff00ff"}, "c0ffee+dirty.00ff00ff00ff00ff"),
        ({"commit": "unknown", "dirty": None, "digest": "1234567890abcdef"}, f"{irqsim.__version__}+src.1234567890abcdef"),
    ],
)
def test_build_id_names_the_source_when_the_commit_does_not(monkeypatch, build, expected):
    """A dirty tree and a tree without git (an sdist) are named by their
    source digest, so two such builds of different sources never share run ids."""
    from irqsim import _core, provenance

    monkeypatch.setattr(_core, "BUILD", {**build, "source": "test"})
    provenance.build.cache_clear(), provenance.build_id.cache_clear()
    try:
        assert provenance.build_id() == expected and provenance.build()["irqsim_build"] == expected
    finally:
        monkeypatch.undo()
        provenance.build.cache_clear(), provenance.build_id.cache_clear()


def test_the_sweeps_identity_that_cannot_be_written_stops_it_before_any_part(tmp_path):
    """sweep.toml and build.json are written while the first runs compute;
    if one cannot be, the sweep stops with its error and writes no part."""
    (tmp_path / "build.json").mkdir()
    with pytest.raises(irqsim.OutputError, match="build.json: cannot write"):
        irqsim.sweeps.run_sweep({**SPEC, "seeds": 1}, tmp_path, cluster=Cluster(workers=2))
    assert list((tmp_path / "runs").glob("*.parquet")) == []


def test_only_the_parts_are_flushed_to_disk(tmp_path, monkeypatch):
    """Each part file is flushed before its rename (the record a rerun
    resumes from); the gathered files, which every rerun writes again, are
    not; a rerun with nothing to compute flushes nothing."""
    from irqsim import output

    flushed = []
    real = output.os.fsync

    def fsync(fd):
        flushed.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(output.os, "fsync", fsync)
    spec = {**SPEC, "seeds": 2, "grid": {"workload.packet_bytes": [500]}}
    irqsim.sweeps.run_sweep(spec, tmp_path, cluster=Cluster(workers=1))
    names = [Path(f).name for f in flushed]
    assert sorted(names) == sorted([".sweep.toml.tmp", ".build.json.tmp", *(f".{p.name}.tmp" for p in (tmp_path / "runs").glob("*.parquet"))])
    flushed.clear()
    assert irqsim.sweeps.run_sweep(spec, tmp_path, cluster=Cluster(workers=1)).computed == 0
    assert flushed == [] and (tmp_path / "results.parquet").is_file()


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        ({"seeds": 2}, "`scenario`"),
        ({**SPEC, "grids": {}}, "`grids`: unknown key"),
        ({**SPEC, "seeds": 0}, "`seeds`"),
        ({**SPEC, "grid": {"cpu.clock_mhz": []}}, "`grid.cpu.clock_mhz`: must be a non-empty list"),
        ({**SPEC, "grid": {"cpu.clock_mhz": [1.0, "x"]}}, "`grid.cpu.clock_mhz`: values must be"),
        ({**SPEC, "zip": {"a.b": [1, 2], "c.d": [1]}}, "`zip`: lists must have equal lengths"),
        ({**SPEC, "grid": {"run.seed": [1, 2]}}, "`grid.run.seed`"),
        ({**SPEC, "zip": {"workload.packet_bytes": [1]}}, "also in [grid]"),
    ],
)
def test_bad_spec_names_the_key(doc, needle):
    with pytest.raises(irqsim.ConfigError) as e:
        Spec.from_dict(doc, Spec.load(SPEC).base, "s.toml")
    assert needle in str(e.value) and str(e.value).startswith("s.toml: ")


def test_spec_with_no_valid_run_stops_before_running(tmp_path, cli):
    (tmp_path / "s.toml").write_text('scenario = "bench/rx-overload"\n[grid]\n"cpu.clock_mhzz" = [100.0, 200.0]\n')
    p = cli("sweep", str(tmp_path / "s.toml"), "-o", str(tmp_path / "out"))
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("error: ") and "s.toml" in p.stderr and "`cpu.clock_mhzz`" in p.stderr
    assert p.stderr.count("\n") == 1 and not (tmp_path / "out").exists()


def test_zip_and_unquoted_dotted_keys(tmp_path):
    """[zip] varies keys together; `cpu.clock_mhz = [...]` without quotes means the same key."""
    (tmp_path / "s.toml").write_text(
        'scenario = "bench/rx-overload"\nseeds = [7]\n[set]\nrun.duration_ms = 5.0\n'
        "[zip]\ncpu.clock_mhz = [100.0, 200.0]\nworkload.packet_bytes = [500, 600]\n"
    )
    spec = Spec.load(tmp_path / "s.toml")
    runs = list(spec.runs("x"))
    assert [(r.params, r.seed) for r in runs] == [
        ({"cpu.clock_mhz": 100.0, "workload.packet_bytes": 500}, 7),
        ({"cpu.clock_mhz": 200.0, "workload.packet_bytes": 600}, 7),
    ]
    assert len({r.id for r in runs}) == 2 and "run.duration_ms=5.0" in runs[0].overrides


def test_scenario_path_relative_to_the_spec(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "my.toml").write_text(irqsim.scenario_path("bench/rx-overload").read_text())
    (tmp_path / "sub" / "s.toml").write_text('scenario = "my.toml"\n')
    name, text, base = Spec.load(tmp_path / "sub" / "s.toml").source()
    assert name == "my.toml" and "[workload]" in text and base == (tmp_path / "sub").resolve()


def test_slurm_options_reach_the_job_script():
    """--slurm-opt values become SLURMCluster arguments (no job is submitted here)."""
    pytest.importorskip("dask_jobqueue")
    opts = ['queue="short"', "cores=4", 'memory="8GB"', 'walltime="00:30:00"', 'scheduler_options={host="127.0.0.1"}']
    with Cluster(slurm=True, slurm_options=opts).slurm_cluster() as cluster:
        script = cluster.job_script()
    for line in ("#SBATCH -p short", "#SBATCH --cpus-per-task=4", "#SBATCH --mem=8G", "#SBATCH -t 00:30:00"):
        assert line in script.splitlines(), (line, script)
    assert "tcp://127.0.0.1:" in script
    with pytest.raises(irqsim.IrqsimError, match="--slurm-opt"):
        Cluster(slurm=True, slurm_options=["queue"]).slurm_cluster()


def test_documented_spec_is_valid():
    """The spec in docs/sweeps.md parses, gives the runs it says, and every run validates."""
    import re
    import tomllib
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "sweeps.md").read_text()
    block = re.search(r"## The spec\n\n```toml\n(.*?)```", text, re.S).group(1)
    spec = Spec.from_dict(tomllib.loads(block), Path("."), "docs/sweeps.md")
    runs = list(spec.runs("x"))
    assert len(runs) == 36
    for r in runs[:: len(runs) // 6]:
        irqsim.validate(spec.scenario, r.overrides)


def test_retry_failed_rewrites_only_the_failed_runs(swept):
    """The failed runs are tried again (invalid ones validated again) into a new part, which then holds
    their rows; the earlier parts stay untouched."""
    out, df = swept
    before = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.parquet")}
    failed = set(df.loc[df["status"] != "ok", "run_id"])
    done = irqsim.sweeps.run_sweep(SPEC, out, cluster=Cluster(workers=1), retry_failed=True)
    after = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.parquet")}
    new = set(after) - set(before)
    assert done.failed == 3 and len(done.results) == 12 and all(after[n] == t for n, t in before.items())
    assert len(new) == 1 and set(pq.read_table(out / "runs" / new.pop()).column("run_id").to_pylist()) == failed


def test_threads_give_the_numbers_of_one_thread_and_write_parts_as_they_go(tmp_path, monkeypatch):
    """Two threads compute what one does; with no time between part files,
    each run is written as it finishes. No dask is involved."""
    from irqsim.sweeps import cluster, compute

    spec = {**SPEC, "seeds": 2, "grid": {"workload.packet_bytes": [500, 1000, 1500]}}
    monkeypatch.setattr(cluster.Cluster, "client", lambda self: pytest.fail("a local sweep started a dask cluster"))
    one = irqsim.sweeps.run_sweep(spec, tmp_path / "one", cluster=Cluster(workers=1)).results
    monkeypatch.setattr(compute, "PART_SECONDS", 0.0)
    two = irqsim.sweeps.run_sweep(spec, tmp_path / "two", cluster=Cluster(workers=2)).results
    metrics = ["rx_delivered", "events", "latency_p99_us", "busy_share"]
    key = ["workload.packet_bytes", "seed"]
    a, b = (d.sort_values(key)[key + metrics].reset_index(drop=True) for d in (one, two))
    pd.testing.assert_frame_equal(a, b)
    assert len(list((tmp_path / "one" / "runs").glob("*.parquet"))) == 1
    assert len(list((tmp_path / "two" / "runs").glob("*.parquet"))) == 6 == len(dataset.finished(tmp_path / "two"))


def test_batches_are_about_a_second_and_keep_every_worker_busy():
    from irqsim.sweeps.compute import batch_size

    assert batch_size(0.25, 100, 2) == 4  # a second a batch
    assert batch_size(0.001, 100, 2) == 13  # at least 4 batches per worker
    assert batch_size(5.0, 3, 2) == 1


def test_local_sweep_listens_nowhere(tmp_path):
    """Without --dashboard a sweep imports no dask and opens no listening
    socket (so nothing on 127.0.0.1:8787): looked at from inside a run."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import sys, psutil\n"
        "from irqsim.sweeps import compute, run_sweep\n"
        "seen = []\n"
        "real = compute.execute\n"
        "def execute(job, stop=None):\n"
        "    seen.append(([c.laddr for c in psutil.Process().net_connections('all') if c.status == psutil.CONN_LISTEN], 'distributed' in sys.modules))\n"
        "    return real(job, stop)\n"
        "compute.execute = execute\n"
        f"run_sweep({SPEC!r}, sys.argv[1])\n"
        "print(seen)\n"
    )
    p = subprocess.run([sys.executable, str(probe), str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == repr([([], False)] * 12)


def test_dashboard_when_asked(tmp_path, cli):
    """--dashboard runs on a local dask cluster serving its dashboard, on
    127.0.0.1:8787 unless that port was taken; the sweep prints its address."""
    pytest.importorskip("bokeh")
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import urllib.request\n"
        "from irqsim.sweeps import Cluster\n"
        "if __name__ == '__main__':\n"
        "    with Cluster(workers=1, dashboard=True).client() as client:\n"
        "        web = urllib.request.build_opener(urllib.request.ProxyHandler({}))\n"
        "        page = web.open(client.dashboard_link, timeout=30)\n"
        "        print(client.dashboard_link, page.status)\n"
    )
    taken = socket_listening(8787)
    p = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    link, status = p.stdout.split()
    assert status == "200" and link.startswith("http://127.0.0.1:") and link.endswith("/status")
    assert taken or link == "http://127.0.0.1:8787/status"
    (tmp_path / "s.toml").write_text('scenario = "bench/rx-overload"\nseeds = 2\n[set]\n"run.duration_ms" = 5.0\n')
    done = cli("sweep", str(tmp_path / "s.toml"), "-o", str(tmp_path / "out"), "--dashboard", "--workers", "1")
    assert done.returncode == 0, done.stderr
    assert re.search(r"^dask dashboard: http://127\.0\.0\.1:\d+/status$", done.stderr, re.M) and len(dataset.finished(tmp_path / "out")) == 2


def socket_listening(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_progress_off_a_terminal_prints_plain_lines():
    import io

    from irqsim.progress import SweepProgress

    out = io.StringIO()
    with SweepProgress(4, 1, stream=out, every=0.0) as bar:
        bar.advance(True)
        bar.advance(False)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("sweep: 2 of 4 runs, 0 failed") and lines[1].startswith("sweep: 3 of 4 runs, 1 failed")
    assert lines[-1].startswith("sweep: 3 of 4 runs, 1 failed") and "\x1b" not in out.getvalue()


def test_runs_are_generated_not_listed():
    """A 1000 × 1000 grid with max_runs raised: the spec holds its 2,000
    values and a seed range, and its first runs come at once; listing the
    1,000,000 runs would take hundreds of MB."""
    import tracemalloc

    values = list(range(1, 1001))
    doc = {"scenario": "bench/rx-overload", "seeds": 1_000_000, "max_runs": 10_000_000}
    tracemalloc.start()
    try:
        s = Spec.from_dict({**doc, "grid": {"cpu.clock_mhz": [float(v) for v in values], "workload.packet_bytes": values}, "seeds": 1, "max_runs": 10_000_000}, Path("."), "sweep")
        first = list(itertools.islice(s.runs("sha", "build"), 1000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert s.count() == 1_000_000 and len(first) == 1000 and first[1].params == {"cpu.clock_mhz": 1.0, "workload.packet_bytes": 2}
    assert peak < 8 << 20, peak
    many = Spec.from_dict(doc, Path("."), "sweep")
    assert many.seeds == range(1, 1_000_001) and many.to_dict()["seeds"] == 1_000_000


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("seeds = 1000000000000\n", "1,000,000,000,000 seeds are more runs than max_runs = 100,000"),
        ("[grid]\n\"cpu.clock_mhz\" = [" + ", ".join(f"{i}.0" for i in range(1, 1001)) + "]\n\"workload.packet_bytes\" = [" + ", ".join(str(i) for i in range(100, 1100)) + "]\n", "1,000 × 1,000 grid points × 1 seed = 1,000,000 runs, more than max_runs"),
    ],
)
def test_too_many_runs_is_one_line_in_small_memory(tmp_path, spec, needle):
    """The count is checked before any run exists: one line, exit 2, and the
    process's peak no higher than a spec of one run (a MemoryError and 4.4 GB before)."""
    path = tmp_path / "big.toml"
    path.write_text('scenario = "bench/rx-overload"\n' + spec)

    def peak(args):
        code = f"import sys; from irqsim.cli import main\ntry:\n    main({args!r})\nexcept SystemExit as e:\n    print('exit', e.code, file=sys.stderr)\nprint(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')), file=sys.stderr)"
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        *lines, kb = p.stderr.strip().splitlines()
        return lines, int(kb) / 1024

    lines, big = peak(["sweep", str(path), "-o", str(tmp_path / "out")])
    assert len(lines) == 2 and lines[0].startswith("error: ") and needle in lines[0] and lines[1] == "exit 2", lines
    (tmp_path / "one.toml").write_text('scenario = "bench/rx-overload"\nmax_runs = 0\n')
    _, small = peak(["sweep", str(tmp_path / "one.toml"), "-o", str(tmp_path / "out")])
    assert big < small + 20, (big, small)
    assert not (tmp_path / "out").exists()


def test_a_huge_grid_is_computed_in_bounded_memory(tmp_path, monkeypatch):
    """A 1000 × 40 grid (40,000 runs, each stood in for by a row made at
    once) on two threads: the jobs are taken as a thread is ready for one,
    never listed, so no more than the threads' jobs exist at a time, and
    computing the runs adds under 4 MB of Python memory (tracemalloc: jobs,
    rows and part files), where the list of jobs alone took 32 MB. Gathering
    the results after holds the runs' ids as Arrow strings (about 25 bytes a
    run) and the summary's grid points, and returns the results table."""
    import tracemalloc

    from irqsim.sweeps import compute

    alive, most, peaks = 0, 0, []

    class Counted(compute.Job):
        def __init__(self, *args):
            nonlocal alive, most
            super().__init__(*args)
            alive += 1
            most = max(most, alive)

        def __del__(self):
            nonlocal alive
            alive -= 1

    def measured(*args, **kwargs):
        tracemalloc.start()
        try:
            compute.compute(*args, **kwargs)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()

    def spec(n):
        return {"scenario": "bench/rx-overload", "max_runs": 1_000_000, "grid": {"cpu.clock_mhz": [float(v) for v in range(100, 1100)], "workload.packet_bytes": list(range(100, 100 + n))}}

    monkeypatch.setattr(irqsim.sweeps.runner, "Job", Counted)
    monkeypatch.setattr(compute, "execute", lambda job, stop=None: compute._row(job, {"rx_delivered": job.run.seed}, None, {"wall_seconds": 0.0}))
    irqsim.sweeps.run_sweep(spec(1), tmp_path / "imports", cluster=Cluster(workers=2))
    monkeypatch.setattr(irqsim.sweeps.runner, "compute", measured)
    most = 0
    done = irqsim.sweeps.run_sweep(spec(40), tmp_path / "out", cluster=Cluster(workers=2))
    assert done.runs == done.computed == 40_000 and done.failed == 0
    assert done.table.column("workload.packet_bytes").to_pylist()[:3] == [100, 101, 102]  # the spec's order
    assert most <= 4, most  # the two threads', one being generated, one validated
    assert peaks[0] < 4 << 20, peaks


def test_rows_wait_for_a_slow_writer_in_bounded_number(tmp_path, monkeypatch):
    """Runs that finish faster than their part files are written (a slow
    disk, a loaded machine) wait for the writer: the rows made and not yet
    written stay within a part's rows plus a few per thread, where the
    threads once piled them up without bound while a part was written."""
    import time

    from irqsim.sweeps import compute

    made, written, most = 0, 0, 0

    def instant(job, stop=None):
        nonlocal made
        made += 1
        return compute._row(job, {"rx_delivered": job.run.seed}, None, {"wall_seconds": 0.0})

    def slow(out, rows, bar):
        nonlocal written, most
        most = max(most, made - written)
        time.sleep(0.05)
        real(out, rows, bar)
        written += len(rows)

    real = compute._record
    monkeypatch.setattr(compute, "PART_ROWS", 50)
    monkeypatch.setattr(compute, "execute", instant)
    monkeypatch.setattr(compute, "_record", slow)
    spec = {"scenario": "bench/rx-overload", "grid": {"cpu.clock_mhz": [float(v) for v in range(100, 1100)]}}
    done = irqsim.sweeps.run_sweep(spec, tmp_path / "out", cluster=Cluster(workers=2))
    assert done.computed == 1000 and made == written == 1000
    assert most <= 50 + (compute.HANDED_PER_THREAD + 1) * 2, most


def test_a_changed_input_file_gives_its_runs_new_ids(tmp_path):
    """A sweep of a scenario that reads a file (here a script's events) is
    resumed while the file is the same, and computed again once it changes:
    the run id holds the file's hash, not only the scenario text's."""
    (tmp_path / "s.toml").write_text('[run]\nduration_ms = 1\n[cpu]\nclock_mhz = 200.0\n[workload]\nkind = "script"\nevents_file = "ev.csv"\n')
    events = tmp_path / "ev.csv"
    events.write_text("1000,receive,1500\n")
    spec = {"scenario": str(tmp_path / "s.toml"), "seeds": 2}
    out = tmp_path / "out"
    first = irqsim.sweep(spec, out=out, workers=1)
    assert irqsim.sweeps.run_sweep(spec, out, cluster=Cluster(workers=1)).computed == 0
    events.write_text("1000,receive,1500\n2000,receive,1500\n")
    again = irqsim.sweeps.run_sweep(spec, out, cluster=Cluster(workers=1))
    assert again.computed == 2 and set(again.results["run_id"]).isdisjoint(first["run_id"])
    assert sorted(again.results["rx_offered"]) == [2, 2] and sorted(first["rx_offered"]) == [1, 1]


def test_run_ids_without_input_files_stay_as_they_were():
    """Scenarios that read no file keep the ids of earlier builds' format, so
    their sweep directories resume."""
    spec = Spec.load(SPEC)
    run = next(spec.runs("x", "b", lambda sets: ""))
    ident = json.dumps({"scenario_sha256": "x", "overrides": sorted(run.overrides), "build": "b"})
    assert run.id == __import__("hashlib").sha256(ident.encode()).hexdigest()[:20]
