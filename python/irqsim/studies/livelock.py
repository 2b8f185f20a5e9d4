"""Receive livelock, and how NAPI avoids it.

Sources: J. C. Mogul and K. K. Ramakrishnan, "Eliminating receive livelock in
an interrupt-driven kernel", USENIX 1996 and ACM TOCS 15(3), 1997 (the
curve's shape: an interrupt-driven kernel's output rises to the maximum
loss-free receive rate, MLFRR, then falls toward zero; polling with a quota
and the interrupt off while polling holds it near the MLFRR); and the e1000
forwarding table of Linux's Documentation/networking/NAPI_HOWTO.txt (2002).

``reproduce()`` puts NAPI_HOWTO's forwarded frames, RX interrupts and
done and not-done polls beside the simulated ones (``livelock/e1000-router``:
the forwarding machine of ``livelock/e1000-forward`` with the router's
interrupt path and the 2002 driver's late acknowledgement, ``napi.late_ack``;
the forwarding cost per frame is calibrated on the 60-byte
row on the free wire; the rest are predictions). Each
frame's cost is drawn from ``e1000_spread()``: the spread measured on the code
kernel's NAT path (``measured_spread()``) with its transmit cleanup
(``measured_tx_share()``) paid in the table's batches (its Txint column), and
each row is the mean over ``SEEDS``; ``tables()`` gives the least and most.
``curve()`` sweeps the offered load on ``livelock/receiver`` for the
interrupt-driven path, Linux's pre-NAPI bottom half and NAPI; ``figure()``
draws it. ``knee()`` derives the interrupt-driven MLFRR and collapse point from a
run's bins and puts the analytic delivered rate beside simulated ones.
``coalescing()`` sweeps the NIC's ``rx_usecs`` on the forwarding
machine (p50 and p99 latency, interrupts, CPU); ``coalescing_figure()``
draws it. ``dim_over_time()`` runs
DIM (adaptive-rx) through a load that changes and returns the profiles it
chose; ``dim_figure()`` draws them. ``rss()`` runs 1-16 receive queues with a uniform and a skewed
flow mix (``livelock/rss``); ``rss_figure()`` draws throughput and per-core
load. Set ``IRQSIM_FINE=1`` for the finer sweep (more points, longer
runs). See docs/models/napi-coalescing.md.
"""

from __future__ import annotations

import functools
import os
import random
import tempfile
import tomllib
from pathlib import Path

import tomli_w

from irqsim import api
from irqsim.studies import Row

STUDY = "livelock"
TITLE = "Receive livelock: interrupt-driven vs NAPI (Mogul and Ramakrishnan 1996; NAPI_HOWTO e1000 table)"

# NAPI_HOWTO.txt, data "collected by Robert on Gigabit ethernet (e1000)", 1 M frames per row:
# size (B): (input frames/s, forwarded of 1 M, RX interrupts, polls that emptied the ring, polls that did not).
E1000 = {
    60: (890_000, 409_362, 17, 7, 6_823),
    128: (758_150, 464_364, 21, 10, 7_738),
    256: (445_632, 774_646, 42, 21, 12_906),
    512: (232_666, 994_445, 241_292, 241_192, 1_062),
    1024: (119_061, 1_000_003, 872_519, 872_511, 0),
    1440: (85_193, 1_000_003, 946_576, 946_569, 0),
}
FRAMES = 1_000_000
# The rows' machine: livelock/e1000-forward with the router's interrupt path
# (its IO-APIC on the P6 serial APIC bus, the 2002 NAPI e1000's register reads).
ROUTER = "livelock/e1000-router"

# The receive paths of the curve: label → irq_path.kind.
PATHS = {"interrupt-driven (ISR + 50-frame IP queue)": "mt", "Linux 2.6 bottom half (no NAPI)": "linux", "NAPI": "napi"}


def _fine() -> bool:
    return os.environ.get("IRQSIM_FINE", "") not in ("", "0")


