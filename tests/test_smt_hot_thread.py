"""The smt-hot-thread study on the machine: the C kernel (programs/kernel/)
as the machine's activities on the Pentium 4 class SMT core.

The issue's laws: frames conserved across threads and NICs, bins summing
to the elapsed cycles per thread, pinned lines never evicted, the hot
thread never running application code, determinism; and the study's
configurations doing what they say.
"""

from __future__ import annotations

import tomllib

import pytest

from irqsim import IrqsimError, api
from irqsim import exec as mips
from irqsim.studies import Row
from irqsim.studies import smt_hot_thread as smt

SHORT = {**smt.FAST_LINK, "run.duration_ms": 2.0}


def run(name: str, **over) -> api.Result:
    return api.run(f"smt-hot-thread/{name}", {**SHORT, **over})


@pytest.fixture(scope="module")
def overloaded():
    """Both configurations at twice the baseline's peak load: the baseline livelocks."""
    return {cfg: run(f"netperf-{cfg}", **{"workload.rate_per_s": 1.2e6}) for cfg in ("baseline", "hot")}


def as_tables(sets: list[str]) -> dict:
    """The study's `section.key=value` core settings as `[code.core.*]` tables."""
    out: dict = {}
    for s in sets:
        key, value = s.split("=")
        section, leaf = key.split(".")
        out.setdefault(section, {})[leaf] = int(value) if value.isdigit() else value
    return out


def test_scenarios_use_the_studys_machine():
    for name in ("netperf-baseline", "netperf-hot", "nat-baseline", "nat-hot"):
        doc = tomllib.loads(api.scenario_path(f"smt-hot-thread/{name}").read_text())
        assert doc["code"]["core"] == as_tables(smt.core_list(name.endswith("hot"))), name
        assert doc["cpu"]["clock_mhz"] == smt.CLOCK_MHZ
        assert doc["nic"]["irq_thread"] == (smt.HOT_THREAD if name.endswith("hot") else smt.APP_THREAD)


def test_frames_are_conserved_and_bins_sum_to_elapsed(overloaded):
    nat = {cfg: run(f"nat-{cfg}", **{"workload.rate_per_s": 3e6}) for cfg in ("baseline", "hot")}
    for r in [*overloaded.values(), *nat.values()]:
        r.check_invariants()
        m = r.metrics
        out = m["rx_delivered"] + m["rx_dropped_nic"] + m["rx_dropped_software"] + m["rx_dropped_wire"] + m["rx_in_flight"]
        assert m["rx_offered"] == out > 0
        assert (r.bins.sum(axis=1) == r.elapsed_cycles).all()
    for r in nat.values():  # forwarded frames leave through NIC 1: every one sent was offered to it
        m = r.metrics
        assert m["rx_forwarded"] == m["tx_sent"] > 0 and m["tx_offered"] == m["tx_sent"] + m["tx_dropped"] + m["tx_in_flight"]
        assert m["code_user_instructions"] == 0  # a forwarding box: no application


def test_the_hot_thread_never_runs_application_code(overloaded):
    code, bins = overloaded["hot"].code_bins, overloaded["hot"].bins
    hot, app = smt.HOT_THREAD, smt.APP_THREAD
    assert code.loc[(hot, "user"), "instructions"] == 0 == code.loc[(hot, "kernel"), "instructions"]
    assert bins.loc[hot, "user"] == 0 == bins.loc[hot, "kernel"]
    assert code.loc[(hot, "bottom_half"), "instructions"] > 0 and code.loc[(hot, "interrupt"), "instructions"] > 0
    # The NIC's handlers never run on the application's thread; its one
    # interrupt is the timer tick every thread takes (code.ticks_per_s).
    assert code.loc[(app, "bottom_half"), "instructions"] == 0
    assert code.loc[(app, "interrupt"), "instructions"] < 0.01 * code.loc[(hot, "interrupt"), "instructions"]
    assert code.loc[(app, "user"), "instructions"] > 0


def test_overload_starves_the_baselines_application_not_the_hot_threads(overloaded):
    base, hot = (overloaded[c].metrics for c in ("baseline", "hot"))
    assert hot["rx_delivered"] > 1.3 * base["rx_delivered"]
    assert base["rx_dropped_software"] > hot["rx_dropped_software"]  # full socket queue: recv got too little CPU


def test_runs_are_deterministic(overloaded):
    again = run("netperf-hot", **{"workload.rate_per_s": 1.2e6})
    assert again.to_dict() == overloaded["hot"].to_dict()


