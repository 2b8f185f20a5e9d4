"""Parts and their keys: `irqsim parts` lists them, `irqsim validate` shows
only those a scenario uses, and a key of a part the scenario does not use is
refused (one line, exit 2) instead of silently ignored."""

from __future__ import annotations

import json

import pytest

import irqsim


def test_parts_lists_every_part_with_its_keys(cli):
    """The table view names every section, the kinds using it and its keys."""
    p = cli("parts")
    assert p.returncode == 0, p.stderr
    for section in ("[run]", "[cpu]", "[nic]", "[driver]", "[stack]", "[app]", "[stats]", "[workload]", "[masking]", "[intc]", "[bus]", "[irq_path]", "[sources]"):
        assert section in p.stdout, section
    assert "[code.core.l1d]: the kernel's code" in p.stdout and "[nic_firmware]: the programmable NIC" in p.stdout
    for key in ("clock_mhz", "rate_per_s", "interrupt_rate_per_s", "max_events", "timeline_max_items", "vectors", "way_masks", "sram_banks"):
        assert key in p.stdout, key
    assert '(kind = "exerciser")' in p.stdout and "used by flood, arrivals, trace, script, synthetic, exerciser" in p.stdout


def test_parts_json_matches_the_api():
    doc = irqsim.api.parts()
    sections = [part["section"] for part in doc]
    assert sections == ["", "run", "cpu", "nic", "driver", "stack", "app", "stats", "workload", "masking", "intc", "bus", "irq_path", "sources", "nics", "code", "napi", "coalesce", "rss", "nic_firmware"]
    intc = next(part for part in doc if part["section"] == "intc")
    assert intc["used_by"] == ["flood", "arrivals", "trace", "script", "synthetic", "exerciser"]
    vectors = next(p for p in intc["params"] if p["key"] == "vectors")
    assert vectors["range"] == "1..=2048" and vectors["when"] == {"key": "intc.kind", "is": ["msi", "msix"]}
    # The cores' settings are sections of `code.core`, each with its keys.
    code = next(part for part in doc if part["section"] == "code")
    core = next(p for p in code["params"] if p["key"] == "core")
    l1d = next(s for s in core["sections"] if s["name"] == "l1d")
    assert l1d["when"] == {"key": "memory.model", "is": ["caches"]}
    assert next(p for p in l1d["params"] if p["key"] == "ways")["range"] == "1..=64"


@pytest.mark.parametrize(
    "scenario, used",
    [
        ("mt-interrupts/driver-rx-single", {"run", "cpu", "nic", "driver", "stack", "app", "intc", "stats", "workload"}),
        ("compose/rx-ioapic-single", {"run", "cpu", "nic", "driver", "stack", "app", "intc", "bus", "irq_path", "stats", "workload"}),
        ("compose/rx-sections", {"run", "cpu", "nic", "driver", "stack", "app", "intc", "masking", "stats", "workload"}),
        ("optimistic-spl/luna88k-idealized", {"run", "cpu", "masking", "stats", "workload"}),
        ("msi-latency/soc-idle", {"run", "cpu", "intc", "bus", "irq_path", "stats", "workload"}),
    ],
)
def test_validate_prints_only_the_selected_parts(cli, scenario, used):
    p = cli("validate", scenario)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert {k for k, v in doc.items() if isinstance(v, dict)} == used
    assert "ok (parts: run, cpu" in p.stderr


@pytest.mark.parametrize(
    "scenario, setting, needle",
    [
        ("mt-interrupts/driver-rx-single", "bus.mmio_read_ns=1", "`bus.mmio_read_ns`: only used when `intc.kind` is"),
        ("mt-interrupts/driver-rx-single", "masking.scheme=optimistic", "`masking.scheme`: the NIC path has no critical section to mask"),
        ("mt-interrupts/driver-rx-single", "irq_path.entry_cycles=99999", "`irq_path.entry_cycles`: only used when `irq_path.kind` is `linux`"),
        ("optimistic-spl/luna88k-idealized", "cpu.threads=4", "`cpu.threads`: the masking model runs one hardware thread"),
        ("optimistic-spl/luna88k-idealized", "intc.kind=xtpic", "`intc.kind`: the interrupt controller part is not used by workload kind `null_rpc`"),
        ("mt-interrupts/driver-rx-single", "stack.ip_cycles=1", "`stack.ip_cycles`: only used when `stack.enabled` is `true`"),
        ("bench/rx-overload", "workload.rate_pps=5", "`workload.rate_pps`: was renamed `workload.rate_per_s`"),
        ("mt-interrupts/driver-rx-single", "nosuch.key=1", "--set: `nosuch`: unknown section"),
        ("mt-interrupts/driver-rx-single", "workload.kind=bogus", "--set: `workload.kind`: unknown variant `bogus`"),
        ("mt-interrupts/driver-rx-single", "run.duration_ms=1e12", "--set: `run.duration_ms`: must be in (0, 3_600_000]"),
    ],
)
def test_ignored_settings_are_refused_in_one_line(cli, scenario, setting, needle):
    p = cli("run", scenario, "--set", setting)
    assert p.returncode == 2
    assert needle in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_api_errors_name_overrides_not_the_command_line():
    with pytest.raises(irqsim.ConfigError, match=r"^overrides: `cpu\.threads`: the masking model runs one hardware thread"):
        irqsim.run("optimistic-spl/luna88k-idealized", {"cpu.threads": 4})
    with pytest.raises(irqsim.ArgumentError, match=r"^overrides: `cpu\.threads`: cannot express"):
        irqsim.run("mt-interrupts/driver-rx-single", {"cpu.threads": object()})


def test_toml_syntax_error_is_one_line(cli, tmp_path):
    s = tmp_path / "s.toml"
    s.write_text("[cpu]\nclock_mhz = 200.0\n[workload\n")
    p = cli("validate", str(s))
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and "s.toml: line 3, column" in p.stderr, p.stderr
