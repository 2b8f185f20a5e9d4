"""`irqsim exec`: MIPS programs on the execution-driven core, end to end.

The ISS itself is checked instruction by instruction and against qemu-mips
in crates/mips/tests; here: the command, its JSON, its errors, the shipped
ELFs matching their sources, and qemu agreement through the CLI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from irqsim import ConfigError, InputError, IrqsimError
from irqsim import exec as mips

ROOT = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI") == "true"


def needs(tool: str) -> None:
    """Skip (outside CI only) when a tool is missing; in CI it is installed by .ci/run."""
    if shutil.which(tool) is None:
        if IN_CI:
            pytest.fail(f"{tool} is required in CI")
        pytest.skip(f"{tool} not installed (apt-get install gcc-mips-linux-gnu qemu-user)")


def test_exec_prints_and_exits_with_the_programs_code(cli):
    p = cli("exec", "switch")
    assert p.returncode == 3, p.stderr
    assert p.stdout.splitlines()[1:] == ["seven", "hundred", "write", "minus three", "other"]


def test_exec_json_schema(cli):
    p = cli("exec", "strings", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert list(doc)[:6] == ["exit_code", "stdout", "stderr", "instructions", "cycles", "wall_seconds"]
    assert doc["stdout"].endswith("HELLO, MIPS\n") and doc["stderr"] == "to stderr\n"
    assert doc["cycles"] >= doc["instructions"] > 1000
    assert "caches" not in doc


def test_exec_json_has_cache_statistics_when_configured():
    r = mips.run("recursion", ["memory.model=caches", "l1d.size_bytes=1024"])
    assert r["exit_code"] == 55
    c = r["caches"]
    assert set(c) == {"l1i", "l1d", "l2"}
    assert c["l1i"]["accesses"] == r["instructions"]
    assert 0 < c["l2"]["misses"] <= c["l2"]["accesses"] == c["l1i"]["misses"] + c["l1d"]["misses"]


def test_timing_changes_cycles_not_results():
    base = mips.run("arith")
    slow = mips.run("arith", ["pipeline.mult_cycles=40", "memory.model=caches", "memory.latency_cycles=300"])
    assert slow["stdout"] == base["stdout"] and slow["instructions"] == base["instructions"]
    assert slow["cycles"] > base["cycles"]


def test_deterministic():
    a, b = (mips.run("llsc", ["memory.model=caches", "core.threads=2"]) for _ in range(2))
    a.pop("wall_seconds"), b.pop("wall_seconds")
    assert a == b


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--set", "core.bogus=1"], "core.bogus: unknown field `bogus`"),
        (["--set", "core.threads=x"], "core.threads: invalid type: string \"x\", expected an integer"),
        (["--set", "l2.ways=4"], "l2.ways: only used when `memory.model` is `caches` (it is `perfect`)"),
        (["--set", "core.threads=17"], "core.threads: must be 1..=16, got 17"),
        (["--set", "memory.model=caches", "--set", "l1d.ways=3"], "l1d: size_bytes"),
        (["--set", "memory.model=caches", "--set", "l2.way_masks=0:0x5"], "not a non-empty run of contiguous ones"),
        (["--set", "noequals"], "expected KEY=VALUE"),
    ],
)
def test_bad_settings_one_line_exit_2(cli, args, needle):
    p = cli("exec", "arith", *args)
    assert p.returncode == 2
    assert needle in p.stderr and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_bad_elf_one_line_naming_the_file(cli, tmp_path):
    bad = tmp_path / "bad.elf"
    bad.write_bytes(b"\x7fELF" + b"\x01\x02" + bytes(10))
    p = cli("exec", str(bad))
    assert p.returncode == 2 and str(bad) in p.stderr and len(p.stderr.strip().splitlines()) == 1
    with pytest.raises(InputError, match="bad.elf"):
        mips.run(bad)
    with pytest.raises(IrqsimError, match="no such file"):
        mips.run(tmp_path / "missing.elf")
    with pytest.raises(ConfigError, match="run.max_cycles"):
        mips.run("recursion", ["run.max_cycles=1000"])


def test_unsupported_instruction_names_pc_word_and_program(tmp_path):
    # Patch an FPU instruction (add.s, 0x46000000) over main's first word.
    src = mips.program_path("funcptr").read_bytes()
    elf = bytearray(src)
    text_off, text_addr = _text_of(elf)
    main = _symbol(elf, b"main")
    off = text_off + main - text_addr
    elf[off : off + 4] = (0x46000000).to_bytes(4, "big")
    p = tmp_path / "fpu.elf"
    p.write_bytes(elf)
    with pytest.raises(IrqsimError, match=rf"fpu.elf: unsupported instruction .* at pc 0x{main:08x} \(instruction 0x46000000\)"):
        mips.run(p)


def _sections(elf: bytes):
    shoff = int.from_bytes(elf[32:36], "big")
    n, ent = int.from_bytes(elf[48:50], "big"), int.from_bytes(elf[46:48], "big")
    return [[int.from_bytes(elf[shoff + i * ent + k : shoff + i * ent + k + 4], "big") for k in range(0, 40, 4)] for i in range(n)]


def _text_of(elf: bytes):
    sh = [s for s in _sections(elf) if s[1] == 1 and s[2] & 4]  # PROGBITS, executable
    return sh[0][4], sh[0][3]


def _symbol(elf: bytes, name: bytes) -> int:
    secs = _sections(elf)
    sym = next(s for s in secs if s[1] == 2)
    strtab = secs[sym[6]]
    for k in range(sym[4], sym[4] + sym[5], 16):
        nm = int.from_bytes(elf[k : k + 4], "big")
        start = strtab[4] + nm
        if elf[start : elf.index(b"\0", start)] == name:
            return int.from_bytes(elf[k + 4 : k + 8], "big")
    raise KeyError(name)


@pytest.mark.parametrize("name", sorted(p.stem for p in mips.PROGRAMS.glob("*.elf")))
def test_same_as_qemu_through_the_cli(cli, name):
    needs("qemu-mips")
    q = subprocess.run(["qemu-mips", str(mips.PROGRAMS / f"{name}.elf")], capture_output=True, timeout=60)
    p = cli("exec", name)
    assert (p.returncode, p.stdout, p.stderr) == (q.returncode, q.stdout.decode(), q.stderr.decode())


def test_shipped_elfs_match_their_sources():
    needs("mips-linux-gnu-gcc")
    p = subprocess.run([str(ROOT / "programs" / "build.sh"), "--check"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr


def test_pinning_keys_apply_before_the_run():
    base = ["memory.model=caches", "l1d.size_bytes=1024", "l1d.ways=2"]
    # frame[1514] starts on a line boundary (0x410800): 48 lines of 32 bytes,
    # at most one per set of a 4 KiB 2-way L1D (64 sets), so all stay locked.
    r = mips.run("rx_checksum", [*base[:1], "l1d.size_bytes=4096", "l1d.lock_range=frame"])
    assert r["caches"]["l1d"]["locked_lines"] == 48
    # 48 lines cannot be pinned in a 1 KiB cache (32 lines).
    with pytest.raises(ConfigError, match="l1d.lock_range: range 0x00410800\\+1514 spans 48 lines, more than the cache's 32"):
        mips.run("rx_checksum", [*base, "l1d.lock_range=frame"])
    locked = mips.run("rx_checksum", [*base, "l1d.lock_range=0x10000000+64"])
    assert locked["caches"]["l1d"]["locked_lines"] == 2
    traced = mips.run("rx_checksum", [*base, "l1i.trace_threads=0"])
    assert traced["caches"]["l1i"]["locked_lines"] > 0
    # The frame's 48 lines are written, then read. In 2 KiB (32 sets x 2 ways)
    # the read hits. Way 0 alone is direct-mapped over 32 sets: lines 32-47
    # evict lines 0-15, so the read misses lines 0-15 and 32-47 again: +32.
    two_k = ["memory.model=caches", "l1d.size_bytes=2048", "l1d.ways=2"]
    masked = mips.run("rx_checksum", [*two_k, "l1d.way_masks=0:0x1"])
    plain = mips.run("rx_checksum", two_k)
    assert masked["caches"]["l1d"]["misses"] == plain["caches"]["l1d"]["misses"] + 32
    assert masked["stdout"] == plain["stdout"]
    with pytest.raises(ConfigError, match=r"l1d.lock_range: no symbol \"nosuch\""):
        mips.run("rx_checksum", [*base, "l1d.lock_range=nosuch"])
    with pytest.raises(ConfigError, match="thread 5"):
        mips.run("rx_checksum", [*base, "l2.trace_threads=5"])


def test_smt_threads_each_run_the_program():
    one = mips.run("rx_checksum")
    two = mips.run("rx_checksum", ["core.threads=2", "core.policy=icount"])
    assert sorted(two["stdout"]) == sorted(one["stdout"] * 2)  # the two threads' writes interleave
    assert [t["instructions"] for t in two["threads"]] == [one["instructions"]] * 2
    # Two threads share one issue slot: more cycles than one thread alone, fewer than two in a row.
    assert one["cycles"] < two["cycles"] < 2 * one["cycles"]
    reserved = mips.run("rx_checksum", ["core.threads=2", "core.interrupt_thread=1"])
    assert reserved["stdout"] == one["stdout"] and reserved["threads"][1]["instructions"] == 0


def test_code_pins_through_device_registers():
    # programs/system/pinning.c: a 2 KiB table (64 lines of 32 bytes) re-read after a flood.
    out = mips.run("system/pinning", ["memory.model=caches"])["stdout"]
    assert out.splitlines() == ["unpinned_misses=64", "pinned_misses=0", "unlocked_misses=64", "thread=0", "cycles_advance=1"]
    # Direct-mapped: the flood finds every way of the table's sets locked and
    # replaces way 0 as if unlocked (ARM1176), so pinning cannot hold the table.
    out = mips.run("system/pinning", ["memory.model=caches", "l1d.ways=1"])["stdout"]
    assert "pinned_misses=64" in out
    # Perfect memory: no caches, the controls do nothing, nothing misses.
    assert "unpinned_misses=0" in mips.run("system/pinning")["stdout"]


@pytest.mark.parametrize(
    "sets",
    [
        ["core.threads=2"],
        ["core.threads=2", "core.policy=icount", "memory.model=caches"],
        ["core.cores=2", "core.threads=2"],
        ["core.cores=3", "memory.model=caches", "l2.shared=false"],
    ],
)
def test_ll_sc_counter_from_c_is_exact_across_threads_and_cores(sets):
    # programs/system/threads.c: every hardware thread adds 1 to a shared counter 5,000 times.
    r = mips.run("system/threads", sets)
    n = len(r["threads"])
    assert r["exit_code"] == 0 and r["stdout"] == f"threads={n}\ncounter={5000 * n}\n"
    assert all(t["instructions"] > 5000 for t in r["threads"])
