"""SMT hot thread and cache pinning for interrupts (Gibeling and Schultz, CS252 2005).

Paper: "Low Overhead Interrupt Handling with SMT" (shared/seeds/
smt-hot-thread-cache-pinning.txt). The kernel is C (programs/kernel/) run
on the machine's SMT core (``[code]`` scenarios under
scenarios/smt-hot-thread/); footprints are in smt_footprint.py. Inputs,
method and results: docs/models/smt-hot-thread.md.
"""

from __future__ import annotations

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

