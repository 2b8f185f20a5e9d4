"""N tiny runs (10 simulated µs of bench/rx-overload), for counting instructions per run.

    valgrind --tool=callgrind --callgrind-out-file=/dev/null python scripts/tiny_runs.py 100 api
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python scripts/tiny_runs.py 300 api

The difference of the two totals over 200 is the instructions of one
``irqsim.run`` (``api``) or of the core's ``_core.run`` alone (``core``),
interpreter start-up and imports cancelled out (docs/performance.md).
"""

import sys

import irqsim
from irqsim import _core, api

n, what = int(sys.argv[1]), sys.argv[2]
sets = ["run.duration_ms=0.01"]
path = api.scenario_path("bench/rx-overload")
one = {"api": lambda: irqsim.run("bench/rx-overload", sets), "core": lambda: _core.run(path=path, sets=sets)}[what]
for _ in range(n):
    one()
