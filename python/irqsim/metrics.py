"""The metric declarations of the core (crates/core/src/metrics.rs): unit,
meaning and emitting parts of every metric, for units in ``metrics.json`` and
axis labels. docs/metrics.md lists them."""

from __future__ import annotations

import functools
import json
import re

from irqsim import _core


@functools.cache
def declared() -> list[dict]:
    """Every metric (or family, ``{}`` in its name) as the core declares it."""
    return json.loads(_core.declared())


@functools.cache
def _patterns() -> list[tuple[re.Pattern, dict]]:
    out = []
    for m in declared():
        fill = "|".join(map(re.escape, m["values"])) if m["values"] else r"\d+"
        out.append((re.compile(re.escape(m["name"]).replace(re.escape("{}"), f"({fill})")), m))
    return out


def find(name: str) -> dict | None:
    """The declaration of metric ``name``, or None (a sweep's own columns)."""
    return next((m for p, m in _patterns() if p.fullmatch(name)), None)


def unit(name: str) -> str:
    """The unit of metric ``name`` ("" if undeclared)."""
    m = find(name)
    return m["unit"] if m else ""


def label(name: str, width: int = 48) -> str:
    """An axis label: the metric's meaning (its member, for a family) and
    unit, wrapped to ``width`` columns, e.g. ``receive latency, ... [p99] (µs)``;
    the bare name if undeclared."""
    import textwrap

    for p, m in _patterns():
        if match := p.fullmatch(name):
            meaning = re.split(r"[:;]| \(", m["meaning"])[0]
            member = f" [{match.group(1)}]" if match.groups() else ""
            return textwrap.fill(f"{meaning}{member} ({m['unit']})", width)
    return name
