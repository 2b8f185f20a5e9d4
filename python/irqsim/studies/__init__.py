"""Seed-study reproductions: one module per study, each with ``reproduce()``.

Each module exposes ``STUDY`` (its name on the command line), ``TITLE`` and
``reproduce() -> list[Row]``; a :class:`Row` puts one number from the paper
beside the simulated one.
"""

from __future__ import annotations

import importlib
from dataclasses import asdict, dataclass

# Study name → module. One line per study.
MODULES = {
    "mt-interrupts": "irqsim.studies.mt_interrupts",
    "optimistic-spl": "irqsim.studies.optimistic_spl",
    "msi-latency": "irqsim.studies.msi_latency",
    "nic-firmware": "irqsim.studies.nic_firmware",
    "smt-hot-thread": "irqsim.studies.smt_hot_thread",
    "livelock": "irqsim.studies.livelock",
}


@dataclass(frozen=True)
class Row:
    """One paper number beside the simulated one; where the paper gives only a
    direction, ``direction`` is "higher", "lower" or "same" (a change in % within
    ±2 counts as the same), ``paper`` is NaN and ``simulated`` the change in %."""

    study: str
    experiment: str
    metric: str
    unit: str
    paper: float
    simulated: float
    direction: str = ""

    @property
    def rel_error(self) -> float:
        return float("nan") if self.direction else (self.simulated - self.paper) / self.paper

    @property
    def agrees(self) -> bool:
        """For a direction row: whether the simulated change goes the paper's way."""
        return {"higher": self.simulated > 2.0, "lower": self.simulated < -2.0, "same": abs(self.simulated) <= 2.0}[self.direction]

    def to_dict(self) -> dict:
        d = {**asdict(self), "rel_error": self.rel_error}
        if not self.direction:
            del d["direction"]
            return d
        return {**d, "paper": None, "rel_error": None, "agrees": self.agrees}


def names() -> list[str]:
    return list(MODULES)


def reproduce(name: str) -> list[Row]:
    if name not in MODULES:
        raise KeyError(name)
    return importlib.import_module(MODULES[name]).reproduce()


def tables(name: str) -> list[tuple[str, list[dict]]]:
    """A study's extra tables (title, rows as dicts), if it has any."""
    module = importlib.import_module(MODULES[name])
    return module.tables() if hasattr(module, "tables") else []
