"""``irqsim report DIR -o report.html``: one self-contained HTML file that
opens offline (no network, no external script, style or font).

For a run directory (``irqsim run -o DIR``): provenance, every metric with
its unit and meaning, the cycle bins of each hardware thread, the latency
CDF and, when the run recorded one, the interactive timeline
(``report_timeline.js``: a track per hardware context and device, zoom, pan,
flow arrows from a device event to its handler). For a sweep directory: a
plot per metric against one key, a line per value of the other keys (a zip
key's partners move with it), the seeds' 95% interval as error bars. Charts are inline SVG drawn here.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any

from irqsim import IrqsimError, metrics
from irqsim.output import atomic_write, read_text

PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#d62728"]
BIN_COLORS = {"user": "#59a14f", "kernel": "#4e79a7", "interrupt": "#e15759", "bottom_half": "#f28e2b", "overhead": "#b07aa1", "idle": "#e8e8e8"}
STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 13px; } td, th { padding: 2px 8px; border-bottom: 1px solid #eee; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
svg text { font: 11px system-ui, sans-serif; fill: #333; } .grid { stroke: #eee; } .axisline { stroke: #888; }
.mark { stroke: #333; stroke-width: 1; } .flow { stroke: #d62728; stroke-width: 1; opacity: 0.7; } .arrowhead { fill: #d62728; }
#timeline { overflow-x: hidden; border: 1px solid #ddd; user-select: none; } .track { font-weight: 600; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; } .plots figure { margin: 0; }
"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _fmt(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return _e(v)
    if isinstance(v, float):
        return "–" if math.isnan(v) else f"{v:,.6g}"
    return f"{v:,}" if isinstance(v, int) else _e(v)


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else [0.0]
    step = 10 ** math.floor(math.log10((hi - lo) / n))
    step *= next(m for m in (1, 2, 5, 10) if (hi - lo) / (step * m) <= n)
    return [i * step for i in range(math.ceil(lo / step), math.floor(hi / step) + 1)]


class Chart:
    """An SVG chart: axes with ticks, then lines, points and error bars in data coordinates."""

    def __init__(self, xs: list[float], ys: list[float], xlabel: str, ylabel: str, w: int = 520, h: int = 300, xticks: list[str] | None = None):
        """``xticks``: category names, drawn at x = 0, 1, ... in place of numbers."""
        self.w, self.h, self.l, self.b = w, h, 64, 44
        if xticks:
            xs = [-0.5, len(xticks) - 0.5]
        finite = lambda v: [a for a in v if math.isfinite(a)] or [0.0, 1.0]  # noqa: E731
        self.x0, self.x1 = min(finite(xs)), max(finite(xs))
        self.y0, self.y1 = min(0.0, *finite(ys)), max(finite(ys))
        if self.x1 == self.x0:
            self.x0, self.x1 = self.x0 - 1, self.x1 + 1
        if self.y1 == self.y0:
            self.y1 = self.y0 + 1
        self.parts = [f'<line class="axisline" x1="{self.l}" y1="{h - self.b}" x2="{w - 10}" y2="{h - self.b}"/>']
        self.parts.append(f'<line class="axisline" x1="{self.l}" y1="10" x2="{self.l}" y2="{h - self.b}"/>')
        for t, name in enumerate(xticks) if xticks else ((t, f"{t:g}") for t in _ticks(self.x0, self.x1)):
            self.parts.append(f'<text x="{self.px(t):.1f}" y="{h - self.b + 14}" text-anchor="middle">{_e(name)}</text>')
        for t in _ticks(self.y0, self.y1):
            self.parts.append(f'<line class="grid" x1="{self.l}" x2="{w - 10}" y1="{self.py(t):.1f}" y2="{self.py(t):.1f}"/>')
            self.parts.append(f'<text x="{self.l - 4}" y="{self.py(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
        self.parts.append(f'<text x="{(self.l + w) / 2}" y="{h - 8}" text-anchor="middle">{_e(xlabel)}</text>')
        self.parts.append(f'<text transform="translate(12,{(h - self.b) / 2}) rotate(-90)" text-anchor="middle">{_e(ylabel)}</text>')

    def px(self, x: float) -> float:
        return self.l + (x - self.x0) / (self.x1 - self.x0) * (self.w - self.l - 10)

    def py(self, y: float) -> float:
        return (self.h - self.b) - (y - self.y0) / (self.y1 - self.y0) * (self.h - self.b - 10)

    def line(self, xs, ys, color: str, label: str = "", lows=None, highs=None) -> None:
        pts = [(self.px(x), self.py(y)) for x, y in zip(xs, ys) if math.isfinite(y)]
        self.parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.6" points="{" ".join(f"{a:.1f},{b:.1f}" for a, b in pts)}"><title>{_e(label)}</title></polyline>')
        if lows is not None:
            self.parts += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="2.5" fill="{color}"/>' for a, b in pts]
        for x, lo, hi in zip(xs, lows or [], highs or []):
            if math.isfinite(lo) and math.isfinite(hi):
                self.parts.append(f'<line class="errorbar" stroke="{color}" x1="{self.px(x):.1f}" x2="{self.px(x):.1f}" y1="{self.py(lo):.1f}" y2="{self.py(hi):.1f}"/>')

    def svg(self, legend: list[tuple[str, str]] = ()) -> str:
        items = "".join(f'<text x="{self.w + 8}" y="{20 + 15 * i}">{_swatch(c)} {_e(name)}</text>' for i, (name, c) in enumerate(legend))
        # Wide enough for the longest label (about 6.5 px a character at 11 px).
        width = self.w + (24 + round(6.5 * max(len(name) for name, _ in legend)) if legend else 0)
        return f'<svg width="{width}" height="{self.h}" viewBox="0 0 {width} {self.h}">{"".join(self.parts)}{items}</svg>'


def _swatch(color: str) -> str:
    """A legend's colored square (outlined, so that idle's pale grey shows); its name stays dark."""
    return f'<tspan style="fill:{color};stroke:#999;stroke-width:0.5">■</tspan>'


def _table(rows: list[list[str]], head: list[str], num: set[int] = frozenset()) -> str:
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f'<td class="num">{c}</td>' if i in num else f"<td>{c}</td>" for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><tr>{th}</tr>{body}</table>"


def _bins_svg(bins) -> str:
    """A stacked bar of each hardware thread's cycle bins, in % of elapsed."""
    cols = [c for c in bins.columns if c != "thread"]
    w, row = 760, 24
    parts = []
    for i, (_, r) in enumerate(bins.iterrows()):
        total, x = float(sum(r[c] for c in cols)) or 1.0, 90.0
        parts.append(f'<text x="0" y="{i * row + 16}">thread {int(r["thread"])}</text>')
        for c in cols:
            share = float(r[c]) / total
            width = share * (w - 100)
            parts.append(f'<rect class="bin" x="{x:.1f}" y="{i * row + 4}" width="{width:.1f}" height="{row - 8}" fill="{BIN_COLORS.get(c, "#999")}"><title>{c}: {100 * share:.2f}%</title></rect>')
            x += width
    y = len(bins) * row + 14
    parts += [f'<text x="{90 + 110 * j}" y="{y}">{_swatch(BIN_COLORS.get(c, "#999"))} {c}</text>' for j, c in enumerate(cols)]
    return f'<svg width="{w}" height="{y + 6}">{"".join(parts)}</svg>'


