"""SMT hot thread and cache pinning for interrupts (Gibeling and Schultz, CS252 2005).

Paper: "Low Overhead Interrupt Handling with SMT" (shared/seeds/
smt-hot-thread-cache-pinning.txt). The kernel is C (programs/kernel/) run
on the machine's SMT core (``[code]`` scenarios under
scenarios/smt-hot-thread/); footprints are in smt_footprint.py. Inputs,
method and results: docs/models/smt-hot-thread.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from irqsim import api
from irqsim.studies import Row
from irqsim.studies.smt_footprint import KERNELS, Elf

STUDY = "smt-hot-thread"
TITLE = "SMT hot thread and cache pinning for interrupts (Pentium 4 class, in-order SMT)"

# The Northwood Pentium 4 (CPUID model 2) in the mips crate's cache keys.
# Intel, "IA-32 Intel Architecture Optimization Reference Manual" (248966),
# Table 1-1 and its notes; derivations in docs/models/smt-hot-thread.md.
CLOCK_MHZ = 2400.0  # a 2.4 GHz Northwood on the 400 MHz (100 MHz x 4) system bus
BUS_CYCLE = 24  # core cycles per 100 MHz bus clock at 2.4 GHz
P4_CACHES = {
    "memory.model": "caches",
    # Trace cache: 12K micro-ops, 8 ways; taken as 12K MIPS instructions
    # (48 KiB) in 64 B lines: 12 ways x 64 sets (sets must be a power of two).
    "l1i.size_bytes": 48 * 1024,
    "l1i.ways": 12,
    "l1i.line_bytes": 64,
    "l1i.hit_cycles": 0,
    # L1 data: 8 KB, 4 ways, 64 B lines, 2 clocks (integer): the pipeline's
    # 2-cycle load use already charges it.
    "l1d.size_bytes": 8 * 1024,
    "l1d.ways": 4,
    "l1d.line_bytes": 64,
    "l1d.hit_cycles": 0,
    # L2: 512 KB, 8 ways, 64 B lines in 128 B sectors (a read miss fetches
    # both lines: modelled as 128 B lines), 7 clocks.
    "l2.size_bytes": 512 * 1024,
    "l2.ways": 8,
    "l2.line_bytes": 128,
    "l2.hit_cycles": 7,
    # "On the order of 12 processor cycles to get to the bus and back ...
    # and 6-12 bus cycles to access memory": 12 + 9 bus cycles.
    "memory.latency_cycles": 12 + 9 * BUS_CYCLE,
}


# The core's settings of the hot-thread and baseline configurations (as in the scenarios).
HOT_CORE = ["core.threads=2", "core.interrupt_thread=1"]
BASE_CORE = ["core.threads=2"]
HOT_THREAD, APP_THREAD = 1, 0

# A sender fast enough never to limit (the frame rate is the workload's), and
# the offered loads of the bandwidth sweeps, frames/s of 1,514 bytes.
FAST_LINK = {"nic.link_mbps": 100_000.0}
RATES = {
    "netperf": [100e3, 200e3, *(k * 50e3 for k in range(6, 21)), 1.2e6, 1.6e6, 2.0e6],
    "nat": [0.5e6, 1.0e6, *(k * 100e3 for k in range(14, 23)), 2.6e6, 3.0e6, 4.0e6],
}
DURATION_MS = 5.0
FRACTIONS = (0.125, 0.25, 0.5, 0.75)


def core_list(hot: bool, pins: list[str] = ()) -> list[str]:
    return (HOT_CORE if hot else BASE_CORE) + [f"{k}={v}" for k, v in P4_CACHES.items()] + list(pins)


@dataclass(frozen=True)
class Point:
    """One run: the offered load and what came out."""

    rate: float
    delivered_mbps: float
    l2_misses: int
    metrics: dict


def run_point(workload: str, hot: bool, rate: float, pins: list[str] = (), duration_ms: float | None = None, extra: dict | None = None) -> Point:
    """One run of a study scenario; `pins` (core settings, appended: later ones
    win) and `extra` (scenario overrides) change the machine."""
    cfg = "hot" if hot else "baseline"
    duration_ms = duration_ms or DURATION_MS
    over = {**FAST_LINK, "workload.rate_per_s": rate, "run.duration_ms": duration_ms, "code.core": core_list(hot, pins), **(extra or {})}
    m = api.run(f"{STUDY}/{workload}-{cfg}", over).metrics
    mbps = m["rx_throughput_mbps"] if workload == "netperf" else m["rx_forwarded"] * 1514 * 8 / (duration_ms * 1e3)
    l2 = sum(m[f"code_{b}_l2_misses"] for b in ("user", "kernel", "interrupt", "bottom_half"))
    return Point(rate, mbps, l2, m)


def sweep(
    workload: str, hot: bool, rates: list[float] | None = None, duration_ms: float | None = None, extra: dict | None = None, settings: list[str] = ()
) -> list[Point]:
    return [run_point(workload, hot, r, settings, duration_ms, extra) for r in rates or RATES[workload]]


def peak(points: list[Point]) -> Point:
    return max(points, key=lambda p: p.delivered_mbps)


# What range pinning locks, in order, until the pinned fraction of the cache
# is used: the rings (the seed's D-cache range pinning), their software side
# first, then the descriptors (the NIC writes those: a DMA write drops a
# pinned line with its data); for the L2 then the rest of the kernel's
# tables (the sk_buff heads' slab pages first), the slab allocator's own
# data, and last the data objects' pages (DMA-written too).
RINGS = {"netperf": ("rx_skb", "rx", "rx_desc"), "nat": ("rx_skb", "tx_skb", "rx", "tx", "rx_desc", "tx_desc")}
TABLES = ("head_pages", "socks", "queues", "udp_hash", "ct_hash", "conns", "rt_hash", "rtables", "netdevs", "jiffies", "kconfig",
          "kmem_caches", "arrays", "mem_map", "off_slab", "data_pages")


# Kernels beside the scenarios' (``variant`` arguments below), as (ELF suffix,
# code.poke): with Linux 2.6.11's scheduler (programs/kernel/sched.c;
# docs/models/smt-hot-thread.md, "The scheduler"); its control, the same
# ELF with every scheduler entry returning at once ("hooks"); and the
# scenarios' kernel with its code moved K x 16 bytes and its data K x 64
# ("padK", programs/kernel/pad.c), probes of how much the rows move with layout.
KERNEL_VARIANTS = {
    "sched": ("sched", []),
    "hooks": ("sched", ["sched_hooks_only=1"]),
    **{f"pad{k}": (f"pad{k}", []) for k in (1, 2, 3)},
}
SCHED_TABLES = (*TABLES[:-1], "rqs", "tasks", "sock0", TABLES[-1])


def kernel_elf(workload: str, variant: str = "") -> Path:
    """The ELF of a kernel variant ("" the scenarios')."""
    base = KERNELS[workload]
    return base.with_name(f"{base.stem}-{KERNEL_VARIANTS[variant][0]}.elf") if variant else base


def kernel(workload: str, variant: str) -> dict:
    """The scenario overrides that run a kernel variant ("" none)."""
    if not variant:
        return {}
    return {"code.program": str(kernel_elf(workload, variant)), "code.poke": KERNEL_VARIANTS[variant][1]}


def pin_ranges(workload: str, budget: int, names: tuple[str, ...], variant: str = "") -> list[str]:
    """``ADDR+LEN`` ranges of the named objects, in order, up to ``budget`` bytes."""
    elf = Elf(kernel_elf(workload, variant))
    out = []
    for name in names:
        s = elf.symbols[name]
        take = min(s.size, budget)
        if take > 0:
            out.append(f"{s.addr:#x}+{take}")
            budget -= take
    return out


def pins(workload: str, kind: str, fraction: float, variant: str = "") -> list[str]:
    """The core settings that pin `fraction` of a cache for the hot thread:
    ``l1i`` trace pinning of the ISR and bottom-half code into that share of
    the ways; ``l1d`` range pinning of the rings and descriptors; ``l2``
    range pinning of the rings, then the kernel's tables."""
    size = P4_CACHES[f"{kind}.size_bytes"]
    if kind == "l1i":
        ways = max(1, round(fraction * P4_CACHES["l1i.ways"]))
        return [f"l1i.trace_threads={HOT_THREAD}", f"l1i.way_masks={HOT_THREAD}:{(1 << ways) - 1:#x}"]
    names = RINGS[workload] + ((SCHED_TABLES if variant in ("sched", "hooks") else TABLES) if kind == "l2" else ())
    return [f"{kind}.lock_range={','.join(pin_ranges(workload, int(fraction * size), names, variant))}"]


@cache
def bandwidth(workload: str, hot: bool, variant: str = "") -> tuple[Point, ...]:
    """The delivered bandwidth over the offered loads (cached for the figure)."""
    return tuple(sweep(workload, hot, extra=kernel(workload, variant)))


# A baseline whose NIC interrupts are spread over both threads, as irqbalance
# spreads a 2.6 kernel's IRQs over logical CPUs: NIC 1's on thread 1.
SPREAD = {"code.tx_irq_thread": 1}


@cache
def spread_baseline(workload: str, variant: str = "") -> tuple[Point, ...]:
    return tuple(sweep(workload, False, extra={**SPREAD, **kernel(workload, variant)}))


@cache
def pinned(workload: str, kind: str, fraction: float, variant: str = "") -> Point:
    """The hot-thread configuration with `fraction` of a cache pinned, at the
    offered load where the unpinned hot thread's bandwidth peaks (with
    nothing pinned, that sweep's own run)."""
    top = peak(list(bandwidth(workload, True, variant)))
    return run_point(workload, True, top.rate, pins(workload, kind, fraction, variant), extra=kernel(workload, variant)) if fraction else top


# An address range no code, stack or DMA of the study's kernels touches
# (their data ends below 0xa0_0000, the stacks start at 0x7ff0_0000).
UNTOUCHED = 0x4000_0000


def pin_controls(workload: str = "nat", fraction: float = 0.5) -> dict[str, Point]:
    """The hot thread at its unpinned peak load with ``fraction`` of the L2
    locked in three ways: the study's order (rings, the heads' slab pages,
    the tables, ...); a range nothing touches (the capacity pinning takes
    from everything else, protecting nothing); and the order without the
    heads' slab pages (rings, then the tables). With nothing pinned as
    "none". What the NAT's L2 row turns on (docs/models/smt-hot-thread.md)."""
    top = peak(list(bandwidth(workload, True)))
    budget = int(fraction * P4_CACHES["l2.size_bytes"])
    tables = RINGS[workload] + tuple(t for t in TABLES if t != "head_pages")
    locks = {
        "study's order": pins(workload, "l2", fraction),
        "untouched range": [f"l2.lock_range={UNTOUCHED:#x}+{budget}"],
        "order without the head pages": [f"l2.lock_range={','.join(pin_ranges(workload, budget, tables))}"],
    }
    return {"none": top, **{name: run_point(workload, True, top.rate, p) for name, p in locks.items()}}


# What the netperf gain depends on, one input changed at a time:
# (scenario overrides, settings added to the core's).
VARIANTS = {
    "as in the scenarios": ({}, []),
    "register reads free (code.mmio_read_cycles = 0)": ({"code.mmio_read_cycles": 0}, []),
    "no save/restore cost (cpu.save_restore_cycles = 0)": ({"cpu.save_restore_cycles": 0}, []),
    "memory at 100 cycles (memory.latency_cycles = 100)": ({}, ["memory.latency_cycles=100"]),
}


def sensitivity(variants: dict | None = None) -> list[tuple[str, float, float, float]]:
    """(variant, baseline peak Mb/s, hot-thread peak Mb/s, gain %) for
    netperf, over ``variants`` (``VARIANTS``; ``PLUS_MINUS_20`` for ±20%)."""
    out = []
    for name, (extra, core) in (variants or VARIANTS).items():
        base, hot = (peak(sweep("netperf", h, extra=extra, settings=core)).delivered_mbps for h in (False, True))
        out.append((name, base, hot, change(hot, base)))
    return out


def nat_sensitivity(variants: dict | None = None) -> list[tuple[str, float, float, float]]:
    """(variant, hot vs baseline %, hot vs the spread baseline %, L2 cut at
    half the L2 pinned %): the NAT's three rows over ``variants`` (as
    ``sensitivity``), each from its own sweeps."""
    out = []
    for name, (extra, core) in (variants or VARIANTS).items():
        base, hot, spread = (peak(sweep("nat", h, extra={**extra, **x}, settings=core)) for h, x in ((False, {}), (True, {}), (False, SPREAD)))
        half = run_point("nat", True, hot.rate, [*core, *pins("nat", "l2", 0.5)], extra=extra)
        cut = -change(l2_per_frame(half, "nat"), l2_per_frame(hot, "nat"))
        out.append((name, change(hot.delivered_mbps, base.delivered_mbps), change(hot.delivered_mbps, spread.delivered_mbps), cut))
    return out


# Each assumed input of the netperf gain at 0.8x and 1.2x (issue 25): the
# memory latency (228 cycles), the register read (228), the save/restore (78).
PLUS_MINUS_20 = {
    **{f"memory.latency_cycles x{f}": ({}, [f"memory.latency_cycles={round(228 * f)}"]) for f in (0.8, 1.2)},
    **{f"code.mmio_read_cycles x{f}": ({"code.mmio_read_cycles": round(228 * f)}, []) for f in (0.8, 1.2)},
    **{f"cpu.save_restore_cycles x{f}": ({"cpu.save_restore_cycles": round(78 * f)}, []) for f in (0.8, 1.2)},
}


def change(new: float, old: float) -> float:
    return 100.0 * (new / old - 1.0)


def l2_per_frame(p: Point, workload: str) -> float:
    frames = p.metrics["rx_delivered"] if workload == "netperf" else p.metrics["rx_forwarded"]
    return p.l2_misses / frames


def reproduce(variant: str = "") -> list[Row]:
    """The study's rows; with ``variant`` (a ``KERNEL_VARIANTS`` name), on that kernel."""
    rows = []
    for workload in ("netperf", "nat"):
        base, hot = peak(list(bandwidth(workload, False, variant))), peak(list(bandwidth(workload, True, variant)))
        gain = change(hot.delivered_mbps, base.delivered_mbps)
        name = "netperf UDP flood" if workload == "netperf" else "NAT forwarding"
        if workload == "netperf":
            rows.append(Row(STUDY, f"{name}: peak bandwidth, hot thread vs baseline", "gain", "%", 30.0, gain))
        else:
            rows.append(Row(STUDY, f"{name}: peak bandwidth, hot thread vs baseline", "change", "%", float("nan"), gain, "lower"))
            spread = peak(list(spread_baseline(workload, variant)))
            rows.append(
                Row(STUDY, f"{name}: peak bandwidth, hot thread vs a baseline with NIC 1's interrupts on the other thread", "change", "%", float("nan"),
                    change(hot.delivered_mbps, spread.delivered_mbps), "lower")
            )
        unpinned = pinned(workload, "l2", 0.0, variant)
        half = pinned(workload, "l2", 0.5, variant)
        if workload == "nat":
            cut = -change(l2_per_frame(half, workload), l2_per_frame(unpinned, workload))
            rows.append(Row(STUDY, f"{name}: L2 misses per frame, half of the L2 pinned vs none", "reduction", "%", 30.0, cut))
        else:
            rows.append(
                Row(STUDY, f"{name}: bandwidth, half of the L2 pinned vs none", "change", "%", float("nan"), change(half.delivered_mbps, unpinned.delivered_mbps), "same")
            )
        for kind, label in (("l1i", "I-cache trace pinning"), ("l1d", "D-cache range pinning")):
            p = pinned(workload, kind, 0.5, variant)
            rows.append(Row(STUDY, f"{name}: bandwidth, {label} of half vs none", "change", "%", float("nan"), change(p.delivered_mbps, unpinned.delivered_mbps), "lower"))
    # Where the hot thread does not pay (Linux Documentation/networking/scaling.rst: "no benefit").
    line_rate = 1e9 / (1514 * 8)
    at_line = [run_point("netperf", hot, line_rate, duration_ms=20.0, extra=kernel("netperf", variant)) for hot in (False, True)]
    rows.append(
        Row(STUDY, "netperf at the 1 Gb/s line rate (CPU not saturated): hot thread vs baseline", "change", "%", float("nan"),
            change(at_line[1].delivered_mbps, at_line[0].delivered_mbps), "same")
    )
    return rows


def scheduler_rows(variant: str = "sched") -> list[Row]:
    """Every row on the kernel with 2.6.11's scheduler (a non-default
    option), or on its control (``variant`` "hooks")."""
    return reproduce(variant=variant)


def layout_rows() -> dict[str, list[Row]]:
    """Every row on the scenarios' kernel and on its three layout probes."""
    return {v: reproduce(variant=v) for v in ("", "pad1", "pad2", "pad3")}


def figure(path: Path, workloads: tuple[str, ...] = ("netperf", "nat")) -> None:
    """Per workload: delivered bandwidth against offered load, baseline and
    hot thread; then bandwidth and L2 misses per frame against the pinned
    fraction of the L2 (hot thread, at its peak load)."""
    from irqsim.plot import pyplot, save_figure

    plt = pyplot()
    fig, axes = plt.subplots(len(workloads), 2, figsize=(11, 3.6 * len(workloads)), squeeze=False)
    for (left, right), w in zip(axes, workloads):
        curves = {hot: bandwidth(w, hot) for hot in (False, True)}
        same = [p.delivered_mbps for p in curves[False]] == [p.delivered_mbps for p in curves[True]]
        for hot, style in ((False, "o-"), (True, "s--")):
            pts = curves[hot]
            # Where the two coincide, the hot thread's hollow squares show the baseline beneath.
            label = ("hot thread" if hot else "baseline") + (" (identical)" if same else "")
            left.plot([p.rate / 1e3 for p in pts], [p.delivered_mbps for p in pts], style, label=label, markerfacecolor="none" if hot else None, markersize=8 if hot else 5)
        # The paper's claims, drawn against our baseline (its absolute rates are not ours).
        base_peak = max(p.delivered_mbps for p in curves[False])
        if w == "netperf":
            left.axhline(1.3 * base_peak, color="0.4", linestyle=":", label="paper: hot thread peak = baseline peak +30%")
            left.set_ylim(0, 1.9 * base_peak)  # room above the curves for the legend
        else:
            left.text(0.98, 0.04, "paper: the hot thread's peak is lower", transform=left.transAxes, ha="right", fontsize=8, color="0.3")
        left.set_xlabel(f"offered load (thousand 1,514 B frames/s), {w}")
        left.set_ylabel("delivered (Mb/s)")
        left.legend(fontsize=8, loc="upper right" if w == "netperf" else "upper left")
        left.grid(alpha=0.3)
        fractions = (0.0, *FRACTIONS)
        pts = [pinned(w, "l2", f) for f in fractions]
        right.plot(fractions, [p.delivered_mbps for p in pts], "o-", color="C0")
        right.set_xlabel(f"pinned fraction of the L2, {w} (hot thread)")
        right.set_ylabel("delivered (Mb/s)", color="C0")
        twin = right.twinx()
        misses = [l2_per_frame(p, w) for p in pts]
        twin.plot(fractions, misses, "s--", color="C3")
        twin.set_ylabel("L2 misses per frame", color="C3")
        right.set_ylim(0, 1.1 * max(p.delivered_mbps for p in pts))
        if w == "nat":
            twin.plot([0.5], [0.7 * misses[0]], "D", color="0.4", label="paper: -30% L2 misses at half pinned")
            twin.legend(fontsize=8, loc="lower right")
        else:
            right.text(0.98, 0.04, "paper: bandwidth unchanged with half the L2 pinned", transform=right.transAxes, ha="right", fontsize=8, color="0.3")
        twin.set_ylim(0, 2 * max(misses))  # from zero, the misses drawn at mid-height
        right.grid(alpha=0.3)
    fig.suptitle("SMT hot thread and L2 range pinning, Pentium 4 class in-order SMT core")
    save_figure(fig, path)
    plt.close(fig)
