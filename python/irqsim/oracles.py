"""``make validate``: the simulator against independent oracles (``irqsim
validate`` is another thing: it checks a scenario file).

Four checks, each printed as a row (oracle, simulated, error, limit, pass):

- **M/D/1** (``md1``): Poisson arrivals at one server of fixed service time
  (the Driver ISR, every other cost zero) against the Pollaczek–Khinchine
  mean response time S + ρS / (2(1 − ρ)) at ρ 0.3, 0.6 and 0.9, within
  0.5%. Frames per load are set so the estimate's standard error (batch
  means) is under a third of the limit: 1 M at 0.3, 2 M at 0.6 and 48 M at
  0.9 (independent 1 M-frame runs, seeds 1..48), since the waiting time's
  autocorrelation grows as (1 − ρ)⁻². Beside it, exactly: every frame's
  simulated latency against Lindley's recursion over the same arrival times.
- **cache** (``cache``): ``system/strided`` (fifteen strided phases, each
  after a flush; three also reload one hot line, which LRU keeps and FIFO
  would not) on two L1D geometries; the misses the model counts against an
  LRU cache written here from scratch, exactly.
- **livelock knee** (``knee``): the interrupt-driven path's delivered rate
  above the MLFRR against the analytic line from the bins
  (``livelock.knee()``), within 0.5% or 10 frames/s (100 ms of whole frames).
- **NAPI plateau** (``napi``): NAPI's delivered rate under overload against
  C / (ISR + protocol + poll / weight): the driver's and the poll's costs
  from the scenario, the protocol's from the knee's bins, within 0.5%
  (what is left out, one softirq entry per softirq run, is about 0.1%).

``python -m irqsim.oracles`` prints the table and exits 1 if any row fails.
"""

from __future__ import annotations

import sys
import tempfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tomli_w

from irqsim import api

# M/D/1: the service time (cycles at 1 GHz) and the frames per load.
SERVICE = 1000
MD1_FRAMES = {0.3: (1_000_000, 1), 0.6: (1_000_000, 2), 0.9: (1_000_000, 48)}
MD1_LIMIT = 0.005


@dataclass(frozen=True)
class Check:
    check: str
    case: str
    oracle: float
    simulated: float
    limit: float  # relative; 0: exact
    floor: float = 0.0  # an absolute tolerance beside the relative one

    @property
    def error(self) -> float:
        return (self.simulated - self.oracle) / self.oracle if self.oracle else float(self.simulated != self.oracle)

    @property
    def passed(self) -> bool:
        return abs(self.simulated - self.oracle) <= max(self.limit * abs(self.oracle), self.floor)


def _run(scenario: dict):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "validate.toml"
        path.write_text(tomli_w.dumps(scenario))
        return api.run(path)


def md1_scenario(rho: float, frames: int, seed: int) -> dict:
    """One server: the ISR at SERVICE cycles per frame; entry, save/restore, wire and DMA as near zero as the keys allow."""
    rate = rho / (SERVICE * 1e-9)
    return {
        "name": "validate: M/D/1",
        "description": "Poisson arrivals; the Driver ISR is the only cost.",
        "run": {"duration_ms": frames / rate * 1e3, "seed": seed},
        "cpu": {"clock_mhz": 1000.0, "irq_entry_cycles": 0, "swi_entry_cycles": 0, "save_restore_cycles": 0},
        "nic": {"link_mbps": 1e6, "dma_bytes_per_cycle": 4096.0, "rx_buffer_bytes": 1 << 30},
        "driver": {"isr_rx_done_cycles": SERVICE},
        "stack": {"enabled": False},
        "stats": {"max_packet_records": 2 * frames},
        "workload": {"kind": "arrivals", "process": "poisson", "rate_per_s": rate, "packet_bytes": 64},
    }


def lindley(arrivals: np.ndarray, service: int) -> np.ndarray:
    """Each frame's response time in a FIFO single server: departure_n = max(arrival_n, departure_{n-1}) + S."""
    n = np.arange(len(arrivals), dtype=np.int64)
    departures = np.maximum.accumulate(arrivals - n * service) + (n + 1) * service
    return departures - arrivals


def md1(loads: dict[float, tuple[int, int]] | None = None) -> list[Check]:
    """``loads``: ρ → (frames a run, runs); by default MD1_FRAMES."""
    out = []
    for rho, (frames, seeds) in (loads or MD1_FRAMES).items():
        total, count, exact = 0.0, 0, True
        for seed in range(1, seeds + 1):
            r = _run(md1_scenario(rho, frames, seed))
            lat = r.latencies
            cycles = np.rint(lat.latency_us.to_numpy() * 1000).astype(np.int64)
            # The constant part (a cycle of DMA) is the least latency less the service.
            delay = int(cycles.min()) - SERVICE
            arrivals = np.rint(lat.arrival_us.to_numpy() * 1000).astype(np.int64) + delay
            exact &= bool(np.array_equal(cycles - delay, lindley(arrivals, SERVICE)))
            total += float((cycles - delay).sum())
            count += len(cycles)
        pk = SERVICE + rho * SERVICE / (2 * (1 - rho))
        out.append(Check("M/D/1 vs Pollaczek-Khinchine", f"rho {rho}, {count / 1e6:.0f} M frames: mean response (cycles)", pk, total / count, MD1_LIMIT))
        out.append(Check("M/D/1 vs Lindley (same arrivals)", f"rho {rho}: frames whose latency differs", 0.0, 0.0 if exact else 1.0, 0.0))
    return out