# The spread of a frame's forwarding cost, as multiples of its mean: the 20
# equiprobable quantiles (2.5th to 97.5th percentile) of the cycles each of
# 1,000 steady frames takes after its interrupt on the code kernel's NAT path
# (net_rx_action and the TX-done cleanup; programs/kernel/measure.c on the
# core with the Pentium 4 caches, DMA by a second core), over their mean:
# cache misses on the frame, the skbs, 256 flows' connections and routes.
# ``measured_spread()`` re-measures it; docs/models/napi-coalescing.md.
E1000_SPREAD = (0.926, 0.93, 0.93, 0.93, 0.93, 0.933, 0.935, 0.939, 0.941, 0.945, 0.953, 1.042, 1.046, 1.046, 1.046, 1.052, 1.057, 1.068, 1.162, 1.188)
SPREAD_QUANTILES = 20
# Each row is the mean over these seeds (the spread's draws); Poisson arrivals
# (fine run) use them too.
SEEDS = (1, 2, 3, 4, 5)
FORWARD_CYCLES = 2742


# NAPI_HOWTO's "Txint" column ("transmit completion interrupts seen"), per row:
# the router freed the frames it sent in batches of forwarded / Txint.
E1000_TXINT = {60: 27_622, 128: 9_301, 256: 15_507, 512: 19_147, 1024: 19_258, 1440: 19_505}
# The transmit-done cleanup's share of a frame's cost on the code kernel's NAT
# path (kernel/measure-nat, steady frames: nic_isr_tx 397.3 of the 1,959.9
# cycles of net_rx_action and nic_isr_tx); ``measured_tx_share()``.
TX_SHARE = 0.203


@functools.cache
def _measure_nat() -> tuple[str, ...]:
    """kernel/measure-nat's output lines on the study's P4 caches, DMA by a second core (about 4 s)."""
    from irqsim import exec as mips
    from irqsim.studies.smt_hot_thread import P4_CACHES

    sets = [f"{k}={v}" for k, v in P4_CACHES.items()] + ["core.cores=2", "l2.shared=false"]
    return tuple(mips.run("kernel/measure-nat", sets)["stdout"].splitlines())


def measured_spread() -> tuple[float, ...]:
    """``E1000_SPREAD`` from a fresh run of kernel/measure-nat."""
    cycles = sorted(int(line.split("=")[1]) for line in _measure_nat() if line.startswith("frame_cycles_"))
    mean = sum(cycles) / len(cycles)
    n = SPREAD_QUANTILES
    return tuple(round(cycles[int(len(cycles) * (k + 0.5) / n)] / mean, 3) for k in range(n))


def measured_tx_share() -> float:
    """``TX_SHARE`` from a fresh run of kernel/measure-nat."""
    v = dict(line.split("=") for line in _measure_nat() if line.startswith("nat.steady."))
    tx, rx = (int(v[f"nat.steady.{a}.cycles"]) for a in ("nic_isr_tx", "net_rx_action"))
    return round(tx / (tx + rx), 3)


def tx_batch(size: int) -> int:
    """Frames freed per transmit-completion interrupt in the row (the table's forwarded / Txint)."""
    return round(E1000[size][1] / E1000_TXINT[size])


def e1000_spread(size: int, share: float = TX_SHARE, batch: int | None = None) -> list[float]:
    """Each frame's forwarding cost as multiples of its mean: the measured
    spread with the transmit cleanup (``share`` of it) taken out of every
    frame and paid for ``batch`` (``tx_batch(size)``) frames at once by one
    frame in that many, as a transmit-completion interrupt on the same CPU
    frees the frames sent since the last (drawn at random, as every spread is)."""
    b = batch or tx_batch(size)
    out: list[float] = []
    for s in E1000_SPREAD:
        rx = s * (1 - share)
        out += [round(rx, 4)] * (b - 1) + [round(rx + b * share, 4)]
    return out


def forward(size: int, extra: dict | None = None, seed: int = 1, spread: bool = True) -> dict[str, float]:
    """One row of the e1000 table: 1 M frames of ``size`` bytes at the row's
    input rate, each frame's cost drawn from ``e1000_spread(size)`` (``spread``)."""
    pps = E1000[size][0]
    # Metrics only: no per-frame latency records (16 MB a run; the metrics see every frame).
    sets = {"workload.packet_bytes": size, "workload.rate_per_s": float(pps), "run.duration_ms": FRAMES / pps * 1e3, "run.seed": seed, "stats.max_packet_records": 0}
    if spread:
        sets["driver.isr_rx_spread"] = e1000_spread(size)
    return api.run(ROUTER, {**sets, **(extra or {})}).metrics


