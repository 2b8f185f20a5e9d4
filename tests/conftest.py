"""Shared fixtures: paths to bundled scenarios and a CLI runner; a Ctrl-C
sent to a subprocess once it is under way."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import irqsim

SCENARIOS = Path(irqsim.__file__).parent / "scenarios"


@pytest.fixture
def cli():
    """Runs `irqsim ARGS...` in a subprocess; returns the CompletedProcess."""

    def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "irqsim.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=600)

    return run


@pytest.fixture(scope="session")
def zip_sweep(tmp_path_factory) -> Path:
    """A finished sweep with a grid key and two zip keys (one line per zip
    row, or per grid value against a zip key), 2 seeds of 2 ms runs."""
    out = tmp_path_factory.mktemp("zip-sweep")
    spec = {
        "scenario": "mt-interrupts/driver-rx-single",
        "seeds": 2,
        "set": {"run.duration_ms": 2.0},
        "grid": {"cpu.context_policy": ["single", "multithreaded"]},
        "zip": {"workload.packet_bytes": [200, 800, 1500], "nic.rx_buffer_bytes": [4096, 8192, 16384]},
    }
    irqsim.sweep(spec, out=out, workers=1)
    return out


def interrupt(p: subprocess.Popen, first_line: bytes, delay: float = 0.0) -> str:
    """Sends SIGINT to ``p`` once it has printed ``first_line`` (and ``delay``
    seconds more), waits for it to end (killing it after a minute); returns its stderr."""
    try:
        assert p.stdout.readline() == first_line
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    return p.stderr.read().decode()
