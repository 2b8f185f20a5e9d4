"""The Python API: ``run(scenario, overrides) -> Result``.

A scenario is a path to a TOML file, TOML text, or the name of a bundled
scenario (``"mt-interrupts/driver-rx-single"``). A string names a file when
that file exists (so ``runs/packet_bytes=64/s.toml`` is a path), TOML text
when it holds a newline or an ``=``, and a bundled scenario otherwise.
Overrides are a mapping of dotted keys to values
(``{"cpu.context_policy": "multithreaded"}``) or a list of ``"key=value"``
strings, exactly like ``irqsim run --set``.

An argument of the wrong type raises :class:`ArgumentError` (a
``TypeError`` and an :class:`irqsim.IrqsimError`) naming the argument.
pandas and numpy are imported on first use, so ``import irqsim`` is quick.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irqsim import _core

if TYPE_CHECKING:
    import pandas as pd

SCENARIOS = Path(__file__).parent / "scenarios"
_SCENARIOS = str(SCENARIOS)

Overrides = Mapping[str, Any] | Iterable[str] | None
#: Called as ``progress(now_cycle, end_cycle)`` during a run; raising stops it.
Progress = Callable[[int, int], object]


class ArgumentError(_core.IrqsimError, TypeError):
    """An API argument has the wrong type; the message names the argument."""


class OutputError(_core.IrqsimError, OSError):
    """Results could not be written (a read-only directory, a full disk, a
    file where a directory should be); the message names the path."""


def scenario_path(name: str) -> Path:
    """Path of a bundled scenario, e.g. ``"mt-interrupts/driver-rx-single"``."""
    p = SCENARIOS / (name if name.endswith(".toml") else name + ".toml")
    if not p.is_file():
        raise _core.InputError(f"no bundled scenario `{name}`; bundled: {', '.join(bundled())}")
    return p


def bundled() -> list[str]:
    """Names of the bundled scenarios."""
    return sorted(str(q.relative_to(SCENARIOS).with_suffix("")) for q in SCENARIOS.rglob("*.toml"))


def toml_value(v: Any, key: str = "", label: str = "overrides") -> str:
    """``v`` written as a TOML value (for ``key=value`` overrides)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x, key, label) for x in v) + "]"
    raise ArgumentError(f"{label}: `{key}`: cannot express a {type(v).__name__} value in TOML")


def sets(overrides: Overrides, label: str = "overrides") -> list[str]:
    """Overrides as ``key=value`` strings."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        for k in overrides:
            if not isinstance(k, str):
                raise ArgumentError(f"{label}: keys must be dotted key strings such as 'run.seed', not {type(k).__name__} {k!r}")
        return [f"{k}={toml_value(v, k, label)}" for k, v in overrides.items()]
    if isinstance(overrides, (str, bytes)) or not isinstance(overrides, Iterable):
        raise ArgumentError(f"{label} must be a mapping {{'key': value}} or a list of 'key=value' strings, not {type(overrides).__name__}")
    items = list(overrides)
    for s in items:
        if not isinstance(s, str):
            raise ArgumentError(f"{label}: each item must be a 'key=value' string, not {type(s).__name__} {s!r}")
    return items


def source(scenario: str | os.PathLike, *, read: bool = False) -> dict:
    """How the core should load ``scenario``: ``{"path": ...}`` or
    ``{"text": ...}``; with ``read``, a file as the core would read it
    (``text``, ``name`` and ``base``: see :func:`_file`).

    On strings with ``os.path``, not ``pathlib``: this runs once per
    :func:`run`, and pathlib's parsing was a third of its Python time."""
    if isinstance(scenario, os.PathLike):
        return (read and _file(scenario, read)) or {"path": scenario}
    if not isinstance(scenario, str):
        raise ArgumentError(f"scenario must be a path, TOML text or a bundled scenario name, not {type(scenario).__name__}")
    # os.access first: it answers a missing file without raising (stat raises and catches).
    if "\n" not in scenario and "\0" not in scenario and os.access(scenario, os.F_OK) and (found := _file(scenario, read)):
        return found
    if "\n" in scenario or ("=" in scenario and not scenario.endswith(".toml")):
        return {"text": scenario}
    if scenario.endswith(".toml"):
        return {"path": scenario}
    return _file(os.path.join(_SCENARIOS, scenario + ".toml"), read) or {"path": scenario_path(scenario)}


