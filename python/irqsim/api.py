"""The Python API: ``run(scenario, overrides) -> Result``.

A scenario is a path to a TOML file, TOML text, or the name of a bundled
scenario (``"mt-interrupts/driver-rx-single"``). Overrides are a mapping of
dotted keys to values (``{"cpu.context_policy": "multithreaded"}``) or a list
of ``"key=value"`` strings, exactly like ``irqsim run --set``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from irqsim import _core

SCENARIOS = Path(__file__).parent / "scenarios"

Overrides = Mapping[str, Any] | Iterable[str] | None


def scenario_path(name: str) -> Path:
    """Path of a bundled scenario, e.g. ``"mt-interrupts/driver-rx-single"``."""
    p = SCENARIOS / (name if name.endswith(".toml") else name + ".toml")
    if not p.is_file():
        known = sorted(str(q.relative_to(SCENARIOS).with_suffix("")) for q in SCENARIOS.rglob("*.toml"))
        raise _core.InputError(f"no bundled scenario `{name}`; bundled: {', '.join(known)}")
    return p


def _toml_value(v: Any, origin: str) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x, origin) for x in v) + "]"
    raise _core.ConfigError(f"{origin}: cannot express {type(v).__name__} value {v!r} in TOML")


def _sets(overrides: Overrides, origin: str) -> list[str]:
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [f"{k}={_toml_value(v, origin)}" for k, v in overrides.items()]
    return [str(s) for s in overrides]


def _source(scenario: str | Path) -> dict:
    if isinstance(scenario, Path):
        return {"path": scenario}
    if "\n" in scenario or "=" in scenario:
        return {"text": scenario}
    p = Path(scenario)
    if p.suffix == ".toml" or p.exists():
        return {"path": p}
    return {"path": scenario_path(scenario)}


@dataclass
class Result:
    """One run's results. ``metrics`` is a dict of floats (NaN where undefined)."""

    metrics: dict[str, float]
    clock_mhz: float
    elapsed_cycles: int
    contexts: list[str]
    _report: Any = field(repr=False)

    @cached_property
    def bins(self) -> pd.DataFrame:
        """Cycles per bin (user, kernel, interrupt, bottom_half, overhead, idle), one row per hardware thread."""
        rows = json.loads(self._report.to_json())["bins"]
        return pd.DataFrame(rows).set_index("thread")

    @cached_property
    def context_bins(self) -> pd.DataFrame:
        """Cycles per bin of each hardware context (C1 app, C2 isr, C3 protocol, or C0), indexed by thread and context."""
        rows = json.loads(self._report.to_json())["context_bins"]
        return pd.DataFrame(rows).set_index(["thread", "context"])

    @cached_property
    def latencies(self) -> pd.DataFrame:
        """Per-packet receive latency: ``arrival_us`` and ``latency_us`` (first ``stats.max_packet_records`` packets)."""
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

    def to_json(self) -> dict:
        """The ``irqsim run --json`` document."""
        return json.loads(self._report.to_json())


def run(scenario: str | Path, overrides: Overrides = None, *, timeline: bool = False, origin: str = "overrides") -> Result:
    """Runs a scenario and returns its :class:`Result`.

    Raises :class:`irqsim.ConfigError` for a bad scenario or override (an
    error in an override names ``origin`` as its source),
    :class:`irqsim.TraceError` for a malformed trace, :class:`irqsim.InputError`
    for a file that cannot be read.
    """
    rep = _core.run(**_source(scenario), sets=_sets(overrides, origin), timeline=timeline, origin=origin)
    return Result(
        metrics=dict(rep.metrics()),
        clock_mhz=rep.clock_mhz,
        elapsed_cycles=rep.elapsed_cycles,
        contexts=list(rep.contexts),
        _report=rep,
    )


def validate(scenario: str | Path, overrides: Overrides = None, *, origin: str = "overrides") -> dict:
    """Loads and checks a scenario without running it; returns it with every
    default filled in, only the parts its run uses."""
    return json.loads(_core.validate(**_source(scenario), sets=_sets(overrides, origin), origin=origin))


def parts() -> list[dict]:
    """Every part a scenario can have, with its keys (name, type, unit, default, range, help)."""
    return json.loads(_core.parts())
