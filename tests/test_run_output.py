"""`irqsim run -o DIR`: the output directory, and the Python API's
friction points (paths with `=`, to_json/to_dict, integer counts)."""

from __future__ import annotations

import json
import shutil

import pandas as pd

import irqsim
from irqsim import api


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
