"""Wall time of `irqsim sweep` against a plain in-process loop over the same runs.

    python scripts/sweep_speed.py [--duration-ms 20000] [--repeat 1] [--workers N]

The sweep is issue 23's: bench/rx-overload, 3 seeds × 4 arrival rates × 2
packet sizes = 24 runs of DURATION simulated ms each. Both sides are timed
from a fresh interpreter (imports included), alternately, into fresh
directories; the load average is printed beside them, since the kernel's
autogroup scheduling gives one terminal session the same share of a busy
machine however many processes it runs (docs/performance.md).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = """scenario = "bench/rx-overload"
seeds = 3
[set]
"run.duration_ms" = {duration}
[grid]
"workload.rate_per_s" = [9000.0, 10000.0, 11000.0, 11500.0]
"workload.packet_bytes" = [500, 1500]
"""

LOOP = """import sys, irqsim
from irqsim.sweeps import Spec
s = Spec.load(sys.argv[1])
for r in s.runs("loop"):
    irqsim.run(s.scenario, r.overrides)
"""


def timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration-ms", type=float, default=20000.0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "s.toml"
        spec.write_text(SPEC.format(duration=args.duration_ms))
        workers = ["--workers", str(args.workers)] if args.workers else []
        for i in range(args.repeat):
            load = os.getloadavg()[0]
            sweep = timed([sys.executable, "-m", "irqsim.cli", "sweep", str(spec), "-o", f"{tmp}/out{i}", *workers])
            loop = timed([sys.executable, "-c", LOOP, str(spec)])
            print(f"24 runs × {args.duration_ms / 1000:g} simulated s: sweep {sweep:.2f} s, loop {loop:.2f} s, ratio {sweep / loop:.2f} (load average {load:.1f})")


if __name__ == "__main__":
    main()