#: Files larger than this are read by the core each time (a long script stays out of memory).
_CACHED_BYTES = 64 << 10


def _file(path: str | os.PathLike, read: bool) -> dict | None:
    """``{"path": path}`` if ``path`` is a regular file, else None. With
    ``read``, its text instead, with the name and directory the core would
    give it, read once for each version of the file: the core read it on
    every run, 18 µs of a tiny run's 125 on this machine (docs/performance/sweeps-and-overhead.md).
    A file that cannot be read here stays a path, so that the core's own
    error names it."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    name = os.fspath(path)
    if read and st.st_size <= _CACHED_BYTES and isinstance(name, str) and _utf8(name):
        text = _text(name, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if text is not None:
            return {"text": text, "name": name, "base": os.path.dirname(name)}
    return {"path": path}


def _utf8(name: str) -> bool:
    """Whether the core can take ``name`` as a string (a path of undecodable bytes cannot)."""
    try:
        name.encode()
    except UnicodeEncodeError:
        return False
    return True


@lru_cache(maxsize=16)
def _text(path: str, *version: int) -> str | None:
    """The text of ``path`` at ``version`` (device, inode, size, modification
    and change times: a file written since is read again); None if unreadable."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ArgumentError(f"{name} must be True or False, not {type(value).__name__} {value!r}")
    return value


@dataclass
class Result:
    """One run's results. ``metrics`` maps names to numbers: counts are ints,
    quantities floats (NaN where undefined); see docs/sweeps.md."""

    metrics: dict[str, int | float]
    clock_mhz: float
    elapsed_cycles: int
    contexts: list[str]
    _report: Any = field(repr=False)
    #: ``started_utc``, ``wall_seconds`` and ``cpu_seconds`` of the run (:func:`irqsim.provenance.timed`).
    timing: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def bins(self) -> pd.DataFrame:
        """Cycles per bin (user, kernel, interrupt, bottom_half, overhead, idle), one row per hardware thread."""
        import pandas as pd

        return pd.DataFrame(self.to_dict()["bins"]).set_index("thread")

    @cached_property
    def context_bins(self) -> pd.DataFrame:
        """Cycles per bin of each hardware context (C1 app, C2 isr, C3 protocol, or C0), indexed by thread and context."""
        import pandas as pd

        return pd.DataFrame(self.to_dict()["context_bins"]).set_index(["thread", "context"])

    @cached_property
    def code_bins(self) -> pd.DataFrame:
        """Instructions and L1I, L1D and L2 misses of the kernel's code per bin (user, kernel, interrupt,
        bottom_half), indexed by thread and bin; empty unless the scenario runs code (``[code]``)."""
        import pandas as pd

        rows = self.to_dict().get("code_bins", [])
        if not rows:
            return pd.DataFrame(columns=["instructions", "l1i_misses", "l1d_misses", "l2_misses"], index=pd.MultiIndex.from_tuples([], names=["thread", "bin"]))
        return pd.DataFrame(rows).set_index(["thread", "bin"])

    @cached_property
    def latencies(self) -> pd.DataFrame:
        """Per-packet receive latency: ``arrival_us`` and ``latency_us`` (first ``stats.max_packet_records`` packets)."""
        import numpy as np
        import pandas as pd

        raw = np.frombuffer(self._report.records(), dtype="<u8").reshape(-1, 2)
        return pd.DataFrame({"arrival_us": raw[:, 0] / self.clock_mhz, "latency_us": raw[:, 1] / self.clock_mhz})

    def chrome_trace(self) -> dict:
        """The timeline as a Chrome/Perfetto trace (run with ``timeline=True``)."""
        return json.loads(self._report.chrome_trace())

    def check_invariants(self) -> None:
        """Raises AssertionError if packets are not conserved or bins do not sum to elapsed cycles."""
        err = self._report.check_invariants()
        if err:
            raise AssertionError(err)

    def to_json(self) -> str:
        """The ``irqsim run --json`` document as JSON text."""
        return self._report.to_json()

    def to_dict(self) -> dict:
        """The ``irqsim run --json`` document as a dict."""
        return json.loads(self._report.to_json())


