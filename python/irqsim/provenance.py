"""What produced a result: which build of irqsim, run how, where and for how long.

Every ``metrics.json`` and every row of a sweep carries these fields:

- ``irqsim_version``, ``irqsim_commit``, ``irqsim_dirty``: the package version
  and the git commit the compiled core was built from, with whether tracked
  files then differed from it (``crates/py/build.rs``; ``unknown`` and None
  when it was built from a source archive without git);
- ``irqsim_build``: one string naming that build (:func:`build_id`), with a
  digest of the source files when the commit does not name them;
- ``command``: the command line, ``host`` and ``cpu_model``: where it ran;
- ``started_utc``, ``wall_seconds`` and ``cpu_seconds``: when and how long
  (CPU seconds of the thread that simulated).
"""

from __future__ import annotations

import functools
import platform
import shlex
import socket
import sys
import time
from typing import Any

from irqsim import __version__, _core


@functools.cache
def build() -> dict[str, Any]:
    """The version, commit and build id of this build of irqsim."""
    return {"irqsim_version": __version__, "irqsim_commit": _core.BUILD["commit"], "irqsim_dirty": _core.BUILD["dirty"], "irqsim_build": build_id()}


@functools.cache
def build_id() -> str:
    """One string naming this build, part of every sweep run's id:
    ``<commit>`` for a clean checkout, ``<commit>+dirty.<digest>`` for a
    dirty one, ``<version>+src.<digest>`` for a build without git, where
    the digest is of the source files (``crates/py/build.rs``), so that two
    builds of different sources never share an id."""
    commit, digest = _core.BUILD["commit"], _core.BUILD.get("digest", "")
    if commit == "unknown":
        return f"{__version__}+src.{digest}" if digest else f"{__version__}+unknown"
    if _core.BUILD["dirty"]:
        return f"{commit}+dirty" + (f".{digest}" if digest else "")
    return commit


@functools.cache
def cpu_model() -> str:
    """The processor's model name (Linux's /proc/cpuinfo, else the platform's guess)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def where() -> dict[str, str]:
    """How and where this process runs: command line, host name, CPU model."""
    return {"command": shlex.join(sys.argv), "host": socket.gethostname(), "cpu_model": cpu_model()}


_utc = (0, "")


def utc_now() -> str:
    """The time now in UTC, ISO 8601, whole seconds; formatted once a second
    (a tiny run takes tens of µs, and formatting took 1.5 of them)."""
    global _utc
    second = int(time.time())
    if _utc[0] != second:
        _utc = (second, time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(second)))
    return _utc[1]


class timed:  # noqa: N801 (used as a function: ``with timed() as t``)
    """``with timed() as t``: ``t`` is a dict that, on exit, holds
    ``started_utc`` (ISO 8601, whole seconds), ``wall_seconds`` and
    ``cpu_seconds`` of the block (CPU of this thread: the core simulates in
    the calling thread). A class, not a generator: it wraps every run."""

    __slots__ = ("t", "wall", "cpu")

    def __enter__(self) -> dict[str, Any]:
        self.t: dict[str, Any] = {"started_utc": utc_now()}
        self.wall, self.cpu = time.perf_counter(), time.thread_time()
        return self.t

    def __exit__(self, *exc: object) -> None:
        self.t["wall_seconds"] = time.perf_counter() - self.wall
        self.t["cpu_seconds"] = time.thread_time() - self.cpu
