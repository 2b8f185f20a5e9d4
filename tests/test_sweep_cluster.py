"""Sweeps on real dask clusters, in subprocesses: killed mid-way and
resumed, and against a scheduler and worker this test starts on loopback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from irqsim.sweeps import dataset

SEEDS = 3
#: Long enough (a quarter of a second a run, more under load) that a sweep is reliably caught mid-way.
LONG_MS = 100_000.0
GRID = {"workload.packet_bytes": [500, 1000, 1500], "cpu.clock_mhz": [200.0, 400.0]}


def spec(tmp: Path, duration_ms: float) -> Path:
    lines = [f'scenario = "bench/rx-overload"\nseeds = {SEEDS}\n[set]\n"run.duration_ms" = {duration_ms}\n[grid]']
    lines += [f'"{k}" = {v!r}' for k, v in GRID.items()]
    (tmp / "s.toml").write_text("\n".join(lines) + "\n")
    return tmp / "s.toml"


def irqsim(*args: str) -> list[str]:
    return [sys.executable, "-m", "irqsim.cli", *args]


def expected() -> list[tuple]:
    return sorted((b, c, s) for b in GRID["workload.packet_bytes"] for c in GRID["cpu.clock_mhz"] for s in range(1, SEEDS + 1))


def rows(out: Path) -> list[tuple]:
    df = pd.read_parquet(out / "results.parquet")
    assert (df["status"] == "ok").all(), df["error"].dropna().tolist()
    return sorted(zip(df["workload.packet_bytes"], df["cpu.clock_mhz"], df["seed"]))


def wait_for(cond, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_killed_sweep_resumes_without_losing_or_duplicating(tmp_path):
    """SIGKILL the sweep after its first part file (written about a second
    after the first run ends); the rerun finishes exactly grid × seeds, and
    the parts written before the kill are untouched."""
    s, out = spec(tmp_path, 2 * LONG_MS), tmp_path / "out"
    p = subprocess.Popen(irqsim("sweep", str(s), "-o", str(out), "--workers", "2"), start_new_session=True, stderr=subprocess.PIPE)
    parts = out / "runs"
    try:
        wait_for(lambda: len(list(parts.glob("*.parquet"))) >= 1 or p.poll() is not None, 120, "the first runs")
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    before = {q.name: q.stat().st_mtime_ns for q in parts.glob("*.parquet")}
    kept = len(dataset.finished(out))
    assert 1 <= kept < len(expected()), "the sweep finished before it could be killed: lengthen run.duration_ms"
    done = subprocess.run(irqsim("sweep", str(s), "-o", str(out), "--workers", "2"), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{len(expected()) - kept} computed now" in done.stderr
    assert rows(out) == expected()
    after = {q.name: q.stat().st_mtime_ns for q in parts.glob("*.parquet")}
    assert len(dataset.finished(out)) == len(expected()) and all(after[n] == t for n, t in before.items())
    assert not list(parts.glob(".*"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def dask_cluster(tmp_path):
    """`dask scheduler` on 127.0.0.1 and a function starting a `dask worker`
    for it (returns its Popen); every process is stopped afterwards."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    log = (tmp_path / "dask.log").open("w")
    procs: list[subprocess.Popen] = []

    def start(*args: str) -> subprocess.Popen:
        procs.append(subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=log, stderr=log, cwd=tmp_path, start_new_session=True))
        return procs[-1]

    def worker() -> subprocess.Popen:
        return start("worker", address, "--nworkers", "1", "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard")

    try:
        start("scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard")
        wait_for(lambda: listening(port), 60, "the scheduler")
        yield address, worker
    finally:
        for q in reversed(procs):
            if q.poll() is None:
                os.killpg(q.pid, signal.SIGTERM)
        for q in procs:
            try:
                q.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(q.pid, signal.SIGKILL)
                q.wait()
        log.close()


def test_sweep_on_a_running_scheduler(tmp_path, dask_cluster):
    """The worker's first run is its own task; its time (well under 0.2 s)
    puts the other 17 in batches of 5 (at least four batches a worker): 5 parts."""
    address, worker = dask_cluster
    worker()
    s, out = spec(tmp_path, 5.0), tmp_path / "out"
    p = subprocess.run(irqsim("sweep", str(s), "-o", str(out), "--scheduler", address), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert rows(out) == expected()
    assert len(list((out / "runs").glob("*.parquet"))) == 5


def test_worker_killed_mid_sweep_is_replaced(tmp_path, dask_cluster):
    """SIGKILL the only worker mid-way and start another: the sweep goes on and
    ends with each run exactly once."""
    address, worker = dask_cluster
    first = worker()
    s, out = spec(tmp_path, LONG_MS), tmp_path / "out"
    p = subprocess.Popen(irqsim("sweep", str(s), "-o", str(out), "--scheduler", address), stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: len(list((out / "runs").glob("*.parquet"))) >= 2 or p.poll() is not None, 120, "the first runs")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        assert len(dataset.finished(out)) < len(expected())
        worker()
        err = p.communicate(timeout=300)[1]
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    assert rows(out) == expected()


def test_ctrl_c_stops_a_sweep_with_one_line(tmp_path):
    """SIGINT to the whole process group (as a terminal sends it): the
    threads stop their runs; exit 130, one line, no traceback, no partial part file."""
    # Runs ten times as long as LONG_MS: the signal must come while runs
    # remain, after the first part file (about a second), on any machine.
    s, out = spec(tmp_path, 10 * LONG_MS), tmp_path / "out"
    p = subprocess.Popen(irqsim("sweep", str(s), "-o", str(out), "--workers", "2"), start_new_session=True, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: len(list((out / "runs").glob("*.parquet"))) >= 1 or p.poll() is not None, 120, "the first run")
        os.killpg(p.pid, signal.SIGINT)
        err = p.communicate(timeout=60)[1]
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 130, err
    assert err.splitlines()[-1] == "error: interrupted" and "Traceback" not in err, err
    assert dataset.finished(out) and not list((out / "runs").glob(".*"))