@functools.cache
def over_seeds(size: int) -> tuple[dict[str, float], ...]:
    """The row's runs, one per seed (kept: the rows and their spread table
    read the same runs)."""
    return tuple(forward(size, seed=seed) for seed in SEEDS)


def mean(runs: tuple[dict[str, float], ...], key: str) -> float:
    return sum(m[key] for m in runs) / len(runs)


def e1000_variants() -> list[dict]:
    """Per row: RX interrupts and forwarded frames with fixed-rate arrivals
    (the rows), with Poisson arrivals (mean, least and most over SEEDS), and
    with the forwarding cost at 0.8x and 1.2x."""
    out = []
    for size, (pps, forwarded, rxint, _, _) in E1000.items():
        fixed = forward(size, spread=False)
        poisson = [forward(size, {"workload.process": "poisson"}, seed=seed, spread=False) for seed in SEEDS]
        cost = {f: forward(size, {"driver.isr_rx_done_cycles": round(FORWARD_CYCLES * f)}, spread=False) for f in (0.8, 1.2)}
        irqs = [m["interrupts"] for m in poisson]
        out.append(
            {
                "size": size,
                "rx_interrupts_paper": rxint,
                "fixed_rate": fixed["interrupts"],
                "poisson_mean": sum(irqs) / len(irqs),
                "poisson_least": min(irqs),
                "poisson_most": max(irqs),
                "cost_x0.8": cost[0.8]["interrupts"],
                "cost_x1.2": cost[1.2]["interrupts"],
                "forwarded_paper": forwarded,
                "forwarded_fixed": fixed["rx_delivered"],
                "forwarded_cost_x0.8": cost[0.8]["rx_delivered"],
                "forwarded_cost_x1.2": cost[1.2]["rx_delivered"],
            }
        )
    return out


def reproduce() -> list[Row]:
    rows = []
    for size, (pps, forwarded, rxint, done, ndone) in E1000.items():
        runs = over_seeds(size)
        what = f"e1000 forwarding, {size} B at {pps:,} frames/s"
        rows.append(Row(STUDY, what, "frames forwarded of 1 M", "frames", forwarded, mean(runs, "rx_delivered")))
        rows.append(Row(STUDY, what, "RX interrupts", "interrupts", rxint, mean(runs, "interrupts")))
        rows.append(Row(STUDY, what, "polls that emptied the ring", "polls", done, mean(runs, "napi_completes")))
        if ndone:
            rows.append(Row(STUDY, what, "polls that left frames in the ring", "polls", ndone, mean(runs, "napi_not_done")))
    return rows


def spread_table() -> list[dict]:
    """Per row: RX interrupts and forwarded frames, mean, least and most
    over ``SEEDS`` with the measured cost spread."""
    out = []
    for size, (_, forwarded, rxint, _, _) in E1000.items():
        runs = over_seeds(size)
        irqs, fwd = [m["interrupts"] for m in runs], [m["rx_delivered"] for m in runs]
        out.append(
            {
                "size": size,
                "rx_interrupts_paper": rxint,
                "rx_interrupts_mean": sum(irqs) / len(irqs),
                "rx_interrupts_least": min(irqs),
                "rx_interrupts_most": max(irqs),
                "forwarded_paper": forwarded,
                "forwarded_mean": sum(fwd) / len(fwd),
                "forwarded_least": min(fwd),
                "forwarded_most": max(fwd),
            }
        )
    return out


def rates(fine: bool) -> list[float]:
    """Offered loads of the sweep (frames/s): dense around the MLFRR."""
    low, high = (500, 2_500) if fine else (1_000, 5_000)
    return [float(r) for r in range(low, 20_000, low)] + [float(r) for r in range(20_000, 100_001, high)]


def curve(fine: bool | None = None) -> dict[str, list[tuple[float, float]]]:
    """Delivered against offered frames per second, for each receive path."""
    fine = _fine() if fine is None else fine
    ms = 500.0 if fine else 100.0
    out = {}
    for label, kind in PATHS.items():
        points = []
        for rate in rates(fine):
            m = api.run("livelock/receiver", {"irq_path.kind": kind, "workload.rate_per_s": rate, "run.duration_ms": ms}).metrics
            points.append((rate, m["rx_delivered"] / m["sim_seconds"]))
        out[label] = points
    return out


