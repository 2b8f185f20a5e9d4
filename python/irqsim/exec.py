"""``irqsim exec``: run a MIPS program on the simulated execution-driven core.

A program is a freestanding static o32 big-endian ELF (entry ``__start``),
given as a path or as the name of a bundled one (``irqsim exec arith``, see
``irqsim/programs/``). ``write`` to fd 1/2 goes to stdout/stderr as the
program writes it, and the command exits with the program's exit code;
``--json`` prints the report instead (schema in docs/models/cores.md), with
the first 1 MiB of each stream and the count of bytes past it
(``stdout_dropped_bytes``, ``stderr_dropped_bytes``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from irqsim import IrqsimError
from irqsim._core import exec_program

PROGRAMS = Path(__file__).parent / "programs"


def program_path(program: str | Path) -> Path:
    """A path as given, or a bundled program by name (``arith``, ``arith.elf``, ``bench/kernels``)."""
    p = Path(program)
    if p.exists():
        return p
    bundled = PROGRAMS / (p if p.suffix == ".elf" else p.with_name(f"{p.name}.elf"))
    if not p.is_absolute() and bundled.exists():
        return bundled
    known = ", ".join(sorted(str(q.relative_to(PROGRAMS).with_suffix("")) for q in PROGRAMS.rglob("*.elf")))
    raise IrqsimError(f"{program}: no such file (bundled programs: {known})")


def run(program: str | Path, sets: list[str] | None = None) -> dict:
    """Runs a program; returns the report with ``stdout`` and ``stderr`` as
    text (their first 1 MiB; ``stdout_dropped_bytes`` counts the rest)."""
    text, out, err = exec_program(program_path(program), list(sets or []))
    report = json.loads(text)
    report["stdout"] = out.decode("utf-8", "replace")
    report["stderr"] = err.decode("utf-8", "replace")
    return report


def command(program: str, sets: list[str], as_json: bool) -> int:
    """The CLI command; returns the process exit status."""
    path = program_path(program)
    if not as_json:
        sys.stdout.flush()
        sys.stderr.flush()
        report = json.loads(exec_program(path, sets, stream=True)[0])
        return report["exit_code"] & 0xFF
    text, out, err = exec_program(path, sets)
    report = json.loads(text)
    report["stdout"] = out.decode("utf-8", "replace")
    report["stderr"] = err.decode("utf-8", "replace")
    order = ["exit_code", "stdout", "stderr", "stdout_dropped_bytes", "stderr_dropped_bytes", "instructions", "cycles", "wall_seconds"]
    print(json.dumps({k: report[k] for k in order} | report, indent=1))
    for stream in ("stdout", "stderr"):
        if report[f"{stream}_dropped_bytes"]:
            print(f"note: the report keeps the first {len(out if stream == 'stdout' else err):,} bytes of the program's {stream}; {report[f'{stream}_dropped_bytes']:,} more were dropped", file=sys.stderr)
    return 0
