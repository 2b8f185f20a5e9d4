"""Parallel NIC firmware: thread-level parallelism on 1-6 MIPS R4000 cores
against instruction-level parallelism on VLIW cores.

Paper: M. Brogioli, P. Willmann, S. Rixner, "Parallelization Strategies for
Network Interface Firmware" (shared/seeds/nic-firmware-parallelization.txt):
Table 2 (frame-level firmware on 1, 2, 4, 6 cores) and Table 1 (an offline
VLIW scheduler over the firmware's basic blocks). Beside them: H. Kim,
V. Pai, S. Rixner, PPoPP 2003 (task-level firmware: 2 cores +65% over 1 with
maximum-size frames, +157% with minimum-size; no scaling past about 3 cores)
and P. Willmann et al., HPCA 2005 (full-duplex 10 GbE with 1518 B frames
needs 6 cores at 166 MHz), as quoted in shared/REFERENCES.md.

The firmware is our own C (programs/firmware), run on irqsim-mips cores
against the NIC model of crates/firmware, as the NIC of an ordinary machine
run (`irqsim.run` of the bundled scenarios nic-firmware/duplex-64 and
duplex-1518: a wire flooding the NIC at line rate, a host that costs nothing
and keeps the send ring full, and a measured window of frames); the inputs
(clock, line rate, DMA bandwidth and latency) are listed with their sources
in docs/models/nic-firmware.md. Nothing is fitted to the papers' numbers.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

from irqsim import api
from irqsim._core import ConfigError, IrqsimError, vliw_table
from irqsim.studies import Row, nic_host

STUDY = "nic-firmware"
TITLE = "NIC firmware on 1-6 MIPS cores and on VLIW cores (Brogioli, Willmann, Rixner)"

FIRMWARE = Path(__file__).resolve().parent.parent / "programs" / "firmware" / "nic.elf"

# Table 2: cores -> (frames per thousand cycles, IPC).
TABLE2 = {1: (2.64, 0.69), 2: (5.59, 1.34), 4: (10.37, 2.62), 6: (11.61, 3.87)}
# Table 1: integer/load-store/branch units -> (frames per thousand cycles, IPC).
TABLE1 = {
    "1/1/1": (3.71, 1.19),
    "2/1/1": (4.20, 1.35),
    "2/3/1": (4.97, 1.60),
    "3/3/1": (5.15, 1.65),
    "4/4/1": (5.20, 1.67),
    "5/5/1": (5.23, 1.67),
    "6/6/1": (5.23, 1.67),
}
# Kim et al.: 2-core task-level firmware over 1-core, by frame size.
KIM = {1518: 0.65, 64: 1.57}
CORES = (1, 2, 3, 4, 5, 6)
# Full-duplex floods; Table 2 and Table 1 with minimum-size frames (the
# paper does not give Table 2's frame size; the firmware touches only
# headers, so with 64 B frames the wire is not the limit and the table
# measures the firmware), the 10 GbE check with Willmann et al.'s 1518 B.
SIZES = (64, 1518)
TABLE_SIZE = 64
CLOCK_MHZ = 166.0
LINE_GBPS = 10.0
# The VLIW scheduler's memory rule for Table 1: the seed's (register
# dependences only); the conservative rule is shown beside it.
MEMORY_RULES = ("registers", "ordered")
# Frames or descriptors a handler claims at once: the firmware's default
# (`nic_firmware.batch`, crates/firmware/src/config.rs) is our choice, no source gives
# it; Table 2's 1-core row is run at each of these.
DEFAULT_BATCH = 4
BATCHES = (2, 3, 4, 5, 6, 8)


def frames() -> int:
    """Frames measured per run: IRQSIM_NIC_FRAMES, or 4,000 (a finer run: 40000)."""
    value = os.environ.get("IRQSIM_NIC_FRAMES", "4000")
    if not value.isdigit() or not 100 <= int(value) <= 10_000_000:
        raise ConfigError(f"IRQSIM_NIC_FRAMES: expected an integer in 100..=10000000 (got {value!r})")
    return int(value)


#: The study's scenario for each frame size (full-duplex floods at line rate).
SCENARIOS = {size: f"nic-firmware/duplex-{size}" for size in SIZES}
#: The firmware's handlers, in the order of crates/firmware's ``HANDLERS``.
HANDLERS = 8


def run(cores: int, organisation: str, size: int, handler_cycles: list[int] | None = None, extra: dict | None = None) -> dict:
    """One firmware run (full duplex) on the machine: the report's measured window.

    Task-level runs assign handlers from ``handler_cycles`` of a 1-core run."""
    n = frames()
    sets = {
        "nic_firmware.cores": cores,
        "nic_firmware.organisation": organisation,
        "nic_firmware.window_frames": n,
        "nic_firmware.warmup_frames": n // 10,
        # A guard only: the run ends with the window (1 core takes about 4 µs a frame).
        "run.duration_ms": 0.025 * (n + n // 10),
        **(extra or {}),
    }
    if organisation == "task":
        sets["nic_firmware.owners"] = task_owners(handler_cycles or [], cores)
    result = api.run(SCENARIOS[size], sets)
    window = result.to_dict().get("nic_firmware")
    if window is None:
        raise IrqsimError(f"{SCENARIOS[size]} with {sets}: the measured window did not end within run.duration_ms")
    return window


def task_owners(handler_cycles: list[int], cores: int) -> list[int]:
    """Task-level assignment: handlers by decreasing cycles (ties by index),
    each to the least-loaded core (longest processing time first)."""
    if len(handler_cycles) != HANDLERS:
        raise ConfigError(f"task-level firmware needs the {HANDLERS} handlers' cycles of a 1-core run, got {len(handler_cycles)}")
    load = [0] * cores
    owners = [0] * HANDLERS
    for h in sorted(range(HANDLERS), key=lambda h: (-handler_cycles[h], h)):
        k = min(range(cores), key=lambda k: (load[k], k))
        load[k] += handler_cycles[h]
        owners[h] = k
    return owners


def handler_cycles(report: dict) -> list[int]:
    return [h["cycles"] for h in report["handlers"][:HANDLERS]]


@functools.cache
def results(n: int) -> dict:
    """Every run the study needs for ``n`` frames a run: ``[size][organisation][cores]`` and the VLIW table."""
    out: dict = {}
    for size in SIZES:
        frame = {c: run(c, "frame", size) for c in CORES}
        one = handler_cycles(frame[1])
        task = {c: run(c, "task", size, one) if c > 1 else frame[1] for c in CORES}
        out[size] = {"frame": frame, "task": task}
    profile = json.dumps(out[TABLE_SIZE]["frame"][1]["profile"])
    out["vliw"] = {rule: json.loads(vliw_table(FIRMWARE, profile, "1-core profile", list(TABLE1), rule)) for rule in MEMORY_RULES}
    out["batch"] = {b: run(1, "frame", TABLE_SIZE, extra={"nic_firmware.batch": b}) if b != DEFAULT_BATCH else out[TABLE_SIZE]["frame"][1] for b in BATCHES}
    return out


def line_rate_fpkc(size: int = 1518) -> float:
    """Frames per thousand cycles of full-duplex line rate (frame plus 20 B of preamble and gap)."""
    per_direction = LINE_GBPS * 1e9 / ((size + 20) * 8)
    return 2 * per_direction / (CLOCK_MHZ * 1e6) * 1000


def saturation(values: dict, share: float) -> float:
    """The smallest key whose value reaches ``share`` of the largest."""
    best = max(values.values())
    return min(k for k, v in values.items() if v >= share * best)


def reproduce() -> list[Row]:
    r = results(frames())
    rows = []
    for c, (fpkc, ipc) in TABLE2.items():
        m = r[TABLE_SIZE]["frame"][c]
        what = f"Table 2: frame-level, {c} core{'s' * (c > 1)}, {TABLE_SIZE} B duplex"
        rows.append(Row(STUDY, what, "frames per thousand cycles", "frames/kcycle", fpkc, m["frames_per_kcycle"]))
        rows.append(Row(STUDY, what, "IPC (all cores)", "instr/cycle", ipc, m["ipc"]))
    for size in SIZES:
        task = {c: r[size]["task"][c]["frames_per_kcycle"] for c in CORES}
        rows.append(Row(STUDY, f"Kim et al.: task-level, 1-6 cores, {size} B duplex", "cores where throughput stops growing (95% of best)", "cores", 3, saturation(task, 0.95)))
    for size, gain in KIM.items():
        one, two = r[size]["task"][1], r[size]["task"][2]
        sim = two["frames_per_kcycle"] / one["frames_per_kcycle"] - 1
        rows.append(Row(STUDY, f"Kim et al.: task-level 2 cores vs 1, {size} B duplex", "throughput gain", "x", gain, sim))
    vliw = {row["units"]: row for row in r["vliw"][MEMORY_RULES[0]]["rows"]}
    for units, (fpkc, ipc) in TABLE1.items():
        row = vliw[units]
        rows.append(Row(STUDY, f"Table 1: VLIW {units} ({row['width']}-wide)", "frames per thousand cycles", "frames/kcycle", fpkc, row["frames_per_kcycle"]))
        rows.append(Row(STUDY, f"Table 1: VLIW {units} ({row['width']}-wide)", "IPC", "instr/bundle", ipc, row["ipc"]))
    widths = {row["width"]: row["ipc"] for row in r["vliw"][MEMORY_RULES[0]]["rows"]}
    rows.append(Row(STUDY, "Table 1: VLIW widths 3-13", "width where IPC saturates (99% of best)", "issue slots", 9, saturation(widths, 0.99)))
    six = r[1518]["frame"][6]["frames_per_kcycle"]
    rows.append(Row(STUDY, "Willmann et al.: 6 cores, 166 MHz, 10 GbE, 1518 B duplex", "throughput / line rate", "x", 1.0, six / line_rate_fpkc()))
    return rows


def bins_table(n: int | None = None) -> list[dict]:
    """Where the cores' cycles went, per frame size, organisation and core count (shares of all core cycles)."""
    r = results(n or frames())
    out = []
    for size in SIZES:
        for org in ("frame", "task"):
            for c in CORES:
                m = r[size][org][c]
                total = m["cycles"] * c
                serial = {f["name"]: f["cycles"] / m["cycles"] for f in m["functions"] if f["name"] in ("transmit", "host_deliver")}
                out.append(
                    {
                        "frame_bytes": size,
                        "organisation": org,
                        "cores": c,
                        "frames_per_kcycle": m["frames_per_kcycle"],
                        "ipc": m["ipc"],
                        **{k: v / total for k, v in m["bins"].items()},
                        "tx_order_busy": serial.get("transmit", 0.0),
                        "rx_order_busy": serial.get("host_deliver", 0.0),
                    }
                )
    return out


