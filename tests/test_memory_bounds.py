"""Memory bounded by design: the timeline is written as it is produced, so
peak memory stays within twice the file's size plus 100 MB (it was 410 MB
for a 16.7 MB trace: the core built JSON text, Python parsed it and dumped
it again)."""

from __future__ import annotations

import json
import subprocess
import sys

import irqsim
from irqsim.output import write_timeline

LONG = ["--set", "run.duration_ms=60000"]


def peak_mb(*args: str) -> float:
    """Peak resident MB of `irqsim ARGS` in a child: its own VmHWM, which,
    unlike ru_maxrss, does not inherit the test process's peak across exec."""
    code = f"import sys; from irqsim.cli import main\ntry:\n    main({list(args)!r})\nexcept SystemExit as e:\n    assert not e.code, e.code\nprint(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')), file=sys.stderr)"
    p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return int(p.stderr.strip().splitlines()[-1]) / 1024


def test_the_streamed_trace_is_the_chrome_trace(tmp_path):
    r = irqsim.run("mt-interrupts/driver-rx-single", {"run.duration_ms": 2}, timeline=True)
    events, dropped = write_timeline(tmp_path / "t.json", r)
    doc = json.loads((tmp_path / "t.json").read_text())
    assert doc == r.chrome_trace()
    assert events == sum(e["ph"] != "M" for e in doc["traceEvents"]) > 100 and dropped == doc["otherData"]["dropped"]
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]


def test_timeline_peak_memory_is_bounded_by_the_file(tmp_path):
    out = tmp_path / "trace.json"
    peak = peak_mb("timeline", "bench/rx-overload", *LONG, "-o", str(out))
    size = out.stat().st_size / 2**20
    assert size > 10 and peak <= 2 * size + 100, (peak, size)


def test_run_output_timeline_adds_at_most_twice_its_size(tmp_path):
    """`run -o` holds pandas, pyarrow and up to 1,000,000 latency records
    whatever the timeline (about 225 MB here); the timeline adds at most
    twice its file's size (587 MB in all before)."""
    base = peak_mb("run", "bench/rx-overload", *LONG, "-o", str(tmp_path / "base"))
    peak = peak_mb("run", "bench/rx-overload", *LONG, "-o", str(tmp_path / "out"), "--timeline")
    size = (tmp_path / "out" / "timeline.json").stat().st_size / 2**20
    assert size > 10 and peak - base <= 2 * size, (peak, base, size)


def test_script_events_from_a_file_are_streamed(tmp_path):
    """1,000,000 script events (a 19 MB events file) peak no higher than
    100,000 (2 GB inline in the scenario before): the file is read as the run
    advances, never held. Latency records are capped low so that they do not grow either."""

    def scenario(events: int) -> str:
        d = tmp_path / str(events)
        d.mkdir()
        with open(d / "events.csv", "w") as f:
            f.write("at_cycle,action,bytes\n")
            f.writelines(f"{i * 1000},{('syscall', 'receive,64', 'send,100')[i % 3]}\n" for i in range(events))
        ms = events * 1000 / 200e3 + 0.001
        (d / "s.toml").write_text(f'[run]\nduration_ms = {ms}\n[cpu]\nclock_mhz = 200.0\n[stats]\nmax_packet_records = 1000\n[workload]\nkind = "script"\nevents_file = "events.csv"\n')
        return str(d / "s.toml")

    small, big = peak_mb("run", scenario(100_000)), peak_mb("run", scenario(1_000_000))
    # Held whole, 900,000 more events would take at least 20 MB (24 bytes each, as parsed).
    assert big - small < 10, (small, big)