# The knee's derivation: per-frame costs from the bins of one run below the
# knee, then the analytic delivered rate beside simulated runs above it.
KNEE_PROBE = 5_000.0
KNEE_CHECKS = (12_000.0, 15_000.0, 20_000.0, 40_000.0, 60_000.0, 80_000.0)
KNEE_MS = 100.0


def knee(kind: str = "mt") -> dict:
    """Mogul and Ramakrishnan's MLFRR and collapse point for the
    interrupt-driven path (``kind`` "mt"), derived from the bins.

    Below the knee each frame takes one interrupt and one software
    interrupt. Per frame, the interrupt bin gives the ISR's work, the kernel
    bin the protocol's, and the overhead bin the interrupt's entry and
    register save/restore plus the software interrupt's entry (the
    scenario's ``cpu.swi_entry_cycles``, taken out). Above the knee the
    interrupt level takes ``a`` = ISR + entry per *offered* frame first and
    the protocol gets the rest: delivered = (C − a × offered) / protocol,
    with C the clock; the knee (MLFRR) is C / (a + protocol) and delivery
    reaches zero at C / a. ``points``: (offered, simulated, analytic) frames/s.
    """
    scenario = "livelock/receiver"
    cpu = tomllib.loads(api.scenario_path(scenario).read_text())["cpu"]
    clock = cpu["clock_mhz"] * 1e6
    probe = api.run(scenario, {"irq_path.kind": kind, "workload.rate_per_s": KNEE_PROBE, "run.duration_ms": KNEE_MS})
    m, b = probe.metrics, probe.bins.sum()
    offered, delivered = m["rx_offered"], m["rx_delivered"]
    isr = b["interrupt"] / offered
    entry = b["overhead"] / offered - cpu["swi_entry_cycles"]
    protocol = b["kernel"] / delivered
    a = isr + entry
    points = []
    for rate in KNEE_CHECKS:
        r = api.run(scenario, {"irq_path.kind": kind, "workload.rate_per_s": rate, "run.duration_ms": KNEE_MS}).metrics
        analytic = min(rate, max(0.0, (clock - a * rate) / protocol))
        points.append((rate, r["rx_delivered"] / r["sim_seconds"], float(analytic)))
    out = {"isr": isr, "entry": entry, "protocol": protocol, "per_offered": a, "mlfrr": clock / (a + protocol), "collapse": clock / a}
    return {**{k: float(v) for k, v in out.items()}, "points": points}


def knee_table() -> list[dict]:
    k = knee()
    return [
        {
            "offered_per_s": x,
            "simulated_per_s": y,
            "analytic_per_s": z,
            "error": (y - z) / z if z else float("nan"),
            "a_cycles_per_offered": k["per_offered"],
            "protocol_cycles": k["protocol"],
            "mlfrr_per_s": k["mlfrr"],
            "collapse_per_s": k["collapse"],
        }
        for x, y, z in k["points"]
    ]


def tables() -> list[tuple[str, list[dict]]]:
    """Extra tables ``irqsim reproduce`` prints after the rows: the e1000
    rows' spread over seeds; the rows under other inputs (48 runs of 1 M
    frames) only in the fine run (``IRQSIM_FINE=1``), to keep the default
    reproduction quick."""
    knee = ("livelock: the interrupt-driven knee from the bins (a: interrupt-level cycles per offered frame; delivered = (C - a x offered) / protocol)", knee_table())
    seeds = ("livelock: e1000 RX interrupts and forwarded frames over seeds 1-5 (each frame's cost drawn from the spread measured on the code kernel's NAT path, its transmit cleanup paid in the table's Txint batches)", spread_table())
    if not _fine():
        return [seeds, knee]
    variants = ("livelock: e1000 RX interrupts and forwarded frames under other inputs (every frame 2,742 cycles: fixed-rate and Poisson arrivals over seeds 1-5; the forwarding cost x0.8, x1.2)", e1000_variants())
    return [seeds, variants, knee]