def handlers_table(n: int | None = None) -> list[dict]:
    """Per handler, from the 1-core runs: invocations per frame and instructions per invocation."""
    r = results(n or frames())
    out = []
    for size in SIZES:
        m = r[size]["frame"][1]
        for h in m["handlers"]:
            calls = h["invocations"]
            out.append(
                {
                    "frame_bytes": size,
                    "handler": h["name"],
                    "invocations_per_frame": calls / m["frames"],
                    "instructions_per_invocation": h["instructions"] / calls if calls else float("nan"),
                    "instructions_per_frame": h["instructions"] / m["frames"],
                    "cycle_share": h["cycles"] / m["cycles"],
                }
            )
    return out


def vliw_rules_table(n: int | None = None) -> list[dict]:
    """Table 1 under each memory rule beside the paper's."""
    r = results(n or frames())
    rows = {rule: {row["units"]: row for row in r["vliw"][rule]["rows"]} for rule in MEMORY_RULES}
    out = []
    for units, (fpkc, ipc) in TABLE1.items():
        entry = {"units": units, "paper_ipc": ipc, "paper_frames_per_kcycle": fpkc}
        for rule in MEMORY_RULES:
            entry[f"{rule}_ipc"] = rows[rule][units]["ipc"]
            entry[f"{rule}_frames_per_kcycle"] = rows[rule][units]["frames_per_kcycle"]
        out.append(entry)
    return out