def _cdf_svg(latencies) -> str:
    import numpy as np

    v = np.sort(latencies["latency_us"].to_numpy())
    if not len(v):
        return "<p>No packet was delivered: no latencies.</p>"
    idx = np.unique(np.linspace(0, len(v) - 1, min(len(v), 800)).astype(int))
    c = Chart(list(v[idx]), [0.0, 1.0], "receive latency (µs)", "share of packets at or below")
    # From 0 at the least latency, so that a few packets still show a rise.
    c.line([v[0], *v[idx]], [0.0, *((idx + 1) / len(v))], PALETTE[0], "latency CDF")
    return c.svg()


def _timeline(trace: dict) -> tuple[str, int]:
    """The timeline's data (tracks, spans, marks, flows) as embedded JSON, and its span count."""
    names = {}
    for e in trace["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    keys = sorted({(e["pid"], e["tid"]) for e in trace["traceEvents"] if e["ph"] in "Xi"} | set(names))
    track = {k: i for i, k in enumerate(keys)}
    spans, marks, starts, flows = [], [], {}, []
    for e in trace["traceEvents"]:
        k = (e.get("pid"), e.get("tid"))
        if e["ph"] == "X":
            args = {a: b for a, b in e.get("args", {}).items() if a not in ("start_cycle", "cycles")}
            spans.append({"track": track[k], "name": e["name"], "ts": e["ts"], "dur": e["dur"], "args": json.dumps(args) if args else ""})
        elif e["ph"] == "i":
            marks.append({"track": track[k], "name": e["name"], "ts": e["ts"]})
        elif e["ph"] == "s":
            starts[e["id"]] = (track[k], e["ts"])
        elif e["ph"] == "f" and e["id"] in starts:
            src, t0 = starts.pop(e["id"])
            flows.append({"src": src, "from": t0, "dst": track[k], "to": e["ts"]})
    counts: dict[str, int] = {}
    for s in spans:
        counts[s["name"]] = counts.get(s["name"], 0) + 1
    colors = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(sorted(counts, key=counts.get, reverse=True))}
    times = [s["ts"] for s in spans] + [s["ts"] + s["dur"] for s in spans] + [m["ts"] for m in marks] or [0.0, 1.0]
    doc = {"tracks": [names.get(k, f"{k[0]}/{k[1]}") for k in keys], "spans": spans, "marks": marks, "flows": flows, "colors": colors, "start": min(times), "end": max(times)}
    return json.dumps(doc).replace("</", "<\\/"), len(spans)


