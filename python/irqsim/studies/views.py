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

SUMMARY = ("study", "rows", "median |error|", "largest |error|", "directions", "disagree")


def summary(study: str, rows: list[Row]) -> dict[str, str]:
    """One study's line: rows, median and largest |error| of the numeric rows
    (the largest named), directions that agree, and the rows that disagree."""
    numeric = [r for r in rows if not r.direction and math.isfinite(r.rel_error)]
    directions = [r for r in rows if r.direction]
    median = f"{100 * statistics.median(abs(r.rel_error) for r in numeric):.1f}%" if numeric else "-"
    worst = max(numeric, key=lambda r: abs(r.rel_error), default=None)
    largest = f"{100 * worst.rel_error:+.1f}% ({worst.experiment}, {worst.metric})" if worst else "-"
    agree = sum(r.agrees for r in directions)
    return {
        "study": study,
        "rows": str(len(rows)),
        "median |error|": median,
        "largest |error|": largest,
        "directions": f"{agree} of {len(directions)} agree" if directions else "-",
        "disagree": "; ".join(f"{r.experiment} ({r.metric})" for r in directions if not r.agrees) or "-",
    }


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
