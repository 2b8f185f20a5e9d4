"""`irqsim report`: one self-contained HTML file, loaded in headless Chromium
(Debian's `chromium`, installed by .ci/run): no console error, the timeline
draws every span, the sweep a plot per metric with error bars."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def chromium_dom(page, fragment: str = "") -> tuple[str, str]:
    """The page's DOM after its scripts ran (``fragment``: the address's
    ``#...``), and Chromium's log (console messages)."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed: .ci/run installs Debian's chromium")
        pytest.skip("chromium is not installed (apt-get install chromium); CI runs this test")
    p = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri() + fragment],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout, p.stderr


def console_errors(log: str) -> list[str]:
    return [line for line in log.splitlines() if "CONSOLE" in line or "Uncaught" in line]


def assert_offline(text: str) -> None:
    """Nothing is fetched: no external script, style, image or font."""
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text, re.I)
    assert "<link" not in text and "@import" not in text and "url(http" not in text


def test_run_report_draws_every_span_offline(cli, tmp_path):
    run = tmp_path / "run"
    assert cli("run", "livelock/e1000-forward", "--set", "run.duration_ms=2", "-o", str(run), "--timeline").returncode == 0
    page = tmp_path / "report.html"
    p = cli("report", str(run), "-o", str(page))
    assert p.returncode == 0, p.stderr
    text = page.read_text()
    assert_offline(text)
    metrics = json.loads((run / "metrics.json").read_text())["metrics"]
    assert all(f"<code>{k}</code>" in text for k in metrics) and "<td>µs</td>" in text
    trace = json.loads((run / "timeline.json").read_text())["traceEvents"]
    spans = sum(e["ph"] == "X" for e in trace)
    dom, log = chromium_dom(page)
    assert not console_errors(log) and "data-error" not in dom
    assert f'data-spans="{spans}"' in dom and dom.count('class="span"') == spans
    assert dom.count('class="flow"') == sum(e["ph"] == "f" for e in trace) > 0
    assert dom.count('class="track"') == 3  # the CPU's thread, the NIC, the bus
    assert dom.count('class="bin"') == 6 and "latency CDF" in dom
    # Zoomed on the first 200 µs: only the spans there are drawn.
    inside = sum(e["ph"] == "X" and e["ts"] + e["dur"] >= 0 and e["ts"] <= 200 for e in trace)
    dom, log = chromium_dom(page, "#zoom=0,200")
    assert not console_errors(log) and 0 < inside < spans and f'data-spans="{inside}"' in dom


def test_sweep_report_has_a_plot_per_metric_with_seed_error_bars(tmp_path, cli):
    import irqsim
    from irqsim.sweeps import dataset

    out = tmp_path / "sweep"
    spec = {"scenario": "mt-interrupts/driver-rx-single", "seeds": 3, "set": {"run.duration_ms": 2.0}, "grid": {"workload.packet_bytes": [200, 1500], "cpu.context_policy": ["single", "multithreaded"]}}
    irqsim.sweep(spec, out=out, workers=1)
    page = tmp_path / "sweep.html"
    assert cli("report", str(out), "-o", str(page), "--x", "workload.packet_bytes").returncode == 0
    assert_offline(page.read_text())
    dom, log = chromium_dom(page)
    n = dataset.summarize(dataset.load(out), list(spec["grid"]))["metric"].nunique()
    assert not console_errors(log) and dom.count('class="metric-plot"') == n
    assert dom.count('class="errorbar"') >= 2 * 2 * 10  # two lines of two points, for most metrics


def test_sweep_report_against_a_zip_key_draws_a_line_per_other_key(zip_sweep, tmp_path, cli):
    """A zip key's partner moves with it: against that key, one line per value
    of the grid key (two), not one per partner value (the figures' old fault)."""
    page = tmp_path / "zip.html"
    assert cli("report", str(zip_sweep), "-o", str(page), "--x", "workload.packet_bytes").returncode == 0
    text = page.read_text()
    plots = text.count('class="metric-plot"')
    assert plots > 10 and text.count("<polyline") == 2 * plots
    assert "workload.packet_bytes (bytes), with nic.rx_buffer_bytes" in text
    # Against the grid key, whose values are names: a line per zip row, the names as ticks.
    assert cli("report", str(zip_sweep), "-o", str(page), "--x", "cpu.context_policy").returncode == 0
    text = page.read_text()
    assert text.count("<polyline") == 3 * plots and text.count(">single</text>") == text.count(">multithreaded</text>") == plots


def test_report_of_another_directory_is_one_line(cli, tmp_path):
    p = cli("report", str(tmp_path), "-o", str(tmp_path / "r.html"))
    assert p.returncode == 2 and "neither a run's output directory" in p.stderr and p.stderr.count("\n") == 1
