"""Multithreading for interrupts on a communication processor (AE32000, 200 MHz).

Paper: "Analysis of the Effectiveness of Multithreading for Interrupts on
Communication Processors" (shared/seeds/mt-interrupts-communication-processor.txt),
Section 5.2. Inputs, derivations and the error discussion:
docs/models/mt-interrupts.md.
"""

from __future__ import annotations

from irqsim import api
from irqsim.studies import Row

STUDY = "mt-interrupts"
TITLE = "Multithreaded register contexts for interrupts (AE32000, 200 MHz)"

# (experiment, scenario stem, metric, paper single, paper multithreaded), Section 5.2.
EXPERIMENTS = [
    ("driver-layer send, 1500 B", "driver-tx", "tx_throughput_mbps", 653.0, 688.0),
    ("driver-layer receive, 1500 B", "driver-rx", "rx_throughput_mbps", 994.0, 1078.0),
    ("full stack receive, busiest second", "full-stack", "rx_throughput_mbps", 8.57, 8.6),
]


def reproduce() -> list[Row]:
    rows = []
    for experiment, stem, metric, paper_single, paper_mt in EXPERIMENTS:
        single = api.run(f"{STUDY}/{stem}-single").metrics[metric]
        mt = api.run(f"{STUDY}/{stem}-multithreaded").metrics[metric]
        rows += [
            Row(STUDY, f"{experiment}, single context", "throughput", "Mb/s", paper_single, single),
            Row(STUDY, f"{experiment}, multithreaded", "throughput", "Mb/s", paper_mt, mt),
            Row(STUDY, f"{experiment}, multithreaded vs single", "improvement", "%", 100 * (paper_mt / paper_single - 1), 100 * (mt / single - 1)),
        ]
    return rows