def figure(path: Path) -> None:
    from irqsim.plot import pyplot, save_figure

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for (label, points), style in zip(curve().items(), ("o-", "s--", "^-")):
        ax.plot([x / 1e3 for x, _ in points], [y / 1e3 for _, y in points], style, label=label, markersize=4)
    ax.set_xlabel("offered load (thousand frames/s)")
    ax.set_ylabel("delivered to the application (thousand frames/s)")
    ax.set_title("Receive livelock: 512 B UDP frames, AE32000 at 200 MHz (livelock/receiver)")
    ax.legend(fontsize=8)
    ax.set_ylim(bottom=0)
    save_figure(fig, path)
    plt.close(fig)


# Receive-interrupt coalescing: rx-usecs values swept (0: rx-frames 1, an interrupt per frame).
RX_USECS = (0, 4, 8, 16, 32, 64, 128, 256)
# Offered loads (frames/s) of 128-byte frames on the forwarding machine: light, and about 70% of its
# capacity (364 k frames/s; the gigabit link carries about 1 M).
COALESCING_LOADS = (50_000.0, 250_000.0)


def coalescing(fine: bool | None = None) -> list[dict[str, float]]:
    """p50 and p99 latency (µs, arrival to forwarded), interrupts per second
    and the CPU's busy share against ``rx_usecs``, Poisson arrivals, NAPI."""
    fine = _fine() if fine is None else fine
    ms = 1000.0 if fine else 200.0
    out = []
    for load in COALESCING_LOADS:
        for usecs in RX_USECS:
            coalesce = {"coalesce.rx_usecs": usecs, "coalesce.rx_frames": 0 if usecs else 1}
            sets = {"workload.process": "poisson", "workload.packet_bytes": 128, "workload.rate_per_s": load, "run.duration_ms": ms, **coalesce}
            r = api.run("livelock/e1000-forward", sets)
            m, b = r.metrics, r.bins.sum()
            busy = b["interrupt"] + b["bottom_half"] + b["overhead"] + b["kernel"]
            out.append(
                {
                    "load_per_s": load,
                    "rx_usecs": usecs,
                    "p50_us": m["latency_p50_us"],
                    "p99_us": m["latency_p99_us"],
                    "interrupts_per_s": m["interrupts"] / m["sim_seconds"],
                    "cpu_share": busy / m["sim_cycles"],
                    "delivered_per_s": m["rx_delivered"] / m["sim_seconds"],
                }
            )
    return out