def run(
    scenario: str | os.PathLike,
    overrides: Overrides = None,
    *,
    timeline: bool = False,
    progress: Progress | None = None,
    _label: str = "overrides",
) -> Result:
    """Runs a scenario and returns its :class:`Result`.

    ``progress(now_cycle, end_cycle)``, if given, is called every 65,536
    events. Ctrl-C stops the run with ``KeyboardInterrupt``.

    Raises :class:`irqsim.ConfigError` for a bad scenario or override,
    :class:`irqsim.TraceError` for a malformed trace, :class:`irqsim.InputError`
    for a file that cannot be read, :class:`ArgumentError` for an argument of
    the wrong type.
    """
    if progress is not None and not callable(progress):
        raise ArgumentError(f"progress must be callable as progress(now_cycle, end_cycle), not {type(progress).__name__}")
    from irqsim.provenance import timed

    with timed() as timing:
        rep = _core.run(
            **source(scenario, read=True), sets=sets(overrides, _label), timeline=_flag(timeline, "timeline"), progress=progress, origin=_label
        )
    return Result(
        metrics=rep.metrics(),
        clock_mhz=rep.clock_mhz,
        elapsed_cycles=rep.elapsed_cycles,
        contexts=list(rep.contexts),
        _report=rep,
        timing=timing,
    )


def validate(scenario: str | os.PathLike, overrides: Overrides = None, *, _label: str = "overrides") -> dict:
    """Loads and checks a scenario without running it; returns it with every
    default filled in, only the parts its run uses."""
    return json.loads(_core.validate(**source(scenario), sets=sets(overrides, _label), origin=_label))


def inputs(scenario: str | os.PathLike, overrides: Overrides = None, *, base: str | os.PathLike | None = None, _label: str = "overrides") -> list[dict]:
    """The files a run of ``scenario`` reads besides the scenario (kernel
    code, NIC firmware, a trace's capture and log, a script's events file),
    each as ``{"key", "path", "sha256"}``; ``base`` is the directory relative
    paths resolve from (the scenario's own by default)."""
    found = _core.inputs(**source(scenario), sets=sets(overrides, _label), base=base, origin=_label)
    return [{"key": key, "path": os.path.abspath(path), "sha256": file_sha256(path)} for key, path in found]


#: ``(path, size, mtime_ns)`` → sha256, so a sweep hashes each input once.
_HASHES: dict[tuple, str] = {}


def file_sha256(path: str | os.PathLike) -> str:
    """The hex sha256 of a file's bytes ("" if it cannot be read: the run
    itself reports why)."""
    import hashlib

    try:
        st = os.stat(path)
    except OSError:
        return ""
    key = (os.fspath(path), st.st_size, st.st_mtime_ns)
    if key not in _HASHES:
        h = hashlib.sha256()
        try:
            with open(path, "rb") as f:
                while chunk := f.read(1 << 20):
                    h.update(chunk)
        except OSError:
            return ""
        _HASHES[key] = h.hexdigest()
    return _HASHES[key]


def parts() -> list[dict]:
    """Every part a scenario can have, with its keys (name, type, unit, default, range, help)."""
    return json.loads(_core.parts())
