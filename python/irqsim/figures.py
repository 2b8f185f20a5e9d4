"""``make figures``: each study's reproduction figure, redrawn into docs/figures.

- ``mt-interrupts-driver.png``: driver-layer send and receive throughput,
  single context vs multithreaded, the paper's bars beside the simulated ones;
- ``msi-latency-normalized.png``: ISR and tasklet latency normalized to MSI
  per delivery mechanism and profile, paper beside simulated;
- ``masking-break-even.png``: optimistic minus conventional cycles per null
  RPC against interrupt rate (:func:`irqsim.studies.optimistic_spl.figure`);
- ``nic-firmware-cores.png``: NIC firmware throughput against cores, frame-
  and task-level (:func:`irqsim.studies.nic_firmware.figure`).
- ``smt-hot-thread.png``: bandwidth against offered load, baseline and hot
  thread, and bandwidth and L2 misses against the pinned fraction of the L2
  (:func:`irqsim.studies.smt_hot_thread.figure`);
- ``livelock.png``: delivered against offered load, interrupt-driven vs the
  Linux bottom half vs NAPI (:func:`irqsim.studies.livelock.figure`);
- ``coalescing.png``: p50/p99 latency, interrupts and the CPU's busy share against rx-usecs
  (:func:`irqsim.studies.livelock.coalescing_figure`);
- ``rss.png``: forwarded frames and per-core load against RSS queues, uniform
  and skewed flows (:func:`irqsim.studies.livelock.rss_figure`);
- ``dim.png``: the rx-usecs DIM chooses over time under a changing load
  (:func:`irqsim.studies.livelock.dim_figure`).

Run as ``python -m irqsim.figures [DIR] [NAME ...]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from irqsim import studies
from irqsim.plot import pyplot, save_figure


def _paired_bars(ax, labels: list[str], paper: list[float], simulated: list[float]) -> None:
    xs = range(len(labels))
    ax.bar([x - 0.2 for x in xs], paper, width=0.4, label="paper", color="0.6")
    ax.bar([x + 0.2 for x in xs], simulated, width=0.4, label="irqsim", color="C0")
    for x, p, s in zip(xs, paper, simulated):
        ax.annotate(f"{100 * (s - p) / p:+.1f}%", (x + 0.2, s), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(list(xs), labels, fontsize=8)
    ax.legend(fontsize=8)


def mt_interrupts(path: Path) -> None:
    rows = [r for r in studies.reproduce("mt-interrupts") if r.experiment.startswith("driver-layer") and r.unit == "Mb/s"]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    labels = [r.experiment.replace("driver-layer ", "").replace(", 1500 B, ", "\n") for r in rows]
    _paired_bars(ax, labels, [r.paper for r in rows], [r.simulated for r in rows])
    ax.set_ylabel("throughput (Mb/s)")
    ax.set_title("AE32000 driver layer, 1,500 B frames: single context vs multithreaded")
    save_figure(fig, path)
    plt.close(fig)


def msi_latency(path: Path) -> None:
    rows = studies.reproduce("msi-latency")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4))
    labels = [f"{r.experiment.split(',')[0]} {r.metric.split()[0]}\n{r.experiment.split(': ')[1].replace(' vs MSI', '')}" for r in rows]
    _paired_bars(ax, labels, [r.paper for r in rows], [r.simulated for r in rows])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_ylabel("latency normalized to MSI (x)")
    ax.set_title("Interrupt latency: XT-PIC and IO-APIC relative to MSI (idle, UP)")
    save_figure(fig, path)
    plt.close(fig)


def masking(path: Path) -> None:
    from irqsim.studies import optimistic_spl

    optimistic_spl.figure(path)


def nic_firmware(path: Path) -> None:
    from irqsim.studies import nic_firmware

    nic_firmware.figure(path)


def nic_on_host(path: Path) -> None:
    from irqsim.studies import nic_host

    nic_host.figure(path)


def smt_hot_thread(path: Path) -> None:
    from irqsim.studies import smt_hot_thread as smt

    smt.figure(path)


def livelock(path: Path) -> None:
    from irqsim.studies import livelock

    livelock.figure(path)


def coalescing(path: Path) -> None:
    from irqsim.studies import livelock

    livelock.coalescing_figure(path)


def rss(path: Path) -> None:
    from irqsim.studies import livelock

    livelock.rss_figure(path)


def dim(path: Path) -> None:
    from irqsim.studies import livelock

    livelock.dim_figure(path)


FIGURES = {
    "mt-interrupts-driver.png": mt_interrupts,
    "msi-latency-normalized.png": msi_latency,
    "masking-break-even.png": masking,
    "nic-firmware-cores.png": nic_firmware,
    "nic-on-host.png": nic_on_host,
    "smt-hot-thread.png": smt_hot_thread,
    "livelock.png": livelock,
    "coalescing.png": coalescing,
    "rss.png": rss,
    "dim.png": dim,
}


def main(argv: list[str]) -> None:
    out = Path(argv[0]) if argv else Path("docs/figures")
    for name, draw in FIGURES.items():
        if len(argv) > 1 and name not in argv[1:]:
            continue
        draw(out / name)
        print(f"wrote {out / name}")


if __name__ == "__main__":
    main(sys.argv[1:])
