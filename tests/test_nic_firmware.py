"""The nic-firmware study and `irqsim ilp`, end to end: the programmable
NIC on the machine (`irqsim.run` of nic-firmware/duplex-64), its measured
window, and the offline VLIW scheduler over it (the model itself is tested
in crates/firmware/tests and crates/core/tests/firmware_*.rs)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from irqsim import ConfigError, InputError, InvariantError, IrqsimError, api
from irqsim._core import vliw_table
from irqsim.studies import nic_firmware as study

from conftest import interrupt

FW = study.FIRMWARE
ROOT = Path(__file__).resolve().parent.parent
SCENARIO = "nic-firmware/duplex-64"


def window(sets: dict) -> dict:
    """The measured window of a short run of the study's 64 B scenario."""
    return api.run(SCENARIO, {"nic_firmware.window_frames": 400, "nic_firmware.warmup_frames": 50, **sets}).to_dict()["nic_firmware"]


@pytest.fixture(scope="module")
def small():
    """A short run's window (1 core)."""
    return window({})


def test_report_has_bins_that_add_up(small):
    total = sum(small["bins"].values())
    assert total == small["cycles"] * small["cores"]
    assert small["sent"] + small["received"] == small["frames"] >= 400
    names = [h["name"] for h in small["handlers"]]
    assert names[:3] == ["mailbox", "fetch_send_bds", "fetch_recv_bds"] and all(h["invocations"] > 0 for h in small["handlers"][:8])


def test_vliw_table_is_monotone_in_units(small):
    t = json.loads(vliw_table(FW, json.dumps(small["profile"]), "p", ["1/1/1", "3/3/1", "6/6/1"]))
    ipc = [r["ipc"] for r in t["rows"]]
    assert ipc[0] <= ipc[1] <= ipc[2]
    # A wider VLIW never takes more bundles than the single-issue run took cycles.
    assert all(r["bundles"] <= t["profile"]["cycles"] for r in t["rows"])


def test_task_owners_balance_by_longest_first():
    # Costs 8..1 over 3 cores, each to the least loaded (ties: lowest core):
    # 8->0, 7->1, 6->2, 5->2, 4->1, 3->0, then all at 11: 2->0, 1->1.
    owners = study.task_owners([8, 7, 6, 5, 4, 3, 2, 1], 3)
    assert owners == [0, 1, 2, 2, 1, 0, 0, 1]
    assert study.task_owners([1] * 8, 1) == [0] * 8
    with pytest.raises(ConfigError, match="8 handlers"):
        study.task_owners([1, 2], 2)


def test_bad_input_is_one_error():
    with pytest.raises(ConfigError, match="`nic_firmware.cores`: must be 1..=8, got 0"):
        window({"nic_firmware.cores": 0})
    with pytest.raises(ConfigError, match="units"):
        vliw_table(FW, "{}", "p", ["3/3"])
    with pytest.raises(InputError, match="p.json: frames"):
        vliw_table(FW, '{"counts": []}', "p.json", ["1/1/1"])


def test_reproduce_rows(monkeypatch):
    monkeypatch.setenv("IRQSIM_NIC_FRAMES", "600")
    rows = study.reproduce()
    table2 = [r for r in rows if r.experiment.startswith("Table 2") and r.unit == "frames/kcycle"]
    assert [r.paper for r in table2] == [2.64, 5.59, 10.37, 11.61]
    assert all(a.simulated < b.simulated for a, b in zip(table2, table2[1:]))
    assert len([r for r in rows if r.experiment.startswith("Table 1")]) == 15  # 7 x (throughput, IPC) + saturation
    assert any(r.experiment.startswith("Willmann") for r in rows)
    bins = study.bins_table(600)
    assert len(bins) == 24 and all(0 <= b["lock_spin"] < 1 for b in bins)
    assert len(study.handlers_table(600)) == 18


