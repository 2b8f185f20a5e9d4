"""Optimistic interrupt protection (Stodolsky, Chen and Bershad 1993).

``reproduce()`` puts Table 3 (cycles of a Mach null RPC with conventional
and optimistic interrupt protection, the speedup and the cycles saved) for
the Luna88k and both DECstations beside the simulated values, with the mask
costs idealized (Tables 1 and 2 as printed) and modelled (plus the
memory-system effects the paper names). Tables 1 and 2 come back as the
inputs they are. ``break_even()`` sweeps the interrupt rate to find where
optimistic protection stops paying; ``figure()`` draws it.

Table 3's conventional column is an input: the RPC path outside mask
management is that figure minus the conventional pair, so the conventional
rows match by construction and the optimistic column, the speedup and the
cycles saved are the predictions. See docs/models/masking.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from irqsim import api
from irqsim.studies import Row

STUDY = "optimistic-spl"
TITLE = "Fast interrupt priority management: optimistic interrupt protection (Stodolsky, Chen, Bershad 1993)"

# Table 3 (null RPC cycles) and Tables 1-2 (mask pair cycles), as printed.
# The Luna88k speedup (5.3%) is the paper's; its own cycles give 175/4400 = 4.0%.
TABLE3 = {
    "luna88k": {"conventional": 4400, "optimistic": 4225, "speedup_pct": 5.3, "saved": 175},
    "decstation_5000_120": {"conventional": 2140, "optimistic": 1840, "speedup_pct": 14.0, "saved": 300},
    "decstation_5000_200": {"conventional": 1234, "optimistic": 1198, "speedup_pct": 2.9, "saved": 36},
}
TABLE12 = {
    "luna88k": (96, 51),
    "decstation_5000_120": (80, 31),
    "decstation_5000_200": (14, 31),
}
COSTS = ("idealized", "modelled")
# Table 1 machines without a null-RPC figure: (clock MHz, conventional pair cycles).
TABLE1_ONLY = {"flamingo": (150.0, 21), "pc386": (25.0, 179), "gateway_66v": (66.0, 279)}


def _scenario(machine: str, costs: str) -> str:
    return f"{STUDY}/{machine}-{costs}"


def _run(machine: str, costs: str, scheme: str, **sets) -> dict[str, float]:
    overrides = {"masking.scheme": scheme, **sets}
    return api.run(_scenario(machine, costs), overrides=overrides).metrics


def rpc_path_cycles(machine: str, costs: str) -> int:
    """The RPC path outside mask management: Table 3's conventional cycles
    minus the scenario's conventional raise/lower pair (the calibration)."""
    pair = _run(machine, costs, "conventional")["conventional_pair_cycles"]
    return int(TABLE3[machine]["conventional"] - pair)


def null_rpc(machine: str, costs: str, rate_per_s: float = 0.0, duration_ms: float | None = None) -> dict[str, dict[str, float]]:
    """Metrics of both schemes for one machine, cost model and interrupt rate."""
    sets = {"workload.rpc_path_cycles": rpc_path_cycles(machine, costs), "workload.interrupt_rate_per_s": rate_per_s}
    if duration_ms is not None:
        sets["run.duration_ms"] = duration_ms
    return {scheme: _run(machine, costs, scheme, **sets) for scheme in ("conventional", "optimistic")}