def run_page(d: Path) -> str:
    import pandas as pd

    doc = json.loads(read_text(d / "metrics.json"))
    prov, units = doc.get("provenance", {}), doc.get("units", {})
    body = [f"<h1>irqsim run: {_e(prov.get('scenario', d.name))}</h1>"]
    body.append("<h2>Provenance</h2>" + _table([[_e(k), _fmt(v)] for k, v in prov.items()], ["field", "value"]))
    rows = []
    for k, v in doc["metrics"].items():
        m = metrics.find(k) or {}
        rows.append([f"<code>{_e(k)}</code>", _fmt(v) if v is not None else "–", _e(units.get(k, m.get("unit", ""))), _e(m.get("meaning", ""))])
    body.append("<h2>Metrics</h2>" + _table(rows, ["metric", "value", "unit", "meaning"], num={1}))
    body.append("<h2>Cycle bins per hardware thread</h2>" + _bins_svg(pd.read_parquet(d / "bins.parquet")))
    body.append("<h2>Receive latency</h2>" + _cdf_svg(pd.read_parquet(d / "latencies.parquet")))
    script = ""
    if (d / "timeline.json").is_file():
        data, n = _timeline(json.loads(read_text(d / "timeline.json")))
        body.append(f'<h2>Timeline</h2><p id="timeline-info">{n} spans</p><div id="timeline"></div>')
        script = f'<script type="application/json" id="timeline-data">{data}</script><script>{(Path(__file__).parent / "report_timeline.js").read_text()}</script>'
    return "\n".join(body) + script


def sweep_page(d: Path, x: str | None) -> str:
    import tomllib

    from irqsim.plot import key_label
    from irqsim.sweeps import dataset

    spec = tomllib.loads(read_text(d / "sweep.toml"))
    zipped = list(spec.get("zip", {}))
    keys = [*spec.get("grid", {}), *zipped]
    if not keys:
        raise IrqsimError(f"{d / 'sweep.toml'}: the sweep varies no key: nothing to plot against")
    x = x or keys[0]
    if x not in keys:
        raise IrqsimError(f"{d / 'sweep.toml'}: `{x}` is not a grid key; grid keys: {', '.join(keys)}")
    results = dataset.load(d)
    summary = dataset.summarize(results, keys)
    # A zip key's partners move with it: one line per value of the other keys, not per partner value.
    partners = [k for k in zipped if k != x] if x in zipped else []
    others = [k for k in keys if k != x and k not in partners]
    body = [f"<h1>irqsim sweep: {_e(spec['scenario'])}</h1>"]
    body.append(f"<p>{len(results)} runs ({int((results['status'] != 'ok').sum())} failed), seeds {_e(spec['seeds'])}; mean and 95% interval over seeds against <code>{_e(x)}</code>.</p>")
    xlabel = key_label(x) + (f", with {', '.join(partners)}" if partners else "")
    numeric = summary[x].dtype.kind in "iuf"
    ticks = list(dict.fromkeys(summary[x]))
    plots = []
    for metric, rows in summary.groupby("metric", sort=False):
        xs_of = (lambda g: [float(v) for v in g[x]]) if numeric else (lambda g: [float(ticks.index(v)) for v in g[x]])
        c = Chart(xs_of(rows), list(rows["ci95_high"].fillna(rows["mean"])) + list(rows["mean"]), xlabel, f"{metric} ({metrics.unit(metric) or '?'})", w=420, h=260, xticks=None if numeric else [str(t) for t in ticks])
        legend = []
        groups = rows.groupby(others, sort=False) if others else [((), rows)]
        for i, (point, g) in enumerate(groups):
            g = g.sort_values(x) if numeric else g
            point = point if isinstance(point, tuple) else (point,)
            label = ", ".join(f"{k}={v}" for k, v in zip(others, point)) or metric
            c.line(xs_of(g), list(g["mean"]), PALETTE[i % len(PALETTE)], label, list(g["ci95_low"]), list(g["ci95_high"]))
            legend.append((label, PALETTE[i % len(PALETTE)]))
        plots.append(f'<figure class="metric-plot"><figcaption><code>{_e(metric)}</code>: {_e(metrics.label(metric, 200))}</figcaption>{c.svg(legend if len(legend) > 1 else [])}</figure>')
    body.append('<div class="plots">' + "".join(plots) + "</div>")
    return "\n".join(body)


def write_report(directory: str | Path, output: str | Path, x: str | None = None) -> str:
    """Writes the report of a run or sweep directory to ``output``; returns its kind ("run" or "sweep")."""
    d = Path(directory)
    if (d / "sweep.toml").is_file():
        kind, body = "sweep", sweep_page(d, x)
    elif (d / "metrics.json").is_file():
        kind, body = "run", run_page(d)
    else:
        raise IrqsimError(f"{d}: neither a run's output directory (metrics.json) nor a sweep's (sweep.toml)")
    page = f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>irqsim {kind}: {_e(d.name)}</title><style>{STYLE}</style></head><body>\n{body}\n</body></html>\n'
    atomic_write(Path(output), page.encode())
    return kind
