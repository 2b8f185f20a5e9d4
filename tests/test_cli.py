"""The `irqsim` command end to end, and its errors: one line, exit 2, no traceback."""

from __future__ import annotations

import json
import math

import pytest


def test_run_json(cli):
    p = cli("run", "mt-interrupts/driver-tx-single", "--set", "run.duration_ms=20", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["metrics"]["tx_sent"] > 0
    assert doc["bins"][0]["thread"] == 0


def test_run_table(cli):
    p = cli("run", "mt-interrupts/driver-rx-multithreaded", "--set", "run.duration_ms=5")
    assert p.returncode == 0, p.stderr
    assert "rx_throughput_mbps" in p.stdout and "overhead" in p.stdout


def test_version_and_scenario_list(cli):
    import irqsim

    assert cli("--version").stdout.strip() == f"irqsim {irqsim.__version__}"
    p = cli("scenarios")
    assert p.returncode == 0 and "mt-interrupts/driver-rx-single" in p.stdout


def test_validate(cli):
    p = cli("validate", "mt-interrupts/full-stack-single")
    assert p.returncode == 0
    assert json.loads(p.stdout)["workload"]["kind"] == "synthetic"


def test_reproduce_json_schema(cli):
    p = cli("reproduce", "mt-interrupts", "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert rows and all(set(r) == {"study", "experiment", "metric", "unit", "paper", "simulated", "rel_error"} for r in rows)


def test_timeline_writes_chrome_trace(cli, tmp_path):
    out = tmp_path / "trace.json"
    p = cli("timeline", "mt-interrupts/full-stack-single", "-o", str(out), "--set", "run.duration_ms=10")
    assert p.returncode == 0, p.stderr
    trace = json.loads(out.read_text())
    assert any(e["ph"] == "X" for e in trace["traceEvents"])


def test_bench_json(cli):
    p = cli("bench", "--json", "--repeat", "1", "--set", "run.duration_ms=1000")
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["delivered_packets"] > 0 and res["dropped_packets"] >= 0
    assert res["delivered_packets_per_wall_s"] > 0


@pytest.mark.parametrize(
    "args, needle",
    [
        (["run", "mt-interrupts/driver-rx-single", "--set", "cpu.clock_mhz=0"], "`cpu.clock_mhz`"),
        (["run", "mt-interrupts/driver-rx-single", "--set", "cpu.clock_mhz=-200"], "`cpu.clock_mhz`"),
        (["run", "mt-interrupts/driver-rx-single", "--set", "cpu.bogus=1"], "`cpu.bogus`"),
        (["run", "no/such/scenario"], "no bundled scenario"),
        (["reproduce", "no-such-study"], "unknown study"),
    ],
)
def test_bad_input_is_one_clear_line(cli, args, needle):
    p = cli(*args)
    assert p.returncode == 2
    assert needle in p.stderr
    assert "Traceback" not in p.stderr and "PanicException" not in p.stderr


def test_bench_reports_wall_and_cpu_rates(cli):
    """`irqsim bench --json` reports CPU seconds and per-CPU-second rates beside
    the wall-clock ones, for the default scenario or any other."""
    p = cli("bench", "--json", "--repeat", "1", "--set", "run.duration_ms=50")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    for k in ("cpu_seconds", "delivered_packets_per_cpu_s", "events_per_cpu_s", "sim_seconds_per_cpu_s", "wall_seconds"):
        assert d[k] > 0, k
    assert d["delivered_packets"] == int(d["delivered_packets"]) > 0
    p = cli("bench", "--json", "--repeat", "1", "--scenario", "optimistic-spl/luna88k-idealized", "--set", "run.duration_ms=50")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["sim_seconds"] == pytest.approx(0.05)


def test_reproduce_prints_a_line_per_study_and_progress_on_stderr(cli):
    """The default is a summary: one row per study with its row count and
    median |error|; progress goes to stderr, a line as each study finishes off a terminal."""
    p = cli("reproduce", "msi-latency", "optimistic-spl")
    assert p.returncode == 0, p.stderr
    lines = [line for line in p.stdout.splitlines() if line.startswith((" msi-latency", " optimistic-spl"))]
    assert len(lines) == 2 and "│    6 │" in lines[0] and "%" in lines[0]
    assert "reproduced msi-latency (1 of 2" in p.stderr and "reproduced optimistic-spl (2 of 2" in p.stderr
    assert "reproduced" not in p.stdout


def test_reproduce_full_and_markdown(cli):
    full = cli("reproduce", "msi-latency", "--full")
    assert full.returncode == 0 and "msi-latency: paper vs simulated" in full.stdout and full.stdout.count("ISR latency normalized to MSI") == 4
    md = cli("reproduce", "msi-latency", "--markdown")
    assert md.stdout.startswith("| study | rows | median \\|error\\| |") and "\n| msi-latency | 6 | " in md.stdout
    mdfull = cli("reproduce", "msi-latency", "--full", "--markdown")
    assert mdfull.stdout.startswith("### msi-latency: paper vs simulated\n\n| experiment | metric |") and mdfull.stdout.count("\n| workstation") == 4


def test_reproduce_summary_counts_and_names_disagreeing_rows():
    """A study's summary: median and largest |error| of the numeric rows, and
    the direction rows that agree, those that disagree listed by name."""
    from irqsim.studies import Row
    from irqsim.studies.views import disagreeing, summary

    rows = [
        Row("s", "a", "m", "x", 10.0, 11.0),
        Row("s", "b", "m", "x", 10.0, 7.0),
        Row("s", "c", "m", "x", 10.0, 10.5),
        Row("s", "up", "bandwidth", "%", math.nan, 5.0, "higher"),
        Row("s", "down", "bandwidth", "%", math.nan, 5.0, "lower"),
    ]
    assert summary("s", rows) == {"study": "s", "rows": "5", "median |error|": "10.0%", "largest |error|": "30.0%", "agree": "1", "disagree": "1"}
    assert disagreeing("s", rows) == ["s: down: bandwidth is +5.0%, the paper says lower"]