def batch_table(n: int | None = None) -> list[dict]:
    """Table 2's 1-core row (64 B duplex) against ``batch``, with the change from the default."""
    r = results(n or frames())
    base = r["batch"][DEFAULT_BATCH]["frames_per_kcycle"]
    paper = TABLE2[1][0]
    return [
        {
            "batch": b,
            "frames_per_kcycle": m["frames_per_kcycle"],
            "ipc": m["ipc"],
            "change_from_default": m["frames_per_kcycle"] / base - 1,
            "error_vs_paper": m["frames_per_kcycle"] / paper - 1,
        }
        for b, m in r["batch"].items()
    ]


def tables() -> list[tuple[str, list[dict]]]:
    """Extra tables ``irqsim reproduce`` prints after the rows."""
    return [
        ("nic-firmware: Table 1 under each VLIW memory rule (registers: the seed's scheduler, the rows above; ordered: loads and stores keep order against stores)", vliw_rules_table()),
        ("nic-firmware: Table 2's 1-core row against batch (frames a handler claims at once; 4 is the default, no source gives it)", batch_table()),
        ("nic-firmware: handlers in a 1-core run (instructions include what each handler calls)", handlers_table()),
        ("nic-firmware: where the cores' cycles went (shares of all core cycles; *_order_busy: share of time an in-order section is held)", bins_table()),
        ("nic-firmware, beyond the paper: the NIC in front of a 3 GHz NAPI host, against the e1000-like NIC (docs/models/nic-firmware.md, \"On a host\")", nic_host.table()),
    ]


def figure(path: Path) -> None:
    """Throughput against cores for both organisations and frame sizes, with Table 2 and line rate."""
    from irqsim.plot import pyplot, save_figure

    r = results(frames())
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, size in zip(axes, SIZES):
        for org, label in (("frame", "frame-level"), ("task", "task-level")):
            ax.plot(CORES, [r[size][org][c]["frames_per_kcycle"] for c in CORES], marker="o", label=f"{label} (irqsim)")
        if size == TABLE_SIZE:
            ax.plot(list(TABLE2), [v[0] for v in TABLE2.values()], marker="s", color="0.5", linestyle="--", label="frame-level (paper, Table 2)")
        else:
            ax.axhline(line_rate_fpkc(size), color="black", linewidth=0.8, linestyle=":", label="10 GbE full duplex at 166 MHz")
        ax.set_xlabel("NIC cores")
        ax.set_title(f"{size} B frames, full duplex")
        ax.legend(fontsize=8)
    for ax in axes:
        ax.set_ylabel("frames per thousand cycles")
        ax.tick_params(labelleft=True)
    save_figure(fig, path)
    plt.close(fig)
