"""``irqsim ilp``: the offline VLIW scheduler over a program's basic blocks.

Every basic block of PROGRAM (a MIPS ELF, or a bundled one such as
``firmware/nic``) is list-scheduled for each functional-unit mix
(``INT/MEM/BRANCH``), weighted by the execution counts in the profile, and
reported as IPC and frames per thousand cycles (docs/models/nic-firmware.md).
``--memory registers`` (the default, the seed's scheduler) keeps only
register dependences; ``--memory ordered`` keeps loads and stores in order
against stores.
The profile is a JSON file of a 1-core run: ``--record`` makes one by running
the NIC firmware on one core as the study does (the bundled scenario
``nic-firmware/duplex-64``, its measured window; ``--set`` changes its keys,
e.g. ``nic_firmware.batch=3``) and writes it to the ``--profile`` path first.
"""

from __future__ import annotations

import json
from pathlib import Path

from irqsim import IrqsimError, api
from irqsim._core import vliw_table
from irqsim.exec import program_path

# The paper's seven configurations (Table 1).
UNITS = ["1/1/1", "2/1/1", "2/3/1", "3/3/1", "4/4/1", "5/5/1", "6/6/1"]
#: The run ``--record`` profiles: Table 2's 64 B full-duplex floods.
SCENARIO = "nic-firmware/duplex-64"


def record(program: Path, profile: Path, sets: list[str]) -> None:
    """Runs the firmware on one core of the machine and writes its measured window's block profile."""
    result = api.run(SCENARIO, [f"nic_firmware.program={json.dumps(str(program))}", "nic_firmware.cores=1", *sets], _label="--set")
    window = result.to_dict().get("nic_firmware")
    if window is None:
        raise IrqsimError(f"{SCENARIO}: the measured window (nic_firmware.window_frames) did not end within run.duration_ms; lengthen it with --set")
    profile.write_text(json.dumps(window["profile"]) + "\n")


def table(program: str, profile: Path, units: list[str] | None = None, memory: str = "registers") -> dict:
    path = program_path(program)
    try:
        text = profile.read_text()
    except OSError as e:
        raise IrqsimError(f"{profile}: cannot read the profile ({e.strerror}); make one with --record") from None
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None  # the scheduler names the file and the error
    if isinstance(doc, dict) and "profile" in doc:  # a whole run report
        text = json.dumps(doc["profile"])
    return json.loads(vliw_table(path, text, str(profile), units or UNITS, memory))


def command(program: str, profile: Path, units: list[str], do_record: bool, sets: list[str], as_json: bool, memory: str = "registers") -> None:
    if do_record:
        record(program_path(program), profile, sets)
    t = table(program, profile, units, memory)
    if as_json:
        print(json.dumps(t, indent=1))
        return
    from irqsim.cli import _console, _fmt, _table

    base = t["profile"]
    out = _console()
    tab = _table(
        f"{program}: VLIW schedules over {profile}, memory rule {t['memory']} ({base['frames']} frames; 1-issue: IPC {base['ipc']:.3f}, {base['frames_per_kcycle']:.3f} frames/kcycle)",
        ("units int/mem/branch", "width", "bundles", "instructions", "IPC", "frames/kcycle"),
        right=("width", "bundles", "instructions", "IPC", "frames/kcycle"),
    )
    for r in t["rows"]:
        tab.add_row(r["units"], str(r["width"]), _fmt(r["bundles"]), _fmt(r["instructions"]), f"{r['ipc']:.3f}", f"{r['frames_per_kcycle']:.3f}")
    out.print(tab)