def test_pins_cover_the_fraction_of_each_cache():
    assert smt.pins("nat", "l1i", 0.5) == ["l1i.trace_threads=1", "l1i.way_masks=1:0x3f"]
    for kind, size in (("l1d", 8192), ("l2", 512 * 1024)):
        for f in smt.FRACTIONS:
            (setting,) = smt.pins("nat", kind, f)
            ranges = setting.split("=", 1)[1].split(",")
            assert sum(int(r.split("+")[1]) for r in ranges) == int(f * size), (kind, f)


def test_a_pinned_line_is_never_evicted():
    """The rings pinned in the Pentium 4 L1D and L2 while 1,300 frames stream
    through (kernel/measure-nat on the core): every locked line is still locked."""
    for kind in ("l1d", "l2"):
        (setting,) = smt.pins("nat", kind, 0.25)
        r = mips.run("kernel/measure-nat", [f"{k}={v}" for k, v in smt.P4_CACHES.items()] + [setting])
        line = smt.P4_CACHES[f"{kind}.line_bytes"]
        ranges = [(int(a, 16), int(n)) for a, n in (r.split("+") for r in setting.split("=", 1)[1].split(","))]
        lines = {x // line for a, n in ranges for x in range(a, a + n)}
        assert r["exit_code"] == 0 and len(lines) >= 0.25 * smt.P4_CACHES[f"{kind}.size_bytes"] // line
        assert r["caches"][kind]["locked_lines"] == len(lines)


def test_pinning_runs_on_the_machine():
    plain = smt.run_point("netperf", True, 700e3, duration_ms=2.0)
    pinned = smt.run_point("netperf", True, 700e3, smt.pins("netperf", "l1d", 0.5), duration_ms=2.0)
    assert pinned.metrics["rx_offered"] == plain.metrics["rx_offered"]
    assert pinned.metrics["code_bottom_half_l1d_misses"] != plain.metrics["code_bottom_half_l1d_misses"]


def test_a_lock_on_untouched_lines_costs_capacity_and_a_lock_of_live_data_wins_some_back(monkeypatch):
    """Half the L2 locked on lines nothing touches only takes capacity (more
    misses); the same half locked on the NAT's own rings and tables keeps
    live lines, so it misses less than the untouched lock does."""
    monkeypatch.setattr(smt, "RATES", {**smt.RATES, "nat": [2.0e6]})
    monkeypatch.setattr(smt, "DURATION_MS", 2.0)
    smt.bandwidth.cache_clear()
    try:
        c = {k: smt.l2_per_frame(p, "nat") for k, p in smt.pin_controls("nat", 0.5).items()}
    finally:
        smt.bandwidth.cache_clear()
    assert c["untouched range"] > 1.2 * c["none"]
    assert c["study's order"] < c["untouched range"] and c["order without the head pages"] < c["untouched range"]


def test_the_nat_sensitivity_as_built_is_the_studys_nat_rows(monkeypatch):
    monkeypatch.setattr(smt, "RATES", {**smt.RATES, "nat": [1.0e6, 2.0e6]})
    monkeypatch.setattr(smt, "DURATION_MS", 2.0)
    for f in (smt.bandwidth, smt.pinned, smt.spread_baseline):
        f.cache_clear()
    try:
        ((_, gain, vs_spread, cut),) = smt.nat_sensitivity({"as built": ({}, [])})
        base, hot, spread = (smt.peak(list(c)) for c in (smt.bandwidth("nat", False), smt.bandwidth("nat", True), smt.spread_baseline("nat")))
        half = smt.pinned("nat", "l2", 0.5)
    finally:
        for f in (smt.bandwidth, smt.pinned, smt.spread_baseline):
            f.cache_clear()
    assert gain == smt.change(hot.delivered_mbps, base.delivered_mbps)
    assert vs_spread == smt.change(hot.delivered_mbps, spread.delivered_mbps)
    assert cut == -smt.change(smt.l2_per_frame(half, "nat"), smt.l2_per_frame(hot, "nat"))


def test_direction_rows():
    up = Row("s", "e", "change", "%", float("nan"), 12.0, "higher")
    assert up.agrees and not Row("s", "e", "change", "%", float("nan"), -5.0, "higher").agrees
    assert Row("s", "e", "change", "%", float("nan"), 1.5, "same").agrees
    d = up.to_dict()
    assert d["paper"] is None and d["rel_error"] is None and d["direction"] == "higher" and d["agrees"] is True
    assert "direction" not in Row("s", "e", "m", "u", 2.0, 3.0).to_dict()


def test_reproduce_on_a_short_grid(monkeypatch):
    """The study's rows from a few loads: every row present, the hot thread ahead at saturation."""
    monkeypatch.setattr(smt, "RATES", {"netperf": [300e3, 600e3, 1.0e6], "nat": [1.0e6, 2.0e6]})
    monkeypatch.setattr(smt, "DURATION_MS", 2.0)
    for f in (smt.bandwidth, smt.pinned, smt.spread_baseline):
        f.cache_clear()
    try:
        rows = smt.reproduce()
    finally:
        for f in (smt.bandwidth, smt.pinned, smt.spread_baseline):
            f.cache_clear()
    by = {r.experiment: r for r in rows}
    assert len(by) == len(rows) == 10
    gain = by["netperf UDP flood: peak bandwidth, hot thread vs baseline"]
    assert gain.paper == 30.0 and gain.simulated > 10
    assert all(r.direction in ("higher", "lower", "same") for r in rows if r.paper != r.paper)
    assert by["netperf at the 1 Gb/s line rate (CPU not saturated): hot thread vs baseline"].agrees
    # NIC 1's interrupts on the other thread let the baseline overlap the transmit cleanup.
    assert by["NAT forwarding: peak bandwidth, hot thread vs a baseline with NIC 1's interrupts on the other thread"].simulated < 0


def test_table_sizes_are_set_without_a_rebuild():
    """code.poke writes kconfig before kernel_init: a 4-frame socket queue drops more
    under overload than the default 64; a bad size stops at kernel_init's `break N`."""
    over = {"workload.rate_per_s": 1e6}
    small = run("netperf-hot", **over, **{"code.poke": ["kconfig+12=4"]}).metrics
    default = run("netperf-hot", **over).metrics
    assert small["rx_dropped_software"] > default["rx_dropped_software"]
    with pytest.raises(IrqsimError, match=r"host\.elf: break 1 in kernel_init\+0x"):
        run("netperf-hot", **{"code.poke": ["kconfig=3"]})  # a ring of 3: not a power of two


def test_the_scheduler_kernel_runs_and_its_control_skips_it():
    """The *-sched ELF (2.6.11's scheduler) conserves frames on both threads;
    its control (every entry returning at once, same layout) runs fewer
    kernel and bottom-half instructions on the same frames."""
    out = {}
    for variant in ("sched", "hooks"):
        r = api.run("smt-hot-thread/netperf-hot", {**SHORT, "workload.rate_per_s": 300e3, **smt.kernel("netperf", variant)})
        r.check_invariants()
        out[variant] = r.metrics
    sched, hooks = out["sched"], out["hooks"]
    assert sched["rx_delivered"] == hooks["rx_delivered"] > 0
    assert sched["code_kernel_instructions"] > hooks["code_kernel_instructions"]
    assert sched["code_bottom_half_instructions"] > hooks["code_bottom_half_instructions"]
    assert smt.pins("netperf", "l2", 0.5, "sched") == smt.pins("netperf", "l2", 0.5, "hooks")


def test_layout_probes_move_the_kernel_and_nothing_else():
    """kernel/*-padK move code K x 16 B and data K x 64 B; at a light load
    the probe delivers what the scenarios' kernel does."""
    from irqsim.studies.smt_footprint import Elf

    base, pad = (Elf(smt.kernel_elf("netperf", v)).symbols for v in ("", "pad2"))
    assert pad["sys_recv"].addr - base["sys_recv"].addr == 32
    assert pad["conns"].addr - base["conns"].addr == 128
    # slab.c's objects follow its 8 KiB-aligned pages' section, and stay
    assert pad["kmem_caches"].addr == base["kmem_caches"].addr
    out = {}
    for v in ("", "pad2"):
        r = api.run("smt-hot-thread/netperf-hot", {**SHORT, "workload.rate_per_s": 100e3, **smt.kernel("netperf", v)})
        r.check_invariants()
        out[v] = r.metrics
    assert out[""]["rx_delivered"] == out["pad2"]["rx_delivered"] > 0.8 * out[""]["rx_offered"]
    assert out[""]["rx_dropped_software"] == out["pad2"]["rx_dropped_software"] == 0


def test_more_sources_than_route_cache_entries_are_all_routed():
    """2,000 flows, one frame each: past the route cache's 512 entries the collector
    frees unreferenced ones (programs/kernel/route.c), so no frame is dropped for want
    of an entry (`rx_dropped_route`), nor at all by software."""
    m = run("netperf-hot", **{"run.duration_ms": 8.0, "code.flows": 2000}).metrics
    assert m["rx_offered"] > 600 and m["rx_delivered"] > 600
    assert m["rx_dropped_route"] == m["rx_dropped_software"] == 0
    out = m["rx_delivered"] + m["rx_dropped_nic"] + m["rx_dropped_software"] + m["rx_dropped_wire"] + m["rx_in_flight"]
    assert out == m["rx_offered"]
