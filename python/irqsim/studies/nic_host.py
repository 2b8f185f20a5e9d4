"""Beyond the nic-firmware paper: the programmable NIC in front of a host.

The paper measured the firmware against an abstract host that costs
nothing. On irqsim's machine the NIC is a device like any other, so this
experiment asks what the host pays for it and what its application keeps:
10 Gb/s of 1518-byte and of 64-byte frames at line rate, the programmable
NIC (six cores at 166 MHz, frame-level firmware, Willmann et al. 2005)
against the e1000-like NIC, the host on the NAPI path over MSI-X with one
hardware thread, or with a hot thread (a second thread that takes the NIC's
interrupts and polls, the application on the first).

Inputs: ``compose/rx-firmware`` and its counterpart ``compose/rx-e1000``
(NAPI's default weight 64 and budget 300; the per-frame driver cost of
livelock/e1000-forward, 2,742 cycles, calibrated there on NAPI_HOWTO's
60-byte row), run here on a host clocked at 3 GHz (an assumption: the
e1000 host's 1 GHz would not take 1518-byte frames at line rate, so every
row would only measure its saturation), with a CPU-bound application on
thread 0 that runs whenever nothing else does (``app.background``). The
abstract CPU model gives each hardware thread a whole CPU: the hot
thread's gain here is an upper bound on an SMT core's, whose threads share
one pipeline (the smt-hot-thread study runs code on such a core).
"""

from __future__ import annotations

import functools

from irqsim import api

#: Frame sizes and their 10 Gb/s line rates (frames per second: 1e10 / ((bytes + 20) x 8)).
LOADS = {1518: 1e10 / ((1518 + 20) * 8), 64: 1e10 / ((64 + 20) * 8)}
NICS = {"programmable (6 cores)": "compose/rx-firmware", "e1000-like": "compose/rx-e1000"}
HOSTS = {"one thread": {}, "hot thread": {"cpu.threads": 2, "nic.irq_thread": 1}}
HOST_MHZ = 3000.0
MS = 2.0


@functools.cache
def _run(scenario: str, size: int, host: str) -> dict:
    sets = {"workload.packet_bytes": size, "workload.rate_per_s": LOADS[size], "run.duration_ms": MS, "cpu.clock_mhz": HOST_MHZ, "app.background": True, **HOSTS[host]}
    return api.run(scenario, sets).metrics


def table() -> list[dict]:
    """One row per frame size, NIC and host: what the host delivered, what
    its kernel paid per frame (every cycle but the application's and idle
    ones, all threads) and what the application kept (of one CPU)."""
    rows = []
    for size in LOADS:
        for nic, scenario in NICS.items():
            for host in HOSTS:
                m = _run(scenario, size, host)
                threads = int(HOSTS[host].get("cpu.threads", 1))
                kernel = (1.0 - m["user_share"] - m["idle_share"]) * threads * m["sim_cycles"]
                delivered = m["rx_delivered"]
                rows.append(
                    {
                        "frame_bytes": size,
                        "nic": nic,
                        "host": host,
                        "offered_per_s": m["rx_offered"] / m["sim_seconds"],
                        "delivered_per_s": delivered / m["sim_seconds"],
                        "dropped_share": (m["rx_dropped_nic"] + m["rx_dropped_backlog"]) / m["rx_offered"],
                        "host_cycles_per_frame": kernel / delivered if delivered else float("nan"),
                        "application_cpus": m["user_share"] * threads,
                        "interrupts_per_s": m["interrupts"] / m["sim_seconds"],
                        "latency_p50_us": m["latency_p50_us"],
                        "latency_p99_us": m["latency_p99_us"],
                    }
                )
    return rows


def figure(path) -> None:
    """Delivered frames per second, host cycles per frame and the application's CPU, per NIC and host."""
    from irqsim.plot import pyplot, save_figure

    rows = table()
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    labels = [f"{n.split(' ')[0]}\n{h}" for n in NICS for h in HOSTS]
    width = 0.38
    for k, size in enumerate(LOADS):
        of = [r for r in rows if r["frame_bytes"] == size]
        xs = [i + (k - 0.5) * width for i in range(len(of))]
        axes[0].bar(xs, [r["delivered_per_s"] / 1e3 for r in of], width, label=f"{size} B at 10 Gb/s")
        axes[1].bar(xs, [r["host_cycles_per_frame"] for r in of], width, label=f"{size} B at 10 Gb/s")
        axes[2].bar(xs, [r["application_cpus"] for r in of], width, label=f"{size} B at 10 Gb/s")
    ylabels = ("delivered frames per second (thousands)", "host kernel cycles per delivered frame", "application's CPU (of one)")
    for ax, ylabel in zip(axes, ylabels):
        ax.set_xticks(range(len(labels)), labels, fontsize=7)
        ax.set_ylabel(ylabel)
    axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=8)
    fig.suptitle("The programmable NIC against the e1000-like NIC in front of a 3 GHz NAPI host", fontsize=10)
    save_figure(fig, path)
    plt.close(fig)