def reproduce() -> list[Row]:
    rows: list[Row] = []
    for machine, paper in TABLE3.items():
        t1, t2 = TABLE12[machine]
        for costs in COSTS:
            m = null_rpc(machine, costs)
            conv, opt = m["conventional"]["cycles_per_rpc"], m["optimistic"]["cycles_per_rpc"]
            exp = f"{machine} ({costs})"
            if costs == "idealized":
                # The inputs, as the model charges them on the RPC path.
                rows += [
                    Row(STUDY, f"table1 {machine}", "conventional_pair_cycles", "cycles", t1, m["conventional"]["mask_cycles_per_rpc"]),
                    Row(STUDY, f"table2 {machine}", "optimistic_pair_cycles", "cycles", t2, m["optimistic"]["mask_cycles_per_rpc"]),
                ]
            rows += [
                Row(STUDY, f"table3 {exp}", "conventional_cycles (input)", "cycles", paper["conventional"], conv),
                Row(STUDY, f"table3 {exp}", "optimistic_cycles", "cycles", paper["optimistic"], opt),
                Row(STUDY, f"table3 {exp}", "speedup", "%", paper["speedup_pct"], 100.0 * (conv - opt) / conv),
                Row(STUDY, f"table3 {exp}", "cycles_saved", "cycles", paper["saved"], conv - opt),
            ]
    for machine, (clock, t1) in TABLE1_ONLY.items():
        # Run on the Luna88k scenario with this machine's profile and clock.
        sets = {"masking.machine": machine, "cpu.clock_mhz": clock}
        m = _run("luna88k", "idealized", "conventional", **sets)
        rows.append(Row(STUDY, f"table1 {machine}", "conventional_pair_cycles", "cycles", t1, m["mask_cycles_per_rpc"]))
    return rows


@dataclass(frozen=True)
class BreakEven:
    machine: str
    costs: str
    rates_per_s: list[float]
    #: optimistic minus conventional cycles per RPC at each rate (negative: optimistic pays).
    difference: list[float]
    #: first rate where optimistic stops paying (interpolated); 0 if it never pays, inf if always.
    rate_per_s: float


def _crossing(rates: list[float], diff: list[float]) -> float:
    if diff[0] >= 0:
        return 0.0
    for (r0, d0), (r1, d1) in zip(zip(rates, diff), zip(rates[1:], diff[1:])):
        if d1 >= 0:
            # Interpolate in log(rate): the sweep is geometric.
            f = -d0 / (d1 - d0)
            return math.exp(math.log(r0) + f * (math.log(r1) - math.log(r0)))
    return math.inf


def break_even(
    machine: str, costs: str = "modelled", rates_per_s: list[float] | None = None, duration_ms: float = 1000.0, section_cycles: int | None = None
) -> BreakEven:
    """Sweeps the interrupt rate (same seed, so both schemes see the same
    arrivals); `section_cycles` replaces the scenario's assumed section length."""
    if rates_per_s is None:
        rates_per_s = [100.0 * 10 ** (i / 10) for i in range(31)]  # 100/s .. 100,000/s
    path = rpc_path_cycles(machine, costs)
    diff = []
    for rate in rates_per_s:
        sets = {"workload.rpc_path_cycles": path, "workload.interrupt_rate_per_s": rate, "run.duration_ms": duration_ms}
        if section_cycles is not None:
            sets["workload.section_cycles"] = section_cycles
        conv = _run(machine, costs, "conventional", **sets)["cycles_per_rpc"]
        opt = _run(machine, costs, "optimistic", **sets)["cycles_per_rpc"]
        diff.append(opt - conv)
    return BreakEven(machine, costs, list(rates_per_s), diff, _crossing(list(rates_per_s), diff))


def figure(path: str | Path = "docs/figures/masking-break-even.png") -> list[BreakEven]:
    """Draws optimistic-minus-conventional cycles per RPC against interrupt
    rate for each machine, idealized and modelled; returns the sweeps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweeps = [break_even(m, c) for m in TABLE3 for c in COSTS]
    fig, ax = plt.subplots(figsize=(8, 5))
    colors = {"luna88k": "C0", "decstation_5000_120": "C1", "decstation_5000_200": "C2"}
    for s in sweeps:
        style = "-" if s.costs == "modelled" else "--"
        label = f"{s.machine} ({s.costs})"
        if 0 < s.rate_per_s < math.inf:
            label += f", break-even {s.rate_per_s:,.0f}/s"
        elif s.rate_per_s == 0:
            label += ", never pays"
        ax.plot(s.rates_per_s, s.difference, style, color=colors[s.machine], label=label)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=10)
    ax.set_xlabel("interrupt rate (per second, Poisson)")
    ax.set_ylabel("optimistic − conventional (cycles per null RPC)")
    ax.set_title("Where optimistic interrupt protection stops paying")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return sweeps


if __name__ == "__main__":
    for s in figure():
        print(f"{s.machine:22} {s.costs:10} break-even {s.rate_per_s:,.0f} interrupts/s")
