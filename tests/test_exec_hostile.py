"""`irqsim exec` against programs that misbehave on purpose
(programs/hostile/): output is streamed and capped under --json, every
thread's stack is bounded, write() checks its buffer, output before a trap is kept, and
Ctrl-C stops a program that never exits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from conftest import interrupt

from irqsim.exec import program_path


def irqsim_exec(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irqsim.cli", "exec", *args], capture_output=True, timeout=300, **kw)


def peak_rss_mb(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    """Runs `irqsim exec ARGS` in a child with stdout to /dev/null; its peak
    resident MB (VmHWM: ru_maxrss would inherit the test process's peak)."""
    code = f"import sys; from irqsim.cli import main\ntry:\n    main({list(args)!r})\nexcept SystemExit:\n    pass\nprint(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')), file=sys.stderr)"
    p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=300)
    return p, int(p.stderr.strip().splitlines()[-1]) / 1024


def test_stdout_is_streamed_not_collected():
    """64 MiB of output reach stdout whole, and the process never holds them."""
    p = irqsim_exec("hostile/flood")
    assert p.returncode == 0 and len(p.stdout) == 64 << 20 and set(p.stdout) == {ord("x")}
    _, streamed = peak_rss_mb("exec", "hostile/flood")
    _, quiet = peak_rss_mb("exec", "arith")
    assert streamed < quiet + 32, (streamed, quiet)


def test_json_keeps_one_mib_and_says_how_much_it_dropped():
    import json

    p = irqsim_exec("hostile/flood", "--json")
    report = json.loads(p.stdout)
    assert len(report["stdout"]) == 1 << 20 and report["stdout_dropped_bytes"] == (64 << 20) - (1 << 20)
    assert report["stderr_dropped_bytes"] == 0
    assert p.stderr.decode() == "note: the report keeps the first 1,048,576 bytes of the program's stdout; 66,060,288 more were dropped\n"
    _, peak = peak_rss_mb("exec", "hostile/flood", "--json")
    _, quiet = peak_rss_mb("exec", "arith", "--json")
    assert peak < quiet + 32, (peak, quiet)


def test_unbounded_recursion_faults_at_the_stacks_limit():
    """qemu-mips dies of SIGSEGV; the stack used to grow through the address space (3.1 GB)."""
    p = irqsim_exec("hostile/overflow")
    err = p.stderr.decode()
    assert p.returncode == 2 and p.stdout == b"recursing\n"
    assert err.count("\n") == 1 and "stack overflow (segmentation fault: write to 0x7ff0" in err and " in deeper+0x" in err, err
    _, peak = peak_rss_mb("exec", "hostile/overflow")
    _, quiet = peak_rss_mb("exec", "arith")
    assert peak < quiet + 32, (peak, quiet)


@pytest.mark.parametrize("sets", [["core.threads=2"], ["core.cores=2"]])
def test_each_threads_stack_faults_at_its_own_limit(sets):
    """Thread 0 recurses while thread 1 (or core 1) waits: it faults in the guard page at
    the bottom of its own 1 MiB (0x7fef_f000..0x7fff_f000), never reaching
    the stack below it (that stack's top page is in use)."""
    p = irqsim_exec("hostile/overflow", *(a for s in sets for a in ("--set", s)))
    err = p.stderr.decode()
    assert p.returncode == 2 and p.stdout == b"recursing\n", err
    assert err.count("\n") == 1 and "stack overflow (segmentation fault: write to 0x7ff0" in err, err


def test_write_with_a_bad_buffer_is_efault():
    p = irqsim_exec("hostile/efault")
    assert p.returncode == 0 and p.stdout.decode() == "null=-14\nlow=-14\nwraps=-14\nfine\nok=5\n"


def test_output_before_a_trap_is_kept():
    """qemu-mips prints what the program wrote, then dies of SIGTRAP."""
    p = irqsim_exec("hostile/trap")
    assert p.stdout == b"before the trap\n"
    assert p.returncode == 2 and "trap 7 (integer division by zero) in main+0x" in p.stderr.decode()


def test_ctrl_c_stops_a_program_that_never_exits():
    """With `run.max_cycles` at its maximum only the signal can stop it: exit 130, one line."""
    p = subprocess.Popen(
        [sys.executable, "-m", "irqsim.cli", "exec", "hostile/spin", "--set", f"run.max_cycles={2**63 - 1}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    err = interrupt(p, b"spinning\n")
    assert p.returncode == 130 and err == "error: interrupted\n"


def test_the_hostile_programs_are_what_qemu_makes_of_them():
    """The oracle: the same stdout, and qemu's signal where irqsim reports a fault."""
    if subprocess.run(["which", "qemu-mips"], capture_output=True).returncode:
        assert "CI" not in os.environ, "qemu-mips is required in CI"
        pytest.skip("qemu-mips not installed")
    for name, sig in [("overflow", signal.SIGSEGV), ("trap", signal.SIGTRAP), ("efault", None)]:
        q = subprocess.run(["qemu-mips", str(program_path(f"hostile/{name}"))], capture_output=True, timeout=60)
        assert q.stdout == irqsim_exec(f"hostile/{name}").stdout, name
        assert q.returncode == (-sig if sig else 0), (name, q.returncode)
