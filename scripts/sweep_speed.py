"""Wall and CPU time of `irqsim sweep` against a plain loop of `irqsim.run` over the same runs.

    python scripts/sweep_speed.py [--repeat 1] [--workers N] [--case NAME ...]

One line per case and repeat, with everything needed to judge it: the wall
seconds and CPU-seconds of each side, their ratio, and the load average
before and after (other work on the machine takes the cores from both). The
cases, all on bench/rx-overload:

- ``issue``: issue 23's sweep, 3 seeds × 4 arrival rates × 2 packet sizes =
  24 runs of 20 simulated s; each side a fresh interpreter (imports included);
- ``issue-parquet``: the same, the loop also writing its rows to a Parquet
  file as a script would (pandas' ``DataFrame.to_parquet``), as the sweep does;
- ``issue-warm``: the same in one interpreter that has run one of each
  before (a notebook's second sweep): ``irqsim.sweep`` (the Python API,
  into a fresh directory, its DataFrame returned) against the loop;
- ``long``: the same 24 runs of 600 simulated s each, fresh interpreters;
- ``tiny``: 2,000 runs of 1 simulated ms (``seeds = 2000``), fresh interpreters:
  runs per second.

Both sides alternate, into fresh directories. CPU-seconds are those of the
child processes (user + system), threads included.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GRID = """[grid]
"workload.rate_per_s" = [9000.0, 10000.0, 11000.0, 11500.0]
"workload.packet_bytes" = [500, 1500]
"""
#: name: (seeds, simulated ms per run, grid)
CASES = {"issue": (3, 20000.0, GRID), "issue-parquet": (3, 20000.0, GRID), "issue-warm": (3, 20000.0, GRID), "long": (3, 600000.0, GRID), "tiny": (2000, 1.0, "")}

LOOP = """import sys, irqsim
from irqsim.sweeps import Spec
s = Spec.load(sys.argv[1])
rows = [{**r.params, "seed": r.seed, **irqsim.run(s.scenario, r.overrides).metrics} for r in s.runs("loop")]
if len(sys.argv) > 2:
    import pandas as pd
    pd.DataFrame(rows).to_parquet(sys.argv[2])
"""

WARM = """import json, sys, time, irqsim
from irqsim.sweeps import Spec
spec, out, workers = sys.argv[1], sys.argv[2], int(sys.argv[3]) or None
s = Spec.load(spec)
def loop():
    for r in s.runs("loop"):
        irqsim.run(s.scenario, r.overrides)
def timed(f):
    w, c = time.perf_counter(), time.process_time()
    f()
    return time.perf_counter() - w, time.process_time() - c
timed(loop), timed(lambda: irqsim.sweep(spec, out + "/warm", workers=workers))
print(json.dumps({"sweep": timed(lambda: irqsim.sweep(spec, out + "/timed", workers=workers)), "loop": timed(loop)}))
"""


def child(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, CPU-seconds and stdout of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), p.stdout


def measure(case: str, tmp: Path, i: int, workers: int | None) -> dict:
    seeds, ms, grid = CASES[case]
    spec = tmp / f"{case}.toml"
    spec.write_text(f'scenario = "bench/rx-overload"\nseeds = {seeds}\n[set]\n"run.duration_ms" = {ms}\n{grid}')
    out = tmp / f"{case}-{i}"
    if case == "issue-warm":
        _, _, text = child([sys.executable, "-c", WARM, str(spec), str(out), str(workers or 0)])
        r = json.loads(text)
        return {"sweep": r["sweep"], "loop": r["loop"]}
    extra = ["--workers", str(workers)] if workers else []
    sweep = child([sys.executable, "-m", "irqsim.cli", "sweep", str(spec), "-o", str(out), *extra])[:2]
    saved = [str(tmp / f"{case}-{i}.parquet")] if case == "issue-parquet" else []
    loop = child([sys.executable, "-c", LOOP, str(spec), *saved])[:2]
    return {"sweep": sweep, "loop": loop}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--case", action="append", choices=list(CASES), help="a case to measure (repeatable; default: all)")
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.case or list(CASES):
            seeds, ms, grid = CASES[case]
            runs = seeds * (8 if grid else 1)
            for i in range(args.repeat):
                load = os.getloadavg()[0]
                r = measure(case, Path(tmp), i, args.workers)
                (sw, sc), (lw, lc) = r["sweep"], r["loop"]
                print(
                    f"{case}: {runs} runs × {ms / 1000:g} simulated s, {cores} cores: "
                    f"sweep {sw:.2f} s wall {sc:.2f} CPU-s ({runs / sw:,.0f} runs/s), "
                    f"loop {lw:.2f} s wall {lc:.2f} CPU-s ({runs / lw:,.0f} runs/s), "
                    f"wall ratio {sw / lw:.2f}, load average {load:.1f} → {os.getloadavg()[0]:.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
