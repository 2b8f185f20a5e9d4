"""N tiny runs (10 simulated µs of bench/rx-overload), for counting instructions per run.

    valgrind --tool=callgrind --callgrind-out-file=/dev/null python scripts/tiny_runs.py 100 api
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python scripts/tiny_runs.py 300 api

The difference of the two totals over 200 is the instructions of one
``irqsim.run`` (``api``) or of the core's ``_core.run`` alone (``core``),
interpreter start-up and imports cancelled out (docs/performance/sweeps-and-overhead.md, "Overhead per run").
``sweep`` is ``api`` with another seed each run, as a sweep's runs differ:
the core loads the scenario anew every time.

    python scripts/tiny_runs.py 2000 sweep --time

times the N runs instead, five times, and prints the best in CPU µs per run
(``time.process_time``; `irqsim bench --overhead` times ``api`` and ``core``).
"""

import sys
import time

import irqsim
from irqsim import _core, api

n, what = int(sys.argv[1]), sys.argv[2]
sets = ["run.duration_ms=0.01"]
path = api.scenario_path("bench/rx-overload")
one = {
    "api": lambda i: irqsim.run("bench/rx-overload", sets),
    "core": lambda i: _core.run(path=path, sets=sets),
    "sweep": lambda i: irqsim.run("bench/rx-overload", [*sets, f"run.seed={i + 1}"]),
}[what]
if "--time" not in sys.argv[3:]:
    for i in range(n):
        one(i)
    sys.exit()
best = float("inf")
for _ in range(5):
    t0 = time.process_time()
    for i in range(n):
        one(i)
    best = min(best, time.process_time() - t0)
print(f"{what}: {best / n * 1e6:.1f} CPU µs per run (best of 5 x {n})")
