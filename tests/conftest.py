"""Shared fixtures: paths to bundled scenarios and a CLI runner."""

from __future__ import annotations

import subprocess
import sys
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
