"""Kernel code on the machine (``[code]``): the bundled example through the
API and the output directory, and every way to misconfigure it answered with
one line and exit status 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

import irqsim
from irqsim.cli import main

SCENARIO = Path(irqsim.__file__).parent / "scenarios" / "code" / "rx-min.toml"


def test_code_bins_count_each_activity():
    r = irqsim.run(SCENARIO, {"code.core.memory.model": "caches", "run.duration_ms": 5.0})
    bins = r.code_bins
    assert list(bins.index.names) == ["thread", "bin"]
    assert set(bins.loc[0].index) == {"user", "kernel", "interrupt", "bottom_half"}
    assert (bins["instructions"] > 0).all()
    assert r.metrics["code_bottom_half_l1d_misses"] == bins.loc[(0, "bottom_half"), "l1d_misses"]
    assert r.metrics["rx_delivered"] > 0


def test_abstract_runs_have_no_code_bins():
    r = irqsim.run(Path(irqsim.__file__).parent / "scenarios" / "compose" / "rx-direct-single.toml", {"run.duration_ms": 1.0})
    assert r.code_bins.empty
    assert "code_kernel_instructions" not in r.metrics


def test_output_directory_keeps_code_bins_and_reloads(tmp_path, capsys):
    out = tmp_path / "run"
    main(["run", str(SCENARIO), "--set", "run.duration_ms=3", "-o", str(out)])
    assert (out / "code_bins.parquet").exists()
    df = pd.read_parquet(out / "code_bins.parquet")
    assert {"thread", "bin", "instructions"} <= set(df.columns)
    # config.toml names the program by an absolute path, so it runs from anywhere.
    again = irqsim.run(out / "config.toml")
    first = json.loads((out / "metrics.json").read_text())["metrics"]
    assert again.metrics["rx_delivered"] == first["rx_delivered"]


def plain_scenario(tmp: Path, kind: str = "arrivals") -> Path:
    workload = {
        "arrivals": 'kind = "arrivals"\nprocess = "poisson"\nrate_per_s = 1000.0\npacket_bytes = 512\n',
        "send-flood": 'kind = "flood"\ndirection = "tx"\npacket_bytes = 512\n',
    }[kind]
    program = (SCENARIO.parent / "../../programs/system/rx_min.elf").resolve()
    p = tmp / "s.toml"
    p.write_text(f'[run]\nduration_ms = 1.0\n[cpu]\nclock_mhz = 200.0\n[code]\nprogram = "{program}"\n[workload]\n{workload}')
    return p


def with_core(tmp: Path, core: str) -> Path:
    """A code scenario whose `[code.core]` tables start on line 9."""
    p = tmp / "c.toml"
    program = SCENARIO.parent / "../../programs/system/rx_min.elf"
    workload = 'kind = "arrivals"\nprocess = "poisson"\nrate_per_s = 1000.0\npacket_bytes = 512\n'
    p.write_text(f'[run]\nduration_ms = 1.0\n[cpu]\nclock_mhz = 200.0\n[nic]\nlink_mbps = 1000.0\n[code]\nprogram = "{program.resolve()}"\n{core}[workload]\n{workload}')
    return p


def no_code(tmp: Path) -> Path:
    p = tmp / "n.toml"
    p.write_text('[run]\nduration_ms = 1.0\n[cpu]\nclock_mhz = 200.0\n[workload]\nkind = "arrivals"\nprocess = "poisson"\nrate_per_s = 1000.0\npacket_bytes = 512\n')
    return p


CASES = [
    ("key-without-program", lambda t: [str(no_code(t)), "--set", "code.flows=4"], r"`code\.flows`: only used when `code\.program` is set"),
    ("missing-program", lambda t: [str(no_code(t)), "--set", 'code.program="nope.elf"'], r"`code\.program`: .*nope\.elf"),
    ("not-an-elf", lambda t: [str(no_code(t)), "--set", f'code.program="{no_code(t)}"'], r"`code\.program`: .*n\.toml"),
    ("missing-symbol", lambda t: [str(SCENARIO), "--set", 'code.isr="no_such_isr"'], r"`code\.isr`: no symbol `no_such_isr`"),
    ("topology", lambda t: [str(SCENARIO), "--set", "cpu.threads=2", "--set", "code.core.core.threads=1"], r"`code\.core\.core\.threads`: 1 core\(s\) x 1 thread\(s\) is 1, but cpu\.threads is 2"),
    ("app-thread", lambda t: [str(SCENARIO), "--set", "code.app_thread=3"], r"`code\.app_thread`"),
    ("tx-irq-thread", lambda t: [str(SCENARIO), "--set", "code.tx_irq_thread=1"], r"`code\.tx_irq_thread`: thread 1 does not exist"),
    ("bad-core-key", lambda t: [str(SCENARIO), "--set", 'code.core=["l9.size_bytes=1"]'], r"`code\.core`: .*l9\.size_bytes"),
    ("core-not-strings", lambda t: [str(SCENARIO), "--set", "code.core=[1]"], r"`code\.core\[0\]`: invalid type"),
    ("core-list-range", lambda t: [str(SCENARIO), "--set", 'code.core=["memory.model=caches", "l1d.ways=65"]'], r"`code\.core\.l1d\.ways`: must be 1\.\.=64, got 65"),
    ("core-table-range", lambda t: [str(with_core(t, "[code.core.memory]\nmodel = \"caches\"\n[code.core.l1d]\nsize_bytes = 3\n"))], r"c\.toml:12: `code\.core\.l1d\.size_bytes`: must be 4\.\.="),
    ("core-cache-without-caches", lambda t: [str(SCENARIO), "--set", "code.core.l2.ways=4"], r"`code\.core\.l2\.ways`: only used when `code\.core\.memory\.model` is `caches`"),
    ("core-unknown-section", lambda t: [str(with_core(t, "[code.core.l3]\nways = 4\n"))], r"c\.toml:9: `code\.core\.l3`: unknown section `l3`"),
    ("core-run-guard", lambda t: [str(SCENARIO), "--set", "code.core.run.max_cycles=5"], r"`code\.core\.run`: unknown section `run`"),
    ("core-pin-syntax", lambda t: [str(with_core(t, "[code.core.memory]\nmodel = \"caches\"\n[code.core.l1d]\nway_masks = \"0-3\"\n"))], r"c\.toml:12: `code\.core\.l1d\.way_masks`: \"0-3\": expected THREAD:MASK"),
    ("driver-key", lambda t: [str(SCENARIO), "--set", "driver.send_cycles=5"], r"`driver\.send_cycles`: the kernel's software is code"),
    ("app-key", lambda t: [str(SCENARIO), "--set", "app.thread=0"], r"`app\.thread`: the kernel's software is code"),
    ("masking", lambda t: [str(SCENARIO), "--set", "masking.driver_section_cycles=100"], r"`masking\.driver_section_cycles`: the kernel's software is code"),
    ("send-entry", lambda t: [str(plain_scenario(t, "send-flood")), "--set", 'code.send="no_such_send"'], r"the workload sends a frame, but the program has no send entry \(`code\.send`\)"),
    ("kernel-syscall", lambda t: [str(SCENARIO), "--set", 'code.isr="main"'], r"rx-min\.toml: .*kernel code made system call 4004 in put_str\+0x[0-9a-f]+ at pc 0x"),
]


@pytest.mark.parametrize("args, pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_code_settings_get_one_line_and_status_2(tmp_path, capsys, args, pattern):
    with pytest.raises(SystemExit) as e:
        main(["run", *args(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2, err
    assert len(err.splitlines()) == 1, err
    assert re.search(pattern, err), err
    assert "Traceback" not in err
