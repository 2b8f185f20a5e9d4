"""Writes a script scenario whose events are in a file, for measuring the
memory a long script takes (docs/reliability.md, "Bounds").

    python scripts/script_events.py DIR [EVENTS]
    /usr/bin/time -f %M target/release/examples/run DIR/script-events.toml

One event every 1,000 cycles at 200 MHz, in turn a 64-byte received frame,
a 100-byte send and a system call; the run lasts until just after the last.
"""

import sys
from pathlib import Path

GAP_CYCLES = 1000
CLOCK_MHZ = 200.0
KINDS = ("syscall", "receive,64", "send,100")


def main(out: Path, events: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "events.csv", "w") as f:
        f.write("at_cycle,action,bytes\n")
        for i in range(events):
            f.write(f"{i * GAP_CYCLES},{KINDS[i % 3]}\n")
    duration_ms = events * GAP_CYCLES / (CLOCK_MHZ * 1e3) + 0.001
    scenario = f'[run]\nduration_ms = {duration_ms}\n[cpu]\nclock_mhz = {CLOCK_MHZ}\n[workload]\nkind = "script"\nevents_file = "events.csv"\n'
    (out / "script-events.toml").write_text(scenario)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000)
