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
