"""`irqsim bench`'s scaling, instruction-set-simulator, NIC-firmware and overhead benches: what they
report and that they run what they say (never how fast: speed is measured,
not tested)."""

from __future__ import annotations

import json
import shutil

import pytest

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


def test_iss_reports_instructions_per_cpu_second_for_both_memories_and_threads():
    rows = bench.iss(repeat=1, program="arith", long_program=None)
    assert [(r["memory"], r["threads"]) for r in rows] == [("perfect", "1"), ("caches", "1"), ("perfect", "1 + idle"), ("perfect", "2")]
    one, caches, idle, two = rows
    assert one["instructions"] == caches["instructions"] == idle["instructions"] > 0
    assert two["instructions"] == 2 * one["instructions"]
    assert caches["cycles"] >= one["cycles"], "caches never make the program faster than perfect memory"
    assert idle["cycles"] == one["cycles"], "an idle thread takes no issue slot"
    assert all(r["instructions_per_cpu_s"] > 0 for r in rows)


def test_iss_runs_the_long_loops_beside_qemu_when_installed():
    rows = bench.iss(repeat=1, program="arith", long_program="arith")[4:]
    assert [r["simulator"] for r in rows] == ["irqsim"] + (["qemu-mips"] if shutil.which("qemu-mips") else [])
    assert rows[-1]["instructions"] == rows[0]["instructions"] and rows[-1]["cpu_seconds"] > 0


def test_cli_scaling_json_and_bad_counts(cli):
    p = cli("bench", "--iss", "--repeat", "1", "--json")
    assert p.returncode == 0, p.stderr
    programs = [r["program"] for r in json.loads(p.stdout)]
    assert programs[:4] == ["bench/kernels"] * 4 and set(programs[4:]) == {"bench/long"}
    for bad in ("0", "1,65", "x", ""):
        p = cli("bench", "--scaling", bad)
        assert p.returncode == 2 and "--scaling" in p.stderr and "Traceback" not in p.stderr, (bad, p.stderr)


def test_overhead_splits_a_tiny_run_into_the_core_and_python():
    """Both tiny runs are a few events; the bench reports the core's and
    Python's CPU time per run (never asserted: figures, not limits)."""
    rows = bench.overhead(repeat=1, runs=20)
    assert [(r["run"], r["scenario"]) for r in rows] == [("abstract", "bench/rx-overload"), ("code", "code/rx-min")]
    for r in rows:
        assert 0 < r["events"] < 100 and r["runs"] == 20
        assert r["us_per_run_cpu"] > 0 and r["core_us_per_run_cpu"] > 0
        assert r["python_us_per_run_cpu"] == pytest.approx(r["us_per_run_cpu"] - r["core_us_per_run_cpu"])


def test_cli_overhead_json_and_one_bench_at_a_time(cli):
    p = cli("bench", "--overhead", "--repeat", "1", "--json")
    assert p.returncode == 0, p.stderr
    assert [r["run"] for r in json.loads(p.stdout)] == ["abstract", "code"]
    p = cli("bench", "--overhead", "--iss")
    assert p.returncode == 2 and p.stderr == "error: choose one of --scaling, --iss, --overhead and --nic-firmware\n", p.stderr


def test_nic_firmware_reports_core_cycles_per_cpu_second_beside_the_fast_path():
    rows = bench.nic_firmware(repeat=1, frames=200, cores=(1, 2), fast_program="arith")
    assert [r["cores"] for r in rows] == [1, 1, 2]
    assert rows[0]["of_fast_path"] == 1 and rows[0]["run"].startswith("ISS fast path (arith")
    for r in rows[1:]:
        assert r["core_cycles"] > 0 and r["core_cycles_per_cpu_s"] > 0
        assert r["of_fast_path"] == r["core_cycles_per_cpu_s"] / rows[0]["core_cycles_per_cpu_s"]
    # Two cores simulate twice the core-cycles of each cycle.
    assert rows[2]["core_cycles"] % 2 == 0
