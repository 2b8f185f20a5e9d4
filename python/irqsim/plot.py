"""Figures: a sweep's metric against a grid key, and a run's timeline as a
Gantt chart. The format follows the output's suffix (``.png``, ``.svg``).

The Gantt chart is drawn from the Chrome trace the core writes, so it needs
no browser and no network: one row per track (a hardware context, a device,
the bus), one bar per span, colored by span name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from irqsim import IrqsimError
from irqsim.output import read_text
from irqsim.sweeps import dataset

#: Spans of the most frequent names get a color and a legend entry each; the rest are grey.
LEGEND_NAMES = 12


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _check_format(output: Path) -> Path:
    if output.suffix.lower() not in (".png", ".svg"):
        raise IrqsimError(f"{output}: the figure's format follows its suffix: .png or .svg")
    return output


def save_figure(fig, output: Path) -> None:
    """Saves ``fig`` to ``output`` (PNG or SVG by suffix), creating its directory."""
    output.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(output, dpi=120)


def key_label(key: str) -> str:
    """An axis label for a scenario key: the key and its unit (docs/config.md)."""
    from irqsim import api

    section, _, name = key.rpartition(".")
    for part in api.parts():
        params = part["params"] + [p for k in part.get("kinds", []) for p in k["params"]]
        unit = next((p["unit"] for p in params if part["section"] == section and p["key"] == name), "")
        if unit:
            return f"{key} ({unit})"
    return key


def sweep_figure(directory: str | Path, metric: str, x: str | None, output: str | Path, logx: bool = False) -> list[str]:
    """Draws ``metric`` (mean and 95% CI band across seeds) against grid key
    ``x``, one line per combination of the other grid keys and per zip row (a
    zip key's partners move with it: with ``x`` a zip key, they label its
    ticks); returns the lines' labels. The axes name meanings and units, the
    legend sits beside the plot."""
    import tomllib

    from irqsim import metrics

    directory, output = Path(directory), _check_format(Path(output))
    spec_path = directory / "sweep.toml"
    if not spec_path.is_file():
        raise IrqsimError(f"{directory}: not a sweep's output directory (no sweep.toml)")
    spec = tomllib.loads(read_text(spec_path))
    grid, zipped = list(spec.get("grid", {})), list(spec.get("zip", {}))
    keys = [*grid, *zipped]
    if not keys:
        raise IrqsimError(f"{spec_path}: the sweep varies no key: nothing to plot against")
    x = x or keys[0]
    if x not in keys:
        raise IrqsimError(f"{spec_path}: `{x}` is not a grid key; grid keys: {', '.join(keys)}")
    summary = dataset.summarize(dataset.load(directory), keys)
    rows = summary[summary["metric"] == metric]
    if rows.empty:
        known = ", ".join(sorted(set(summary["metric"])))
        raise IrqsimError(f"{directory}: no metric `{metric}`; metrics: {known}")
    partners = [k for k in zipped if k != x] if x in zipped else []
    others = [k for k in keys if k != x and k not in partners]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    categorical = bool(partners) or is_bool_dtype(rows[x]) or not is_numeric_dtype(rows[x])
    ticks = list(dict.fromkeys(rows[x])) if categorical else None
    labels = []
    groups = rows.groupby(others, sort=False) if others else [((), rows)]
    for point, g in groups:
        point = point if isinstance(point, tuple) else (point,)
        g = g if categorical else g.sort_values(x)
        xs = [ticks.index(v) for v in g[x]] if categorical else g[x].astype(float)
        label = ", ".join(f"{k}={v}" for k, v in zip(others, point)) or metric
        ax.plot(xs, g["mean"], marker="o", label=label)
        ax.fill_between(xs, g["ci95_low"], g["ci95_high"], alpha=0.2)
        labels.append(label)
    if categorical:
        with_partners = rows.drop_duplicates(x).set_index(x)
        names = [", ".join([str(t), *(f"{k}={with_partners.loc[t, k]}" for k in partners)]) for t in ticks]
        ax.set_xticks(range(len(ticks)), names, fontsize=8 if partners else None)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(key_label(x) + (f", with {', '.join(partners)}" if partners else ""))
    ax.set_ylabel(metrics.label(metric))
    ax.set_title(f"{spec.get('scenario', '')}: {metric}, mean and 95% CI over seeds", fontsize=10)
    ax.grid(True, alpha=0.3)
    if len(labels) > 1:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    save_figure(fig, output)
    plt.close(fig)
    return labels


def load_trace(trace: str | Path | dict) -> dict:
    """A Chrome trace: a dict as it is, else read from a file or a run's output directory."""
    if isinstance(trace, dict):
        return trace
    path = Path(trace)
    if path.is_dir():
        path = path / "timeline.json"
    try:
        doc = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise IrqsimError(f"{path}:{e.lineno}: not a Chrome trace: {e.msg}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise IrqsimError(f"{path}: not a Chrome trace (no traceEvents list)")
    return doc


def timeline_figure(trace: str | Path | dict, output: str | Path, start_us: float | None = None, end_us: float | None = None) -> list[str]:
    """Draws a Gantt chart of a Chrome trace (a dict, a file or a run's
    output directory), optionally of a window in µs; returns the track labels, top to bottom."""
    from collections import Counter

    output = _check_format(Path(output))
    doc = load_trace(trace)
    events: list[dict[str, Any]] = doc["traceEvents"]
    process = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    thread = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = _spans(doc, start_us, end_us)
    tracks = sorted({(e["pid"], e["tid"]) for e in spans})
    if not tracks:
        raise IrqsimError("the timeline has no spans in this window (was the run recorded with a timeline?)")
    names = [n for n, _ in Counter(e["name"] for e in spans).most_common(LEGEND_NAMES)]
    plt = pyplot()
    colors = {n: plt.get_cmap("tab20")(i % 20) for i, n in enumerate(names)}
    fig, ax = plt.subplots(figsize=(11, 1.0 + 0.5 * len(tracks)))
    row = {t: i for i, t in enumerate(reversed(tracks))}
    for name in [*names, None]:
        mine = [e for e in spans if (e["name"] if e["name"] in colors else None) == name]
        by_track: dict[tuple, list] = {}
        for e in mine:
            by_track.setdefault((e["pid"], e["tid"]), []).append((e["ts"], max(e.get("dur", 0), 1e-3)))
        for i, (t, bars) in enumerate(by_track.items()):
            label = (name or "other") if i == 0 else None
            # A hairline edge keeps back-to-back spans of one name apart.
            ax.broken_barh(bars, (row[t] - 0.4, 0.8), color=colors.get(name, "0.7"), edgecolor="white", linewidth=0.3, label=label)
    labels = [thread.get(t) or f"{process.get(t[0], t[0])} / {t[1]}" for t in tracks]
    ax.set_yticks([row[t] for t in tracks], labels)
    if start_us is not None or end_us is not None:
        ax.set_xlim(start_us if start_us is not None else None, end_us if end_us is not None else None)
    ax.set_xlabel("time (µs)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    save_figure(fig, output)
    plt.close(fig)
    return labels


#: More spans than this on one track, across the figure's width (about 1,300 pixels), blur into a solid bar.
LEGIBLE_SPANS = 250


def crowded(trace: dict, start_us: float | None = None, end_us: float | None = None) -> int:
    """How many spans the window holds when one track has too many to tell
    apart in :func:`timeline_figure` (more than ``LEGIBLE_SPANS``), else 0."""
    from collections import Counter

    spans = _spans(trace, start_us, end_us)
    per_track = Counter((e["pid"], e["tid"]) for e in spans)
    return len(spans) if per_track and max(per_track.values()) > LEGIBLE_SPANS else 0


def _spans(trace: dict, start_us: float | None, end_us: float | None) -> list[dict[str, Any]]:
    """The trace's spans that overlap the window (either end may be open)."""
    return [
        e
        for e in trace["traceEvents"]
        if e.get("ph") == "X" and (start_us is None or e["ts"] + e.get("dur", 0) >= start_us) and (end_us is None or e["ts"] <= end_us)
    ]
