"""`irqsim run -o DIR`: the output directory, and the Python API's
friction points (paths with `=`, to_json/to_dict, integer counts)."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

import irqsim
from irqsim import api, provenance


def test_output_directory(cli, tmp_path):
    out = tmp_path / "run1"
    p = cli("run", "mt-interrupts/full-stack-multithreaded", "--set", "run.duration_ms=5", "-o", str(out), "--timeline", "--json")
    assert p.returncode == 0, p.stderr
    assert {f.name for f in out.iterdir()} == {"config.toml", "metrics.json", "bins.parquet", "context_bins.parquet", "latencies.parquet", "timeline.json"}
    # config.toml is the resolved scenario: loading it gives the same scenario back.
    assert irqsim.validate(out / "config.toml") == irqsim.validate("mt-interrupts/full-stack-multithreaded", {"run.duration_ms": 5})
    doc = json.loads((out / "metrics.json").read_text())
    assert doc["metrics"] == json.loads(p.stdout)["metrics"]
    prov = doc["provenance"]
    assert prov["irqsim_version"] == irqsim.__version__ and prov["scenario"] == "mt-interrupts/full-stack-multithreaded"
    assert prov["overrides"] == ["run.duration_ms=5"] and len(prov["scenario_sha256"]) == 64
    bins = pd.read_parquet(out / "bins.parquet")
    assert (bins.drop(columns="thread").sum(axis=1) == doc["metrics"]["sim_cycles"]).all()
    assert len(pd.read_parquet(out / "latencies.parquet")) == doc["metrics"]["rx_delivered"]
    assert set(pd.read_parquet(out / "context_bins.parquet")["context"]) == {"C1 app", "C2 isr", "C3 protocol"}
    assert any(e["ph"] == "X" for e in json.loads((out / "timeline.json").read_text())["traceEvents"])


def test_output_without_timeline(cli, tmp_path):
    p = cli("run", "mt-interrupts/driver-rx-single", "--set", "run.duration_ms=1", "-o", str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "o" / "timeline.json").exists()


def test_path_with_equals_sign_is_a_file(tmp_path, cli):
    """Hydra-style directories (`packet_bytes=64/`) hold scenario files, not TOML text."""
    d = tmp_path / "packet_bytes=64"
    d.mkdir()
    shutil.copy(irqsim.scenario_path("mt-interrupts/driver-rx-single"), d / "s.toml")
    r = irqsim.run(str(d / "s.toml"), {"run.duration_ms": 1.0})
    assert r.metrics["rx_delivered"] > 0
    assert cli("validate", str(d / "s.toml")).returncode == 0
    assert api.source("a = 1") == {"text": "a = 1"}


def test_to_json_is_text_and_to_dict_a_dict():
    r = irqsim.run("mt-interrupts/driver-rx-single", {"run.duration_ms": 1.0})
    assert isinstance(r.to_json(), str) and json.loads(r.to_json()) == r.to_dict()


def test_counts_are_ints_and_quantities_floats(cli):
    r = irqsim.run("msi-latency/workstation-idle", {"run.duration_ms": 2.0})
    m = r.metrics
    for k in ("interrupts_raised", "interrupts_lost", "tasklet_runs", "spurious_interrupts"):
        assert type(m[k]) is int, k
    for k in ("isr_latency_p50_us", "max_interrupts_per_s", "cpu_cycles_per_interrupt", "user_share"):
        assert type(m[k]) is float, k
    p = cli("run", "mt-interrupts/driver-rx-single", "--set", "run.duration_ms=2", "--json")
    doc = json.loads(p.stdout)["metrics"]
    assert '"events": ' in p.stdout and '"events": ' + str(doc["events"]) + "," in p.stdout
    assert type(doc["events"]) is int and type(doc["sim_cycles"]) is int and type(doc["sim_seconds"]) is float
    masked = irqsim.run("optimistic-spl/luna88k-modelled", {"run.duration_ms": 1.0}).metrics
    assert type(masked["rpcs"]) is int and type(masked["cycles_per_rpc"]) is float


def _cli_json(capsys, *args: str) -> dict:
    """`irqsim ARGS... --json` run in this process (37 scenarios: no subprocess each)."""
    from irqsim.cli import main

    capsys.readouterr()
    try:
        main([*args, "--json"])
    except SystemExit as e:
        assert e.code == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", api.bundled())
def test_every_run_directory_reloads_bit_for_bit(name, tmp_path, capsys):
    """`irqsim run NAME -o DIR` then `irqsim run DIR/config.toml`: the same
    metrics and bins, bit for bit (regression: MSI scenarios wrote
    `intc.vectors`, which the loader refuses; traces' relative paths broke)."""
    first = _cli_json(capsys, "run", name, "-o", str(tmp_path / "r"))
    again = _cli_json(capsys, "run", str(tmp_path / "r" / "config.toml"))
    assert json.dumps(again, sort_keys=True) == json.dumps(first, sort_keys=True)


@pytest.mark.parametrize(
    ("name", "sets"),
    [
        ("livelock/e1000-forward", ['intc.kind="msix"']),  # the case: the writer emitted intc.vectors
        ("livelock/e1000-forward", ['intc.kind="msi"', "coalesce.adaptive_rx=true"]),
        ("livelock/rss", ["rss.queues=4", "napi.busy_poll_usecs=50", "app.background=false"]),
        ("mt-interrupts/driver-rx-single", ['cpu.context_policy="multithreaded"']),
        ("msi-latency/soc-idle", ['intc.kind="xtpic"']),
        ("code/rx-min", ["cpu.threads=2"]),
        ("code/kernel-per-core", ["app.background=true", "app.thread=1"]),  # the abstract kernel's application beside code
        ("code/kernel-per-core", ["stack.enabled=true"]),  # and its stack (the writer left [stack] out beside code)
        ("mt-interrupts/driver-tx-single", ["cpu.threads=2"]),  # a send flood: the writer's app.background was refused back
    ],
)
def test_a_run_directory_with_overrides_reloads_bit_for_bit(name, sets, tmp_path, capsys):
    """Overrides that switch parts on or off are written so that the loader takes them back."""
    flags = [a for s in ["run.duration_ms=1", *sets] for a in ("--set", s)]
    first = _cli_json(capsys, "run", name, *flags, "-o", str(tmp_path / "r"))
    again = _cli_json(capsys, "run", str(tmp_path / "r" / "config.toml"))
    assert json.dumps(again, sort_keys=True) == json.dumps(first, sort_keys=True)


def test_metrics_json_has_units_and_provenance(cli, tmp_path):
    """metrics.json names each metric's unit (from the core's declarations)
    and what produced it: build, command line, host, start, CPU and wall seconds."""
    out = tmp_path / "r"
    p = cli("run", "msi-latency/soc-idle", "--set", "run.duration_ms=2", "-o", str(out))
    assert p.returncode == 0, p.stderr
    doc = json.loads((out / "metrics.json").read_text())
    assert set(doc["units"]) == set(doc["metrics"])
    assert doc["units"]["isr_latency_p99_us"] == "µs" and doc["units"]["busy_share"] == "share"
    prov = doc["provenance"]
    assert prov["irqsim_commit"] == irqsim._core.BUILD["commit"] and prov["irqsim_dirty"] in (True, False, None)
    assert prov["irqsim_build"] == provenance.build_id() and prov["irqsim_build"].startswith(prov["irqsim_commit"] if prov["irqsim_dirty"] is not None else irqsim.__version__)
    assert "run msi-latency/soc-idle --set run.duration_ms=2 -o" in prov["command"] and prov["host"]
    assert prov["started_utc"].endswith("+00:00") and prov["wall_seconds"] > 0 and 0 < prov["cpu_seconds"] < 60


def test_provenance_names_each_input_file_with_its_hash(cli, tmp_path):
    """A run that reads files besides its scenario (a trace's capture and
    system-call log) names each in metrics.json with its sha256; one that
    reads none lists none."""
    import hashlib

    out = tmp_path / "r"
    p = cli("run", "mt-interrupts/trace-loopback", "--set", "run.duration_ms=1", "-o", str(out))
    assert p.returncode == 0, p.stderr
    inputs = json.loads((out / "metrics.json").read_text())["provenance"]["inputs"]
    assert [i["key"] for i in inputs] == ["workload.pcap", "workload.strace"]
    for i in inputs:
        with open(i["path"], "rb") as f:
            assert i["sha256"] == hashlib.sha256(f.read()).hexdigest()
    assert api.inputs("livelock/receiver") == []
    assert [i["key"] for i in api.inputs("code/rx-min")] == ["code.program"]


def test_reusing_an_output_directory_removes_the_earlier_runs_files(cli, tmp_path):
    """A run without --timeline into the directory of one with it leaves no
    stale timeline.json (which `plot timeline DIR` would draw); other files stay."""
    out = tmp_path / "r"
    assert cli("run", "code/rx-min", "-o", str(out), "--timeline").returncode == 0
    (out / "notes.txt").write_text("mine")
    assert {"timeline.json", "code_bins.parquet"} <= {f.name for f in out.iterdir()}
    assert cli("run", "mt-interrupts/driver-rx-single", "--set", "run.duration_ms=1", "-o", str(out)).returncode == 0
    names = {f.name for f in out.iterdir()}
    assert "timeline.json" not in names and "code_bins.parquet" not in names and "notes.txt" in names
    assert json.loads((out / "metrics.json").read_text())["provenance"]["scenario"] == "mt-interrupts/driver-rx-single"


def test_script_events_file_is_named_absolutely_and_reruns(cli, tmp_path):
    """A script's `events_file` runs as the same events inline, and config.toml
    names it by an absolute path, so the written scenario runs from anywhere."""
    (tmp_path / "ev.csv").write_text("at_cycle,action,bytes\n0,receive,512\n100,send,64\n200,syscall\n")
    head = '[run]\nduration_ms = 0.1\n[cpu]\nclock_mhz = 200.0\n[workload]\nkind = "script"\n'
    (tmp_path / "file.toml").write_text(head + 'events_file = "ev.csv"\n')
    inline = "".join(f'[[workload.events]]\nat_cycle = {c}\naction = "{a}"\nbytes = {b}\n' for c, a, b in [(0, "receive", 512), (100, "send", 64), (200, "syscall", 0)])
    (tmp_path / "inline.toml").write_text(head + inline)
    from_file = irqsim.run(tmp_path / "file.toml").metrics
    assert from_file == irqsim.run(tmp_path / "inline.toml").metrics and from_file["rx_offered"] == 1
    p = cli("run", str(tmp_path / "file.toml"), "-o", str(tmp_path / "out"))
    assert p.returncode == 0, p.stderr
    written = (tmp_path / "out" / "config.toml").read_text()
    assert f'events_file = "{tmp_path / "ev.csv"}"' in written
    assert irqsim.run(tmp_path / "out" / "config.toml").metrics == from_file
