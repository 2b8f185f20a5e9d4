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
}


@dataclass(frozen=True)
class Row:
    study: str
    experiment: str
    metric: str
    unit: str
    paper: float
    simulated: float

    @property
    def rel_error(self) -> float:
        return (self.simulated - self.paper) / self.paper

    def to_dict(self) -> dict:
        return {**asdict(self), "rel_error": self.rel_error}


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
