"""`reproduce msi-latency` and the delivery model through the public API.

The model's costs are independent of the paper (docs/models/interrupt-delivery.md),
so these tests pin what it honestly achieves: the paper's ordering of the
three generations, a smaller XT-PIC advantage on the slower SoC, and the
documented ratios (IO-APIC about 2x and XT-PIC about 5.5x MSI on the
workstation, against the paper's 3x and 7x).
"""

from __future__ import annotations

import math

import pytest

import irqsim
from irqsim import studies

IDLE = "msi-latency/workstation-idle"
LOADED = "msi-latency/workstation-loaded"
SHORT = {"run.duration_ms": 20.0}


@pytest.fixture(scope="module")
def rows():
    return {(r.experiment, r.metric): r for r in studies.reproduce("msi-latency")}


def row(rows, profile, mech, stage="ISR"):
    return rows[(f"{profile}, UP, idle: {mech} vs MSI", f"{stage} latency normalized to MSI")]


def test_registered_and_schema(rows):
    assert "msi-latency" in studies.names()
    assert len(rows) == 6
    for r in rows.values():
        assert set(r.to_dict()) == {"study", "experiment", "metric", "unit", "paper", "simulated", "rel_error"}
        assert r.study == "msi-latency" and r.unit == "x" and math.isfinite(r.simulated)


def test_msi_beats_ioapic_beats_xtpic(rows):
    for profile in ("workstation", "SoC"):
        io, xt = row(rows, profile, "IO-APIC").simulated, row(rows, profile, "XT-PIC").simulated
        assert 1.0 < io < xt, (profile, io, xt)


def test_xtpic_advantage_smaller_on_the_soc(rows):
    """The paper: nearly 7x on the workstation, just over 6x on the slower SoC."""
    assert row(rows, "SoC", "XT-PIC").simulated < row(rows, "workstation", "XT-PIC").simulated


def test_documented_ratios(rows):
    """The values docs/models/interrupt-delivery.md reports (not the paper's)."""
    assert row(rows, "workstation", "IO-APIC").simulated == pytest.approx(2.01, abs=0.05)
    assert row(rows, "workstation", "XT-PIC").simulated == pytest.approx(5.47, abs=0.1)
    assert row(rows, "SoC", "IO-APIC").simulated == pytest.approx(1.75, abs=0.05)
    assert row(rows, "SoC", "XT-PIC").simulated == pytest.approx(4.38, abs=0.1)
    # The model under-predicts every ratio; none is off by more than half.
    for r in rows.values():
        assert -0.5 < r.rel_error < 0, r


def test_tasklet_after_isr_and_load_widens_the_tail():
    for kind in ("xtpic", "ioapic", "msi"):
        idle = irqsim.run(IDLE, {**SHORT, "intc.kind": kind}).metrics
        loaded = irqsim.run(LOADED, {**SHORT, "intc.kind": kind}).metrics
        assert idle["tasklet_latency_min_us"] > idle["isr_latency_min_us"]
        assert loaded["isr_latency_p99_us"] > idle["isr_latency_p99_us"], kind
        assert loaded["tasklet_latency_max_us"] > idle["tasklet_latency_max_us"], kind


def test_msi_sustains_the_most_interrupts_per_second():
    rate = {k: irqsim.run(IDLE, {**SHORT, "intc.kind": k}).metrics["max_interrupts_per_s"] for k in ("xtpic", "ioapic", "msi")}
    assert rate["msi"] > rate["ioapic"] > rate["xtpic"], rate


def test_conservation_and_invariants():
    for kind in ("xtpic", "ioapic", "msi"):
        r = irqsim.run(LOADED, {**SHORT, "intc.kind": kind, "workload.rate_per_s": 50000.0})
        r.check_invariants()
        m = r.metrics
        assert m["interrupts_raised"] == m["interrupts_serviced"] + m["interrupts_lost"] + m["interrupts_in_flight"]


def test_timeline_has_a_bus_track():
    trace = irqsim.run(IDLE, {"run.duration_ms": 2.0, "intc.kind": "ioapic"}, timeline=True).chrome_trace()
    bus = {e["name"] for e in trace["traceEvents"] if e.get("pid") == 2 and e.get("tid") == 1 and e["ph"] == "X"}
    assert {"Assert_INTx", "IO-APIC message", "status read", "status clear", "ISR signature", "Deassert_INTx", "tasklet signature"} <= bus


@pytest.mark.parametrize(
    ("sets", "key"),
    [
        ({"intc.kind": "xtpic", "cpu.threads": 2}, "cpu.threads"),
        ({"intc.vectors": 64}, "intc.vectors"),
        ({"intc.kind": "ioapic", "workload.line": 24}, "workload.line"),
    ],
)
def test_bad_configs_name_the_key(sets, key):
    with pytest.raises(irqsim.ConfigError, match=key.replace(".", r"\.")):
        irqsim.run(IDLE, sets)