def coalescing_figure(path: Path) -> None:
    from irqsim.plot import pyplot, save_figure

    rows = coalescing()
    plt = pyplot()
    fig, (lat, irq, cpu) = plt.subplots(1, 3, figsize=(14, 4))
    for load, color in zip(COALESCING_LOADS, ("C0", "C1")):
        sel = [r for r in rows if r["load_per_s"] == load]
        xs = [max(r["rx_usecs"], 1) for r in sel]
        lat.plot(xs, [r["p50_us"] for r in sel], "o-", color=color, label=f"p50, {load / 1e3:.0f} k frames/s")
        lat.plot(xs, [r["p99_us"] for r in sel], "s--", color=color, label=f"p99, {load / 1e3:.0f} k frames/s")
        irq.plot(xs, [r["interrupts_per_s"] / 1e3 for r in sel], "o-", color=color, label=f"{load / 1e3:.0f} k frames/s")
        cpu.plot(xs, [100 * r["cpu_share"] for r in sel], "o-", color=color, label=f"{load / 1e3:.0f} k frames/s")
    # Ticks at the swept values only; rx-usecs 0 (rx-frames 1) is drawn at 1.
    ticks = sorted({max(u, 1) for u in RX_USECS})
    for ax in (lat, irq, cpu):
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, ["0" if t == 1 and 0 in RX_USECS else str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel("rx-usecs (µs; 0 = rx-frames 1, no delay)")
        ax.legend(fontsize=7)
    lat.set_ylabel("latency, arrival to forwarded (µs)")
    irq.set_ylabel("receive interrupts (thousand/s)")
    cpu.set_ylabel("CPU busy: interrupt, softirq, overhead, kernel (%)")
    cpu.set_ylim(0, 105)
    fig.suptitle("Interrupt coalescing on the forwarding machine (NAPI, 128 B, Poisson arrivals)")
    save_figure(fig, path)
    plt.close(fig)


RSS_QUEUES = (1, 2, 4, 8, 16)
# Flow mixes: uniform, and Zipf with exponent 1 over the 1,024 flows.
RSS_SKEWS = {"uniform": 0.0, "Zipf 1.0": 1.0}


def rss(fine: bool | None = None) -> list[dict[str, float | str]]:
    """Forwarded frames/s and per-core load (share of the core's cycles
    spent forwarding: busiest core and mean over the queues' cores) for 1-16
    queues and each flow mix."""
    fine = _fine() if fine is None else fine
    out = []
    for mix, skew in RSS_SKEWS.items():
        for queues in RSS_QUEUES:
            r = api.run("livelock/rss", {"rss.queues": queues, "rss.flow_skew": skew, "run.duration_ms": 100.0 if fine else 20.0})
            m, b = r.metrics, r.bins
            load = ((b["interrupt"] + b["bottom_half"] + b["overhead"]) / m["sim_cycles"]).tolist()[:queues]
            out.append(
                {
                    "mix": mix,
                    "queues": queues,
                    "forwarded_per_s": m["rx_delivered"] / m["sim_seconds"],
                    "offered_per_s": m["rx_offered"] / m["sim_seconds"],
                    "busiest_core": max(load),
                    "mean_core": sum(load) / queues,
                    "busiest_queue_share": m["rss_busiest_queue_share"],
                }
            )
    return out


# RPS on one queue: the receiving machine's stack on, a 1,000-cycle driver part.
RPS_SETS = {"rss.queues": 1, "stack.enabled": True, "driver.isr_rx_done_cycles": 1000, "workload.rate_per_s": 400_000.0}


def rps(fine: bool | None = None) -> list[dict[str, float]]:
    """One RSS queue with RPS over 0-16 CPUs: delivered frames/s, the share
    handed to another CPU, and the busiest CPU's load."""
    fine = _fine() if fine is None else fine
    out = []
    for cpus in (0, 2, 4, 8, 16):
        r = api.run("livelock/rss", {**RPS_SETS, "rss.rps_cpus": cpus, "run.duration_ms": 50.0 if fine else 10.0})
        m, b = r.metrics, r.bins
        load = ((b["interrupt"] + b["bottom_half"] + b["overhead"]) / m["sim_cycles"]).tolist()
        out.append(
            {
                "rps_cpus": cpus,
                "delivered_per_s": m["rx_delivered"] / m["sim_seconds"],
                "remote_share": m["rps_remote_frames"] / max(m["rx_delivered"], 1),
                "busiest_core": max(load),
            }
        )
    return out


def rss_figure(path: Path) -> None:
    from irqsim.plot import pyplot, save_figure

    rows = rss()
    plt = pyplot()
    fig, (tput, load) = plt.subplots(1, 2, figsize=(10, 4))
    for mix, color in zip(RSS_SKEWS, ("C0", "C3")):
        sel = [r for r in rows if r["mix"] == mix]
        qs = [r["queues"] for r in sel]
        tput.plot(qs, [r["forwarded_per_s"] / 1e6 for r in sel], "o-", color=color, label=mix)
        load.plot(qs, [100 * r["busiest_core"] for r in sel], "o-", color=color, label=f"{mix}: busiest core")
        load.plot(qs, [100 * r["mean_core"] for r in sel], "s--", color=color, label=f"{mix}: mean of the queues' cores")
    tput.axhline(sel[0]["offered_per_s"] / 1e6, color="0.5", linewidth=0.8, label="offered")
    for ax in (tput, load):
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(RSS_QUEUES), [str(q) for q in RSS_QUEUES])
        ax.set_xlabel("receive queues (one MSI-X vector and core each)")
        ax.legend(fontsize=7)
    tput.set_ylabel("forwarded (M frames/s)")
    load.set_ylabel("core busy forwarding (%)")
    fig.suptitle("RSS on the forwarding machine: 64 B frames, 1,024 flows, 3 M frames/s offered")
    save_figure(fig, path)
    plt.close(fig)