# system/strided's phases (stride, footprint, passes, hot), as in programs/system/strided.c;
# hot: data[0] is loaded before each strided load.
PHASES = (
    (4, 2048, 3, 0),
    (32, 4096, 3, 0),
    (32, 6144, 3, 0),
    (64, 8192, 3, 0),
    (64, 16384, 2, 0),
    (128, 12288, 3, 0),
    (2048, 16384, 4, 0),
    (4096, 20480, 4, 0),
    (4160, 65536, 2, 0),
    (96, 7168, 5, 0),
    (8, 5120, 2, 0),
    (1024, 262144, 2, 0),
    (64, 8192, 2, 1),
    (4096, 20480, 3, 1),
    (1024, 12288, 3, 1),
)


def addresses(base: int, stride: int, footprint: int, passes: int, hot: int):
    """The data addresses one phase loads, in order."""
    for _ in range(passes):
        for i in range(0, footprint, stride):
            if hot:
                yield base
            yield base + i
# L1D geometries: (size bytes, ways, line bytes).
GEOMETRIES = ((4096, 4, 32), (8192, 2, 64))


def lru_misses(addresses, size: int, ways: int, line: int) -> int:
    """Misses of a cold set-associative LRU cache over ``addresses``."""
    sets = size // (ways * line)
    cache = [OrderedDict() for _ in range(sets)]
    misses = 0
    for a in addresses:
        tag = a // line
        s = cache[tag % sets]
        if tag in s:
            s.move_to_end(tag)
            continue
        misses += 1
        if len(s) == ways:
            s.popitem(last=False)
        s[tag] = True
    return misses


def cache() -> list[Check]:
    from irqsim.exec import run as exec_run

    out = []
    for size, ways, line in GEOMETRIES:
        sets = ["memory.model=caches", f"l1d.size_bytes={size}", f"l1d.ways={ways}", f"l1d.line_bytes={line}"]
        text = exec_run("system/strided", sets)["stdout"]
        values = [line_.split("=") for line_ in text.split()]
        base = int(values[0][1])
        misses = [int(v) for k, v in values[1:] if k == "misses"]
        for (stride, footprint, passes, hot), got in zip(PHASES, misses, strict=True):
            want = lru_misses(addresses(base, stride, footprint, passes, hot), size, ways, line)
            case = f"stride {stride}, {footprint} B x {passes}{', hot line' if hot else ''}: misses"
            out.append(Check(f"L1D {size // 1024} KiB {ways}-way {line} B vs LRU", case, want, got, 0.0))
    return out


def knee() -> tuple[list[Check], float]:
    """The knee's rows, and the protocol's cycles per frame its bins gave."""
    from irqsim.studies import livelock

    k = livelock.knee()
    rows = [
        Check("livelock knee vs analytic (bins)", f"interrupt-driven, {offered:,.0f} offered: delivered/s", analytic, simulated, 0.005, 10.0)
        for offered, simulated, analytic in k["points"]
    ]
    return rows, k["protocol"]


def napi(protocol: float) -> list[Check]:
    """NAPI under overload: each frame costs the driver's receive and ``protocol``
    (the same stack's cycles per frame, from the interrupt-driven run's bins),
    and each poll of ``weight`` frames ``poll_cycles``; the interrupt stays off."""
    scenario, napi_path = "livelock/receiver", {"irq_path.kind": "napi"}
    config = api.validate(scenario, napi_path)
    clock = config["cpu"]["clock_mhz"] * 1e6
    isr, weight, poll = config["driver"]["isr_rx_done_cycles"], config["napi"]["weight"], config["napi"]["poll_cycles"]
    plateau = clock / (isr + protocol + poll / weight)
    out = []
    for offered in (20_000.0, 60_000.0, 100_000.0):
        m = api.run(scenario, {**napi_path, "workload.rate_per_s": offered, "run.duration_ms": 100.0}).metrics
        out.append(Check("NAPI plateau vs C / (ISR + protocol + poll/weight)", f"{offered:,.0f} offered: delivered/s", plateau, m["rx_delivered"] / m["sim_seconds"], 0.005, 10.0))
    return out


def checks() -> list[Check]:
    knee_rows, protocol = knee()
    return [*md1(), *cache(), *knee_rows, *napi(protocol)]


def main() -> int:
    from irqsim.cli import _console, _table

    rows = checks()
    tab = _table("make validate: the simulator against independent oracles", ("check", "case", "oracle", "simulated", "error", "limit", "pass"), right=("oracle", "simulated", "error", "limit"))
    for c in rows:
        limit = "exact" if c.limit == 0 else f"{c.limit:.1%}" + (f" or {c.floor:g}" if c.floor else "")
        tab.add_row(c.check, c.case, f"{c.oracle:,.2f}", f"{c.simulated:,.2f}", f"{c.error:+.3%}", limit, "yes" if c.passed else "NO")
    _console().print(tab)
    failed = [c for c in rows if not c.passed]
    print(f"{len(rows) - len(failed)} of {len(rows)} checks pass")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
