"""The Python API end to end: run, overrides, results, invariants, determinism."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import irqsim


def test_run_returns_metrics_bins_and_latencies():
    """A bundled scenario runs; bins are a DataFrame summing to elapsed cycles; latencies are per packet."""
    r = irqsim.run("mt-interrupts/full-stack-single")
    assert r.metrics["rx_delivered"] > 900
    assert isinstance(r.bins, pd.DataFrame)
    assert (r.bins.sum(axis=1) == r.elapsed_cycles).all()
    assert len(r.latencies) == r.metrics["rx_delivered"]
    assert (r.latencies["latency_us"] > 0).all()
    assert r.latencies["latency_us"].min() == pytest.approx(r.metrics["latency_min_us"], rel=1e-3)
    r.check_invariants()


def test_context_bins_show_which_context_runs_what():
    """Multithreaded: C1 runs only the application, C2 only the ISR, C3 only kernel work; contexts plus idle sum to elapsed."""
    r = irqsim.run("mt-interrupts/full-stack-multithreaded", {"run.duration_ms": 100.0})
    cb = r.context_bins.loc[0]
    assert set(cb.index) == {"C1 app", "C2 isr", "C3 protocol"}
    assert cb.loc["C1 app", ["kernel", "interrupt"]].sum() == 0 and cb.loc["C1 app", "user"] > 0
    assert cb.loc["C2 isr", ["user", "kernel"]].sum() == 0 and cb.loc["C2 isr", "interrupt"] > 0
    assert cb.loc["C3 protocol", ["user", "interrupt"]].sum() == 0 and cb.loc["C3 protocol", "kernel"] > 0
    assert cb.to_numpy().sum() + r.bins.loc[0, "idle"] == r.elapsed_cycles


def test_overrides_as_mapping_and_as_strings_agree():
    """`{"key": value}` and `["key=value"]` overrides are the same thing."""
    a = irqsim.run("mt-interrupts/driver-rx-single", {"cpu.context_policy": "multithreaded", "run.duration_ms": 10.0})
    b = irqsim.run("mt-interrupts/driver-rx-single", ["cpu.context_policy=multithreaded", "run.duration_ms=10"])
    assert a.metrics == b.metrics
    assert a.metrics["rx_throughput_mbps"] > irqsim.run("mt-interrupts/driver-rx-single", {"run.duration_ms": 10.0}).metrics["rx_throughput_mbps"]


def test_a_list_items_key_by_its_index():
    """One key of one `[[nics.others]]` table, by its index, from a mapping
    or a string; an index past the list is an IrqsimError naming the key."""
    a = irqsim.run("compose/two-nics", {"nics.others[0].irq_path": "linux", "run.duration_ms": 5.0})
    b = irqsim.run("compose/two-nics", ['nics.others[0].irq_path="linux"', "run.duration_ms=5"])
    base = irqsim.run("compose/two-nics", {"run.duration_ms": 5.0})
    assert a.metrics == b.metrics
    assert a.metrics["napi_schedules"] < base.metrics["napi_schedules"]  # the second NIC left NAPI
    with pytest.raises(irqsim.IrqsimError, match=r"nics\.others\[2\]\.rate_per_s"):
        irqsim.run("compose/two-nics", {"nics.others[2].rate_per_s": 1.0})


def test_toml_text_runs():
    """TOML text is a scenario too."""
    text = '[cpu]\nclock_mhz = 100.0\n[run]\nduration_ms = 5.0\n[workload]\nkind = "arrivals"\nrate_per_s = 1000.0\npacket_bytes = 200\n'
    r = irqsim.run(text)
    assert 0 < r.metrics["rx_offered"] < 20
    r.check_invariants()


def test_same_seed_same_numbers_other_seed_other_numbers():
    """Runs are deterministic: same scenario and seed give identical metrics and latencies."""
    s = "bench/rx-overload"
    o = {"run.duration_ms": 2000.0}
    a, b = irqsim.run(s, o), irqsim.run(s, o)
    assert a.metrics == b.metrics or all(math.isnan(x) and math.isnan(b.metrics[k]) or x == b.metrics[k] for k, x in a.metrics.items())
    assert a.latencies.equals(b.latencies)
    c = irqsim.run(s, {**o, "run.seed": 2})
    assert c.metrics["rx_offered"] != a.metrics["rx_offered"]


def test_saturated_run_drops_but_conserves_packets():
    """Above saturation the backlog drops packets; offered = delivered + dropped + in flight."""
    m = irqsim.run("bench/rx-overload", {"run.duration_ms": 3000.0}).metrics
    assert m["rx_dropped_backlog"] > 0
    assert m["rx_offered"] == m["rx_delivered"] + m["rx_dropped_nic"] + m["rx_dropped_backlog"] + m["rx_in_flight"]


def test_timeline_has_a_track_per_context():
    """The Chrome trace names one track per hardware context and a device track."""
    r = irqsim.run("mt-interrupts/full-stack-multithreaded", {"run.duration_ms": 20.0}, timeline=True)
    t = r.chrome_trace()
    names = {e["args"]["name"] for e in t["traceEvents"] if e.get("name") == "thread_name"}
    assert {"thread 0 / C1 app", "thread 0 / C2 isr", "thread 0 / C3 protocol", "NIC"} <= names
    spans = [e for e in t["traceEvents"] if e["ph"] == "X"]
    assert any(e["name"] == "Driver ISR (Rx done)" for e in spans)


def test_validate_fills_defaults():
    """validate returns the scenario with defaults."""
    s = irqsim.validate("mt-interrupts/driver-rx-single")
    assert s["cpu"]["save_restore_cycles"] == 186
    assert s["nic"]["tx_queue_packets"] == 64


def test_a_scenario_file_is_read_again_once_written(tmp_path):
    """irqsim.run keeps a file's text from one run to the next (the core read
    it on every run), and reads it again once it is written, at the same size
    too; errors still name the file and line."""
    f = tmp_path / "s.toml"
    text = '[cpu]\nclock_mhz = 100.0\n[run]\nduration_ms = 5.0\nseed = 1\n[workload]\nkind = "arrivals"\nrate_per_s = 9000.0\npacket_bytes = 200\n'
    f.write_text(text)
    first = irqsim.run(f).metrics
    assert irqsim.run(str(f)).metrics == first
    f.write_text(text.replace("seed = 1", "seed = 2"))
    assert irqsim.run(f).metrics["rx_offered"] != first["rx_offered"]
    f.write_text(text.replace("9000.0", "9000.x"))
    with pytest.raises(irqsim.ConfigError, match=rf"^{f}: line 8, column"):
        irqsim.run(f)