# Phases of the changing load for DIM: (duration ms, 128-byte frames/s), Poisson.
DIM_PHASES = ((60.0, 20_000.0), (60.0, 300_000.0), (60.0, 60_000.0), (60.0, 300_000.0))


def dim_over_time(mode: str = "eqe", seed: int = 1) -> dict:
    """DIM on the forwarding machine through ``DIM_PHASES``: the profile it
    chose over time (``changes``: (ms, profile, usec)), and per phase the
    offered rate, interrupts/s and p50/p99 latency (µs)."""
    machine = tomllib.loads(api.scenario_path("livelock/e1000-forward").read_text())
    rng = random.Random(seed)
    clock = machine["cpu"]["clock_mhz"]
    events, t0 = [], 0.0
    for ms, rate in DIM_PHASES:
        t = t0 + rng.expovariate(rate) * 1e3
        while t < t0 + ms:
            events.append({"at_cycle": round(t * 1e3 * clock), "action": "receive", "bytes": 128})
            t += rng.expovariate(rate) * 1e3
        t0 += ms
    machine["run"]["duration_ms"] = t0
    machine["workload"] = {"kind": "script", "events": events}
    machine["coalesce"] = {"adaptive_rx": True, "dim_mode": mode}
    machine["stats"] = {"timeline_max_items": 1_000_000}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "dim.toml"
        path.write_text(tomli_w.dumps(machine))
        r = api.run(path, timeline=True)
    profiles = {"eqe": ((1, 256), (8, 256), (64, 256), (128, 256), (256, 256)), "cqe": ((2, 256), (8, 128), (16, 64), (32, 64), (64, 64))}[mode]
    marks = [e for e in r.chrome_trace()["traceEvents"] if e.get("ph") == "i" and e["name"].startswith("DIM profile")]
    changes = [(0.0, 1, profiles[1][0])] + [(e["ts"] / 1e3, int(e["name"][-1]), profiles[int(e["name"][-1])][0]) for e in marks]
    irq_ms = [e["ts"] / 1e3 for e in r.chrome_trace()["traceEvents"] if e.get("ph") == "i" and e["name"] == "NIC interrupt"]
    lat = r.latencies
    phases, t0 = [], 0.0
    for ms, rate in DIM_PHASES:
        sel = lat[(lat.arrival_us >= t0 * 1e3) & (lat.arrival_us < (t0 + ms) * 1e3)].latency_us
        irqs = sum(1 for x in irq_ms if t0 <= x < t0 + ms)
        phases.append({"from_ms": t0, "rate_per_s": rate, "interrupts_per_s": irqs / ms * 1e3, "p50_us": float(sel.quantile(0.5)), "p99_us": float(sel.quantile(0.99))})
        t0 += ms
    return {"changes": changes, "phases": phases, "decisions": r.metrics["dim_decisions"]}


def dim_figure(path: Path) -> None:
    from irqsim.plot import pyplot, save_figure

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    for mode, color in (("eqe", "C0"), ("cqe", "C2")):
        d = dim_over_time(mode)
        xs = [c[0] for c in d["changes"]] + [sum(ms for ms, _ in DIM_PHASES)]
        ys = [c[2] for c in d["changes"]]
        ax.step(xs, ys + ys[-1:], where="post", color=color, label=f"DIM {mode.upper()}: rx-usecs chosen")
    ax.set_yscale("log", base=2)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("rx-usecs (µs)")
    load = ax.twinx()
    t0 = 0.0
    for i, (ms, rate) in enumerate(DIM_PHASES):
        load.plot([t0, t0 + ms], [rate / 1e3, rate / 1e3], color="0.5", linewidth=2, label="offered load (right axis)" if i == 0 else None)
        t0 += ms
    load.set_ylabel("offered load (thousand frames/s, grey)")
    load.set_ylim(bottom=0)
    # Below the axes: inside, the legend covered a load phase.
    handles = ax.get_legend_handles_labels()[0] + load.get_legend_handles_labels()[0]
    ax.legend(handles=handles, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3, frameon=False)
    ax.set_title("DIM's choices on the forwarding machine under a changing load (128 B, Poisson)")
    save_figure(fig, path)
    plt.close(fig)
