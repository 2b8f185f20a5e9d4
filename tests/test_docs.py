"""docs/config.md is generated from the code's parameter tables and documents
every key a bundled scenario can have; the README's quick start names the
commands CI runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import irqsim
from conftest import SCENARIOS

ROOT = Path(__file__).resolve().parent.parent
CONFIG_MD = ROOT / "docs" / "config.md"


def leaf_keys(doc: dict, prefix: str = "") -> set[str]:
    keys = set()
    for k, v in doc.items():
        path = f"{prefix}{k}"
        if isinstance(v, dict):
            keys |= leaf_keys(v, path + ".")
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            for item in v:
                keys |= leaf_keys(item, path + ".")
        else:
            keys.add(path)
    return keys


@pytest.mark.parametrize("scenario", sorted(SCENARIOS.rglob("*.toml")), ids=lambda p: str(p.relative_to(SCENARIOS)))
def test_every_key_of_every_bundled_scenario_is_documented(scenario):
    """Each leaf key (with every default filled in) appears as `key` in docs/config.md."""
    text = CONFIG_MD.read_text()
    documented = set(re.findall(r"`([a-z_][a-z0-9_]*)`", text))
    missing = sorted(k for k in leaf_keys(irqsim.validate(scenario)) if k.split(".")[-1] not in documented)
    assert not missing, f"{scenario.name}: undocumented keys {missing}"


def test_config_md_is_what_irqsim_parts_generates(cli):
    """`irqsim parts --markdown` prints docs/config.md exactly (regenerate with it)."""
    p = cli("parts", "--markdown")
    assert p.returncode == 0, p.stderr
    assert p.stdout == CONFIG_MD.read_text(), "docs/config.md is stale: irqsim parts --markdown > docs/config.md"


def test_quick_start_is_two_make_commands_that_exist():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert commands == ["make reproduce", "make test"]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^reproduce:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text()
