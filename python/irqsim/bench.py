"""``irqsim bench``: simulator speed on the bundled saturated receive scenario.

Reports delivered packets, events and simulated seconds per wall-clock
second of the simulation alone (scenario loading excluded). Drops are
reported apart and never counted as throughput.
"""

from __future__ import annotations

import time

from irqsim import api

SCENARIO = "bench/rx-overload"


def measure(overrides: list[str], repeat: int = 3) -> dict:
    best = None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        r = api.run(SCENARIO, overrides)
        wall = time.perf_counter() - t0
        if best is None or wall < best[0]:
            best = (wall, r)
    wall, r = best
    m = r.metrics
    return {
        "scenario": SCENARIO,
        "repeat": max(1, repeat),
        "wall_seconds": wall,
        "delivered_packets": m["rx_delivered"],
        "dropped_packets": m["rx_dropped_nic"] + m["rx_dropped_backlog"],
        "events": m["events"],
        "sim_seconds": m["sim_seconds"],
        "delivered_packets_per_wall_s": m["rx_delivered"] / wall,
        "events_per_wall_s": m["events"] / wall,
        "sim_seconds_per_wall_s": m["sim_seconds"] / wall,
    }
