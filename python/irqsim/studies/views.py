"""What ``irqsim reproduce`` prints: a one-line summary per study, or the
full tables (``--full``), as rich tables or Markdown (``--markdown``).

A numeric row's error is (simulated - paper) / paper; a direction row
(the paper gives only "higher", "lower" or "same") agrees or disagrees.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable

from irqsim.studies import Row

SUMMARY = ("study", "rows", "median |error|", "largest |error|", "agree", "disagree")


def summary(study: str, rows: list[Row]) -> dict[str, str]:
    """One study's line: rows, median and largest |error| of the numeric rows,
    and how many direction rows agree and disagree (named by :func:`disagreeing`)."""
    numeric = [abs(r.rel_error) for r in rows if not r.direction and math.isfinite(r.rel_error)]
    directions = [r.agrees for r in rows if r.direction]
    pct = lambda x: f"{100 * x:.1f}%"  # noqa: E731
    return {
        "study": study,
        "rows": str(len(rows)),
        "median |error|": pct(statistics.median(numeric)) if numeric else "-",
        "largest |error|": pct(max(numeric)) if numeric else "-",
        "agree": str(sum(directions)) if directions else "-",
        "disagree": str(len(directions) - sum(directions)) if directions else "-",
    }


def disagreeing(study: str, rows: list[Row]) -> list[str]:
    """The direction rows that go against the paper, one line each."""
    return [f"{study}: {r.experiment}: {r.metric} is {r.simulated:+.1f}%, the paper says {r.direction}" for r in rows if r.direction and not r.agrees]


def row_cells(r: Row, fmt) -> list[str]:
    """A full table's cells: experiment, metric, unit, paper, simulated, error."""
    if r.direction:
        return [r.experiment, r.metric, r.unit, r.direction, fmt(r.simulated), "agrees" if r.agrees else "disagrees"]
    return [r.experiment, r.metric, r.unit, fmt(r.paper), fmt(r.simulated), f"{100 * r.rel_error:+.2f}%"]


FULL = ("experiment", "metric", "unit", "paper", "simulated", "error")


def markdown(title: str | None, columns: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    """A Markdown table (``|`` in cells escaped), under a ``###`` title if given."""
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    columns = list(columns)
    lines = [f"### {title}", ""] if title else []
    lines += ["| " + " | ".join(map(esc, columns)) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(map(esc, r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"
