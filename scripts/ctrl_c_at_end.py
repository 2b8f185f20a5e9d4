"""Ctrl-C near the end of a sweep: how often the process's status is not the command's.

    python scripts/ctrl_c_at_end.py [--tries 60] [--after 1.6 2.6]

Each try runs `python -m irqsim.cli sweep` of four 20 ms runs of
bench/rx-overload on two threads into a fresh directory, in its own process
group, and sends SIGINT to the group (as a terminal's Ctrl-C) after a random
delay in ``--after`` seconds (around the sweep's end on a 2-core VM: tune it so
that both outcomes occur). Prints the count of each (status, last stderr
line): 0 with `wrote ...` or 130 with `error: interrupted` are right; -2 (died
of SIGINT) is the fault of docs/reliability.md.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = 'scenario = "bench/rx-overload"\nseeds = 4\n[set]\n"run.duration_ms" = 20.0\n'


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tries", type=int, default=60)
    ap.add_argument("--after", type=float, nargs=2, default=(1.6, 2.6), metavar=("MIN", "MAX"))
    args = ap.parse_args()
    outcomes: collections.Counter = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "s.toml"
        spec.write_text(SPEC)
        for i in range(args.tries):
            out = Path(tmp) / f"out{i}"
            p = subprocess.Popen([sys.executable, "-m", "irqsim.cli", "sweep", str(spec), "-o", str(out), "--workers", "2"], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(random.uniform(*args.after))
            try:
                os.killpg(p.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            err = p.communicate()[1].strip()
            last = err.splitlines()[-1] if err else ""
            outcomes[(p.returncode, last if last.startswith("error") else last.split(" ")[0])] += 1
    for (status, line), n in sorted(outcomes.items()):
        print(f"{n:4d}  status {status:4d}  {line}")


if __name__ == "__main__":
    main()
