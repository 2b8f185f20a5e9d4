"""Figures: a sweep's metric against a grid key, a Gantt chart of a run's
timeline, and the studies' reproduction figures."""

from __future__ import annotations

import json

import pytest

import irqsim
from irqsim import figures
from irqsim.plot import sweep_figure, timeline_figure

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    spec = {
        "scenario": "mt-interrupts/driver-rx-single",
        "seeds": 2,
        "set": {"run.duration_ms": 2.0},
        "grid": {"workload.packet_bytes": [200, 800, 1500], "cpu.context_policy": ["single", "multithreaded"]},
    }
    irqsim.sweep(spec, out=out, workers=1)
    return out


def test_sweep_plot_has_a_line_per_other_key(swept, tmp_path, cli):
    lines = sweep_figure(swept, "rx_throughput_mbps", "workload.packet_bytes", tmp_path / "a.png")
    assert lines == ["cpu.context_policy=single", "cpu.context_policy=multithreaded"]
    assert (tmp_path / "a.png").read_bytes().startswith(PNG)
    p = cli("plot", "sweep", str(swept), "--metric", "rx_throughput_mbps", "--x", "cpu.context_policy", "-o", str(tmp_path / "b.svg"))
    assert p.returncode == 0, p.stderr
    assert "3 lines" in p.stderr and b"<svg" in (tmp_path / "b.svg").read_bytes()[:500]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--metric", "nope"], "no metric `nope`"),
        (["--metric", "events", "--x", "cpu.bogus"], "`cpu.bogus` is not a grid key"),
        (["--metric", "events", "-o", "x.pdf"], ".png or .svg"),
    ],
)
def test_sweep_plot_errors_are_one_line(swept, tmp_path, cli, args, needle):
    p = cli("plot", "sweep", str(swept), *args, cwd=tmp_path)
    assert p.returncode == 2 and needle in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_gantt_has_a_row_per_track(tmp_path, cli):
    out = tmp_path / "run"
    assert cli("run", "mt-interrupts/full-stack-multithreaded", "--set", "run.duration_ms=5", "-o", str(out), "--timeline").returncode == 0
    trace = json.loads((out / "timeline.json").read_text())
    tracks = timeline_figure(out, tmp_path / "g.png")
    spans = {(e["pid"], e["tid"]) for e in trace["traceEvents"] if e["ph"] == "X"}
    assert len(tracks) == len(spans) and "thread 0 / C2 isr" in tracks
    assert (tmp_path / "g.png").read_bytes().startswith(PNG)
    window = timeline_figure(trace, tmp_path / "w.svg", start_us=1000, end_us=1500)
    assert set(window) <= set(tracks)
    p = cli("plot", "timeline", str(out), "-o", str(tmp_path / "few.png"))
    assert p.returncode == 0 and "too many" not in p.stderr


def test_a_crowded_gantt_says_how_to_see_its_spans(tmp_path, cli):
    """A whole run of back-to-back interrupts blurs into a bar: the command
    says how to see the spans (a window, or the report's zoom)."""
    out = tmp_path / "run"
    assert cli("run", "mt-interrupts/driver-rx-single", "--set", "run.duration_ms=2", "-o", str(out), "--timeline").returncode == 0
    p = cli("plot", "timeline", str(out), "-o", str(tmp_path / "all.png"))
    assert p.returncode == 0 and "too many to tell apart" in p.stderr and "irqsim report" in p.stderr
    p = cli("plot", "timeline", str(out), "-o", str(tmp_path / "w.png"), "--start-us", "0", "--end-us", "100")
    assert p.returncode == 0 and "too many" not in p.stderr
    p = cli("plot", "timeline", str(tmp_path / "nope.json"), "-o", str(tmp_path / "x.png"))
    assert p.returncode == 2 and "nope.json" in p.stderr and p.stderr.count("\n") == 1


def test_study_figures(tmp_path):
    """`make figures` draws each study's figure; the two quick ones are drawn here."""
    figures.main([str(tmp_path), "mt-interrupts-driver.png", "msi-latency-normalized.png"])
    for name in ("mt-interrupts-driver.png", "msi-latency-normalized.png"):
        assert (tmp_path / name).read_bytes().startswith(PNG)
    assert set(figures.FIGURES) == {
        "mt-interrupts-driver.png",
        "msi-latency-normalized.png",
        "masking-break-even.png",
        "nic-firmware-cores.png",
        "nic-on-host.png",
        "smt-hot-thread.png",
        "livelock.png",
        "coalescing.png",
        "rss.png",
        "dim.png",
    }


def test_sweep_plot_labels_units_groups_zip_rows_and_keeps_the_legend_off_the_data(zip_sweep, tmp_path, monkeypatch):
    """A zip key's partner moves with it (one line, not one per partner value);
    the axes name the meaning and unit; the legend sits outside the axes."""
    from irqsim import plot

    out = zip_sweep
    figs = []
    monkeypatch.setattr(plot, "save_figure", lambda fig, output: figs.append(fig))
    lines = sweep_figure(out, "latency_p99_us", "workload.packet_bytes", tmp_path / "z.png")
    assert lines == ["cpu.context_policy=single", "cpu.context_policy=multithreaded"]
    ax = figs[0].axes[0]
    assert ax.get_ylabel().endswith("(µs)") and "receive latency" in ax.get_ylabel()
    assert ax.get_xlabel() == "workload.packet_bytes (bytes), with nic.rx_buffer_bytes"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["200, nic.rx_buffer_bytes=4096", "800, nic.rx_buffer_bytes=8192", "1500, nic.rx_buffer_bytes=16384"]
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(figs[0]).get_renderer()
    assert ax.get_legend().get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x1
    lines = sweep_figure(out, "busy_share", "cpu.context_policy", tmp_path / "p.png")
    assert len(lines) == 3  # one per zip row
