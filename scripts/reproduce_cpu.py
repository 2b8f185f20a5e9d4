"""Where `irqsim reproduce`'s CPU-seconds go: per study, its CPU time, the
number of runs and their CPU time inside the core (``_core.run``), and the
rest (Python: the study's own code, building results).

    python scripts/reproduce_cpu.py [STUDY ...]      # default: every study
    python scripts/reproduce_cpu.py --runs livelock  # and each run's CPU time

CPU time of this process (``time.process_time``); docs/performance.md, "Reproduce".
"""

import sys
import time

t0 = time.process_time()
from irqsim import _core, studies  # noqa: E402 (timed)

imported = time.process_time() - t0
args = sys.argv[1:]
each = "--runs" in args
names = [a for a in args if a != "--runs"] or studies.names()
core_run, spent = _core.run, []


def timed_run(*a, **k):
    t = time.process_time()
    try:
        return core_run(*a, **k)
    finally:
        spent.append((time.process_time() - t, k.get("name") or k.get("path"), k.get("sets", [])))


_core.run = timed_run
print(f"{'study':16} {'CPU s':>7} {'runs':>5} {'in the core':>12} {'the rest':>9}")
print(f"{'(import)':16} {imported:7.3f}")
for n in names:
    spent.clear()
    t = time.process_time()
    studies.reproduce(n)
    total, core = time.process_time() - t, sum(s for s, _, _ in spent)
    print(f"{n:16} {total:7.3f} {len(spent):5} {core:12.3f} {total - core:9.3f}")
    for s, name, sets in spent if each else ():
        print(f"    {s:.3f} {str(name).rsplit('/', 1)[-1]} {' '.join(x for x in sets if len(x) < 60)}")
print(f"{'all':16} {time.process_time() - t0:7.3f}")
