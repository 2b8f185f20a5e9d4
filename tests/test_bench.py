"""`irqsim bench`'s scaling and instruction-set-simulator benches: what they
report and that they run what they say (never how fast: speed is measured,
not tested)."""

from __future__ import annotations

import json

from irqsim import bench


def test_scaling_runs_the_same_events_at_every_cpu_count():
    """Each load runs the same events at every CPU count: one vector per CPU,
    the rate fixed in all or scaled with the CPUs and the time shrunk."""
    rows = bench.scaling([1, 2, 4], repeat=1, sim_seconds=0.2)
    for load in ("fixed", "per-cpu"):
        mine = [r for r in rows if r["load"] == load]
        assert [r["threads"] for r in mine] == [1, 2, 4] == [r["sources"] for r in mine]
        assert len({r["events"] for r in mine}) == 1 and mine[0]["events"] > 0
    assert all(r["events_per_cpu_s"] > 0 and r["cpu_seconds"] > 0 for r in rows)


def test_iss_reports_instructions_per_cpu_second_for_both_memories():
    rows = bench.iss(repeat=1, program="arith")
    assert [r["memory"] for r in rows] == ["perfect", "caches"]
    assert rows[0]["instructions"] == rows[1]["instructions"] > 0
    assert rows[1]["cycles"] >= rows[0]["cycles"], "caches never make the program faster than perfect memory"
    assert all(r["instructions_per_cpu_s"] > 0 for r in rows)


def test_cli_scaling_json_and_bad_counts(cli):
    p = cli("bench", "--iss", "--repeat", "1", "--json")
    assert p.returncode == 0, p.stderr
    assert [r["program"] for r in json.loads(p.stdout)] == ["bench/kernels"] * 2
    for bad in ("0", "1,65", "x", ""):
        p = cli("bench", "--scaling", bad)
        assert p.returncode == 2 and "--scaling" in p.stderr and "Traceback" not in p.stderr, (bad, p.stderr)
