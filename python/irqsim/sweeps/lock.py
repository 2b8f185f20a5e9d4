"""One sweep at a time per output directory.

A sweep holds an exclusive ``flock`` on ``DIR/.lock`` while it writes; a
second sweep into the same directory is refused at once, naming the
directory and the holder's process id. The kernel releases the lock when the
holder exits, however it ends, so a killed sweep never leaves a stale lock.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from irqsim import IrqsimError
from irqsim.api import OutputError

LOCK = ".lock"


@contextmanager
def locked(out: Path) -> Iterator[None]:
    """Holds ``out``'s lock for the body; refuses if another process holds it."""
    path = out / LOCK
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise OutputError(f"{path}: cannot create the sweep's lock: {e.strerror or e}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "another process"
            raise IrqsimError(f"{out}: another sweep is writing here (pid {holder}); wait for it to end or use another directory") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)
