"""Writing results where they cannot go: one clean line and exit 1 (an I/O
failure) or 2 (bad input), no traceback, and no temporary file left behind.
Also: a closed stdout is an error, and two sweeps into one directory refuse
each other."""

from __future__ import annotations

import errno
import os
import subprocess
import sys

import pytest

import irqsim
from irqsim import output
from irqsim.cli import main
from irqsim.sweeps import lock

OK = "mt-interrupts/driver-rx-single"
SHORT = ["--set", "run.duration_ms=1"]
SPEC = 'scenario = "mt-interrupts/driver-rx-single"\n[set]\n"run.duration_ms" = 1.0\n'


def cli_error(capsys, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as e:
        main(list(args))
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return e.value.code, err


def leftovers(d):
    return sorted(p.name for p in d.rglob("*.tmp"))


def test_run_output_onto_a_file(tmp_path, capsys):
    (tmp_path / "f").write_text("")
    assert cli_error(capsys, "run", OK, *SHORT, "-o", str(tmp_path / "f")) == (1, f"error: {tmp_path / 'f'}: exists and is not a directory\n")
    code, err = cli_error(capsys, "run", OK, *SHORT, "-o", str(tmp_path / "f" / "sub"))
    assert code == 1 and "cannot create the directory" in err


def test_sweep_output_onto_a_file(tmp_path, capsys):
    (tmp_path / "s.toml").write_text(SPEC)
    (tmp_path / "f").write_text("")
    code, err = cli_error(capsys, "sweep", str(tmp_path / "s.toml"), "-o", str(tmp_path / "f"), "--workers", "1")
    assert code == 1 and str(tmp_path / "f") in err


@pytest.mark.parametrize(("where", "err"), [("fsync", errno.ENOSPC), ("open", errno.EACCES), ("replace", errno.EROFS)])
def test_a_failing_write_leaves_no_temporary_file(tmp_path, capsys, monkeypatch, where, err):
    """A full disk, a read-only directory, a read-only file system: one line naming the file, exit 1, no .tmp."""
    real = {"fsync": os.fsync, "open": open, "replace": os.replace}[where]

    def failing(*a, **kw):
        if where == "open" and not str(a[0]).endswith(".tmp"):
            return real(*a, **kw)
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(output, "open", failing, raising=False) if where == "open" else monkeypatch.setattr(output.os, where, failing)
    code, msg = cli_error(capsys, "run", OK, *SHORT, "-o", str(tmp_path / "out"))
    assert code == 1 and msg == f"error: {tmp_path / 'out' / 'config.toml'}: cannot write: {os.strerror(err)}\n"
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_read_only_directory(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    code, err = cli_error(capsys, "run", OK, *SHORT, "-o", str(ro / "out"))
    assert code == 1 and "Permission denied" in err


def test_a_closed_stdout_is_an_error():
    """`irqsim run X --json >&-` exited 0 and the result was lost."""
    p = subprocess.run([sys.executable, "-m", "irqsim.cli", "run", OK, *SHORT, "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=lambda: os.close(1))
    assert p.returncode == 1 and p.stderr == "error: stdout is closed: the result could not be printed\n"


def test_a_second_sweep_into_the_same_directory_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    # A sweep in another process holds the lock.
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import sys, time; from pathlib import Path; from irqsim.sweeps.lock import locked\nwith locked(Path({str(out)!r})):\n    print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(irqsim.IrqsimError, match=rf"^{out}: another sweep is writing here \(pid {holder.pid}\); wait for it"):
            irqsim.sweep({"scenario": OK, "set": {"run.duration_ms": 1.0}}, out, workers=1)
    finally:
        holder.kill()
        holder.wait()
    # Once its holder is gone the directory is free again (no stale lock).
    with lock.locked(out):
        pass