def test_ilp_cli(cli, tmp_path):
    prof = tmp_path / "p.json"
    p = cli("ilp", "firmware/nic", "--profile", str(prof), "--record", "--set", "nic_firmware.window_frames=300", "--units", "1/1/1", "--units", "3/3/1", "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["rows"]
    assert [r["units"] for r in rows] == ["1/1/1", "3/3/1"] and prof.exists()
    p = cli("ilp", "firmware/nic", "--profile", str(prof))
    assert p.returncode == 0 and "6/6/1" in p.stdout


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--profile", "missing.json"], "missing.json: cannot read the profile"),
        (["--profile", "PROF", "--units", "3/x/1"], "units"),
        (["--profile", "PROF", "--record", "--set", "nic_firmware.batch=99"], "`nic_firmware.batch`: must be 1..=16, got 99"),
        (["--profile", "BROKEN"], "broken.json: not JSON"),
        (["--profile", "PROF", "--record", "--set", "nic_firmware.window_frames=10", "x.elf"], "x.elf: no such file"),
        (["--profile", "PROF", "--record", "arith.elf"], "no symbol fw_main (is this the NIC firmware?)"),
    ],
)
def test_ilp_bad_input_one_line_exit_2(cli, tmp_path, args, needle):
    prof = tmp_path / "p.json"
    prof.write_text(json.dumps({"frames": 1, "cycles": 1, "instructions": 1, "counts": [["0x00400110", 1]]}))
    (tmp_path / "broken.json").write_text("{not json")
    program = next((a for a in args if a.endswith(".elf")), "firmware/nic")
    args = [{"PROF": str(prof), "BROKEN": "broken.json"}.get(a, a) for a in args if not a.endswith(".elf")]
    p = cli("ilp", program, *args, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert needle in p.stderr and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_figure(tmp_path, monkeypatch):
    monkeypatch.setenv("IRQSIM_NIC_FRAMES", "600")
    study.figure(tmp_path / "cores.png")
    assert (tmp_path / "cores.png").read_bytes().startswith(b"\x89PNG")


def test_bad_frame_count_is_one_line():
    env = {**os.environ, "IRQSIM_NIC_FRAMES": "lots"}
    p = subprocess.run([sys.executable, "-m", "irqsim.cli", "reproduce", "nic-firmware"], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 2 and "IRQSIM_NIC_FRAMES: expected an integer" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def compiled(tmp_path: Path, old: str, new: str) -> Path:
    """The firmware with ``old`` in fw.c replaced by ``new``, built as the
    shipped one is (skipped without the cross-compiler, except in CI)."""
    cc = "mips-linux-gnu-gcc"
    if shutil.which(cc) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{cc} is required in CI")
        pytest.skip(f"{cc} not installed")
    src = ROOT / "programs"
    work = tmp_path / "firmware"
    shutil.copytree(src / "firmware", work)
    (tmp_path / "rt").symlink_to(src / "rt")
    fw = (work / "fw.c").read_text()
    assert old in fw
    (work / "fw.c").write_text(fw.replace(old, new))
    elf = tmp_path / "bad.elf"
    flags = "-march=r4000 -mabi=32 -mno-abicalls -fno-pic -O2 -static -nostdlib -ffreestanding -fno-builtin -fno-stack-protector".split()
    subprocess.run([cc, *flags, "-o", str(elf), str(src / "rt/start.S"), str(src / "rt/rt.c"), str(work / "fw.c"), str(work / "sync.c")], check=True)
    return elf


@pytest.mark.parametrize(
    "order,skip,needle",
    [
        ("deliver_in_order(&tx_order, t.first, t.n, transmit);", "transmit(t.first, t.n);", "nic_firmware: the NIC sent frame"),
        ("deliver_in_order(&rx_order, first, n, host_deliver);", "host_deliver(first, n);", "nic_firmware: .*(out of order|returned at)"),
    ],
)
def test_the_checks_catch_firmware_without_its_order(tmp_path, order, skip, needle):
    """The firmware with one in-order section removed breaks the wire's or
    the host's check on 4 cores in the study's runs (the checks can fail)."""
    elf = compiled(tmp_path, order, skip)
    with pytest.raises(InvariantError, match=needle):
        window({"nic_firmware.program": str(elf), "nic_firmware.cores": 4, "nic_firmware.window_frames": 2000})
    window({"nic_firmware.program": str(elf)})  # one core keeps order by itself


RECEIVE = "HANDLER u32 receive(void)\n{\n"


@pytest.mark.parametrize(
    "statement,needle",
    [
        ('__asm__ volatile(".word 0x46000000");', "unsupported instruction (no FPU, coprocessor or 64-bit operations) in receive"),
        ("NIC(0x7F0) = 1;", "device register 0xbf0107f0: no such NIC register (or read-only) in receive"),
        ("for (;;) ;", "has not read the event flags for 1000000 cycles (an infinite loop?) in receive"),
    ],
    ids=["unsupported", "fault", "infinite-loop"],
)
def test_bad_firmware_is_one_error_naming_program_function_and_pc(tmp_path, cli, statement, needle):
    """A fault, an unsupported instruction or an infinite loop in a handler:
    one line naming the program, the function and the PC, from Python and
    from the CLI (exit 2)."""
    elf = compiled(tmp_path, RECEIVE, RECEIVE + statement + "\n")
    for cores in (1, 3):
        with pytest.raises(IrqsimError) as e:
            window({"nic_firmware.program": str(elf), "nic_firmware.cores": cores, "nic_firmware.window_frames": 2000})
        msg = str(e.value)
        assert f"nic_firmware: {elf}: " in msg and needle in msg and " at pc 0x00" in msg and "\n" not in msg, msg
    p = cli("ilp", str(elf), "--profile", str(tmp_path / "p.json"), "--record")
    assert p.returncode == 2 and f"nic_firmware: {elf}: " in p.stderr and needle in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_ctrl_c_stops_a_long_firmware_run(tmp_path):
    """SIGINT during a firmware run far too long to finish stops it through
    the CLI's usual path: exit 130, one line."""
    go = (
        "import sys; from irqsim.cli import main; print('go', flush=True); "
        f"main(['ilp', 'firmware/nic', '--profile', {str(tmp_path / 'p.json')!r}, '--record', "
        "'--set', 'nic_firmware.window_frames=100000000', '--set', 'run.duration_ms=3600000', '--set', 'run.max_events=1000000000000'])"
    )
    p = subprocess.Popen([sys.executable, "-c", go], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = interrupt(p, b"go\n", delay=1.0)  # well inside the run (it would take hours)
    assert p.returncode == 130 and err == "error: interrupted\n"


def test_the_machine_catches_firmware_without_its_receive_order(tmp_path):
    """The same broken firmware as the NIC of irqsim's machine: the host's
    check of the returned frames ends the run with an invariant error."""
    from irqsim import api

    elf = compiled(tmp_path, "deliver_in_order(&rx_order, first, n, host_deliver);", "host_deliver(first, n);")
    sets = {"nic_firmware.program": str(elf), "workload.packet_bytes": 64, "workload.rate_per_s": 5e6, "driver.isr_rx_done_cycles": 20, "run.duration_ms": 1.0}
    with pytest.raises(InvariantError, match="nic_firmware: .*(out of order|returned at)"):
        api.run("compose/rx-firmware", {**sets, "nic_firmware.cores": 4})
    api.run("compose/rx-firmware", {**sets, "nic_firmware.cores": 1})  # one core keeps order by itself


def test_beyond_the_paper_on_a_host():
    """The programmable NIC in front of a host: at 1518 bytes it interrupts
    less than the e1000-like NIC and leaves the application more; at 64
    bytes the host saturates and only the hot thread keeps the application."""
    from irqsim.studies import nic_host

    rows = {(r["frame_bytes"], r["nic"].split(" ")[0], r["host"]): r for r in nic_host.table()}
    assert len(rows) == 8
    prog, e1000 = rows[(1518, "programmable", "one thread")], rows[(1518, "e1000-like", "one thread")]
    assert prog["dropped_share"] == 0 and e1000["dropped_share"] == 0
    assert prog["interrupts_per_s"] < 0.7 * e1000["interrupts_per_s"]
    assert prog["application_cpus"] > e1000["application_cpus"]
    assert prog["latency_p50_us"] > e1000["latency_p50_us"]
    for nic in ("programmable", "e1000-like"):
        assert rows[(64, nic, "one thread")]["application_cpus"] < 0.05
        assert rows[(64, nic, "hot thread")]["application_cpus"] > 0.99
        assert rows[(64, nic, "one thread")]["dropped_share"] > 0.5
