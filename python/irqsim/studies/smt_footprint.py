"""Footprints of the smt-hot-thread study's kernel (programs/kernel/): the
code reachable from each activity in the ELF, the static data objects, and
per-activity instructions, cycles and misses measured on the core by
kernel/measure-* (docs/models/smt-hot-thread.md, "Footprints").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from irqsim.exec import PROGRAMS

# The activities the machine runs (machine-mmio.md) and the ELFs of the two workloads.
ENTRIES = ("kernel_init", "nic_isr", "net_rx_action", "sys_recv", "app_main")
KERNELS = {"netperf": PROGRAMS / "kernel" / "host.elf", "nat": PROGRAMS / "kernel" / "nat.elf"}


@dataclass(frozen=True)
class Symbol:
    name: str
    addr: int
    size: int
    is_func: bool


class Elf:
    """The symbols and loaded words of a big-endian 32-bit MIPS ELF (enough for footprints)."""

    def __init__(self, path: Path):
        b = path.read_bytes()
        u32 = lambda o: int.from_bytes(b[o : o + 4], "big")  # noqa: E731
        u16 = lambda o: int.from_bytes(b[o : o + 2], "big")  # noqa: E731
        shoff, shent, shnum = u32(32), u16(46), u16(48)
        sections = [[u32(shoff + i * shent + k) for k in range(0, 40, 4)] for i in range(shnum)]
        self.words: dict[int, int] = {}
        for s in sections:
            if s[1] == 1 and s[2] & 4:  # PROGBITS, executable
                for k in range(0, s[5], 4):
                    self.words[s[3] + k] = u32(s[4] + k)
        symtab = next(s for s in sections if s[1] == 2)
        strtab = sections[symtab[6]]
        self.symbols: dict[str, Symbol] = {}
        for k in range(symtab[4], symtab[4] + symtab[5], 16):
            start = strtab[4] + u32(k)
            name = b[start : b.index(b"\0", start)].decode()
            kind = b[k + 12] & 15
            if name and kind in (1, 2):  # OBJECT, FUNC
                self.symbols[name] = Symbol(name, u32(k + 4), u32(k + 8), kind == 2)

    def function_at(self, addr: int) -> Symbol | None:
        return next((s for s in self.symbols.values() if s.is_func and s.addr <= addr < s.addr + s.size), None)

    def callees(self, f: Symbol) -> set[str]:
        """Functions f calls or tail-calls (j/jal; the kernel makes no indirect calls)."""
        out = set()
        for pc in range(f.addr, f.addr + f.size, 4):
            w = self.words.get(pc, 0)
            if w >> 26 in (2, 3):
                target = (pc + 4) & 0xF000_0000 | (w & 0x03FF_FFFF) << 2
                g = self.function_at(target)
                if g is not None and g.name != f.name:
                    out.add(g.name)
        return out

    def reachable(self, entry: str) -> list[Symbol]:
        seen, todo = set(), [entry]
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo += self.callees(self.symbols[name])
        return sorted((self.symbols[n] for n in seen), key=lambda s: s.addr)


def code_lines(functions: list[Symbol], line: int) -> int:
    """Distinct cache lines the functions' code spans."""
    return len({a // line for f in functions for a in range(f.addr, f.addr + f.size, 4)})


def static_footprint(workload: str, line: int = 64) -> dict[str, dict]:
    """Per activity: the functions reachable from its entry, their bytes and the lines they span."""
    elf = Elf(KERNELS[workload])
    out = {}
    for entry in ENTRIES:
        fns = elf.reachable(entry)
        out[entry] = {"functions": [f.name for f in fns], "code_bytes": sum(f.size for f in fns), "code_lines": code_lines(fns, line)}
    return out


def data_objects(workload: str) -> dict[str, int]:
    """The kernel's static data objects and their sizes in bytes, largest first."""
    elf = Elf(KERNELS[workload])
    objs = {s.name: s.size for s in elf.symbols.values() if not s.is_func and s.size}
    return dict(sorted(objs.items(), key=lambda kv: -kv[1]))


def footprint_markdown(workload: str = "nat") -> str:
    """The static code footprint table of docs/models/smt-hot-thread.md."""
    rows = ["| activity | code bytes | 64 B lines | functions reached |", "|---|---|---|---|"]
    for entry, a in static_footprint(workload).items():
        rows.append(f"| `{entry}` | {a['code_bytes']:,} | {a['code_lines']} | {', '.join(a['functions'])} |")
    return "\n".join(rows)


# Caches too large to evict anything in these runs: every miss is a first touch.
HUGE_CACHES = {
    "memory.model": "caches",
    **{f"{c}.{k}": v for c in ("l1i", "l1d") for k, v in (("size_bytes", 256 << 10), ("ways", 64), ("line_bytes", 64))},
    "l2.size_bytes": 1 << 20,
    "l2.ways": 64,
    "l2.line_bytes": 128,
}
ACTIVITIES = ("nic_isr_rx", "net_rx_action", "sys_recv", "nic_isr_tx")


def measure(workload: str, caches: dict, dma_core: bool = True) -> dict:
    """Runs kernel/measure-WORKLOAD (programs/kernel/measure.c) on the core
    with these caches; returns {phase: {activity: {field: total}}}, phase
    "warm" (the first 300 frames) or "steady" (the 1,000 after them)."""
    from irqsim import exec as mips

    sets = [f"{k}={v}" for k, v in caches.items()] + (["core.cores=2", "l2.shared=false"] if dma_core else [])
    r = mips.run(f"kernel/measure-{workload}", sets)
    if r["exit_code"] != 0:
        raise RuntimeError(f"kernel/measure-{workload} exited {r['exit_code']}: {r['stderr'].strip()}")
    out: dict = {}
    for line in r["stdout"].splitlines():
        key, value = line.split("=")
        parts = key.split(".")
        if len(parts) == 4 and parts[0] == workload:
            _, phase, activity, field = parts
            out.setdefault(phase, {}).setdefault(activity, {})[field] = int(value)
    return out


def per_frame_markdown() -> str:
    """Per activity and frame: instructions and misses with the P4 caches in
    steady state (DMA by another core), and the lines it touched first in
    300 frames with caches too large to evict (NIC copies through the
    kernel's core, so the frame's own lines are not counted there)."""
    from irqsim.studies.smt_hot_thread import P4_CACHES

    rows = [
        "| workload | activity | instructions / call | cycles / call | L1I / call | L1D / call | L2 / call | code lines touched | data lines touched |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for workload in ("netperf", "nat"):
        p4, huge = measure(workload, P4_CACHES), measure(workload, HUGE_CACHES, dma_core=False)
        for act in ACTIVITIES:
            s, w = p4["steady"][act], huge["warm"][act]
            if not s["calls"]:
                continue
            per = lambda f: s[f] / s["calls"]  # noqa: E731
            rows.append(
                f"| {workload} | `{act}` | {per('instructions'):,.0f} | {per('cycles'):,.0f} | {per('l1i'):.2f} | {per('l1d'):.2f} | {per('l2'):.2f} | {w['l1i']} | {w['l1d']} |"
            )
    return "\n".join(rows)


BINS = ("user", "kernel", "interrupt", "bottom_half")


def machine_bins(workload: str, caches: dict, duration_ms: float = 20.0) -> dict[str, dict[str, float]]:
    """Per bin, on the machine (hot-thread scenario at the 1 Gb/s line rate):
    thread cycles, instructions and L1I, L1D and L2 misses, totals and per
    delivered frame."""
    from irqsim import api
    from irqsim.studies.smt_hot_thread import HOT_CORE

    core = HOT_CORE + [f"{k}={v}" for k, v in caches.items()]
    r = api.run(f"smt-hot-thread/{workload}-hot", {"code.core": core, "run.duration_ms": duration_ms})
    m = r.metrics
    frames = m["rx_delivered"]  # forwarded frames count as delivered too
    out = {}
    cycles = r.bins.sum()
    for b in BINS:
        fields = {"cycles": int(cycles[b]), **{f: m[f"code_{b}_{f}"] for f in ("instructions", "l1i_misses", "l1d_misses", "l2_misses")}}
        out[b] = {**fields, **{f"{f}_per_frame": v / frames for f, v in fields.items()}}
    return out


def machine_markdown(workloads: tuple[str, ...] = ("netperf", "nat")) -> str:
    """The bins table of docs/models/smt-hot-thread.md: per frame with the
    Pentium 4 caches, and the code lines touched (L1I misses in all) and L1D
    misses per frame with caches too large to evict."""
    from irqsim.studies.smt_hot_thread import P4_CACHES

    rows = [
        "| workload | bin | cycles / frame | instructions / frame | L1I / frame | L1D / frame | L2 / frame | code lines touched | L1D / frame, no evictions |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for w in workloads:
        p4, huge = machine_bins(w, P4_CACHES), machine_bins(w, HUGE_CACHES)
        for b in BINS:
            p, h = p4[b], huge[b]
            if not p["instructions"]:
                continue
            rows.append(
                f"| {w} | {b} | {p['cycles_per_frame']:,.0f} | {p['instructions_per_frame']:,.0f} | {p['l1i_misses_per_frame']:.3f} | {p['l1d_misses_per_frame']:.2f} | "
                f"{p['l2_misses_per_frame']:.2f} | {h['l1i_misses']} | {h['l1d_misses_per_frame']:.2f} |"
            )
    return "\n".join(rows)
