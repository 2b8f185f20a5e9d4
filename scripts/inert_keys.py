"""Keys that load and change nothing: for each scenario given, each scalar key
of docs/config.md is set to another value (an integer doubled plus one, a
float times 1.5, a flag flipped, each other choice), the scenario run for
3 simulated ms, and the key printed when the report (less `wall_seconds`)
is the baseline's bit for bit. A key printed is either silently ignored
there (a finding: refuse it, or make it act) or on a path that this run does
not take at this load (look at why before refusing it).

    cargo build --release -p irqsim-core --example run
    python scripts/inert_keys.py python/irqsim/scenarios/code/rx-min.toml [...]

The run, stats and workload sections are left out (lengths, detail and the
drive itself).
"""

import json
import re
import subprocess
import sys

RUN = "target/release/examples/run"
SKIPPED = ("run", "stats", "workload")


def keys():
    """(dotted key, type, default, range) of every scalar row of docs/config.md."""
    section = None
    for line in open("docs/config.md", encoding="utf-8"):
        head = re.match(r"^#+ `\[([a-z_.]+)\]`", line)
        if head:
            section = head.group(1)
            continue
        if line.startswith("## "):
            section = None
        row = re.match(r"^\| `([a-z_0-9]+)` \| ([^|]*)\|[^|]*\| ([^|]*)\| ([^|]*)\|", line)
        if row and section and not section.startswith(SKIPPED):
            yield f"{section}.{row.group(1)}", row.group(2).strip(), row.group(3).strip().strip("`"), row.group(4).strip()


def others(ty, default, bounds):
    """Values other than the default, as TOML text."""
    if default in ("true", "false"):
        return ["false" if default == "true" else "true"]
    if "|" in ty:
        choices = [c.strip().strip("`") for c in ty.split("\\|")]
        return [f'"{c}"' for c in choices if c and f'"{c}"' != default][:3]
    plain = default.replace("_", "")
    try:
        if ty.startswith("integer"):
            v = int(plain)
            span = re.match(r"(\d+)\.\.=(\d+)", bounds.replace("_", ""))
            w = v * 2 + 1
            if span and w > int(span.group(2)):
                w = max(v // 2, int(span.group(1)))
            return [str(w)] if w != v else []
        if ty.startswith("float"):
            v = float(plain)
            return [repr(v * 1.5 if v else 1.0)]
    except ValueError:  # required, absent or not a number
        pass
    return []


def report(scenario, sets):
    p = subprocess.run([RUN, scenario, "run.duration_ms=3", *sets], capture_output=True, text=True, timeout=300)
    if p.returncode:
        return None
    doc = json.loads(p.stdout)
    doc.pop("wall_seconds", None)
    return json.dumps(doc, sort_keys=True)


def main(scenarios):
    for scenario in scenarios:
        base = report(scenario, [])
        if base is None:
            print(f"{scenario}: does not run as it is")
            continue
        for key, ty, default, bounds in keys():
            for value in others(ty, default, bounds):
                if report(scenario, [f"{key}={value}"]) == base:
                    print(f"{scenario}\t{key}={value}\t(default {default})")


if __name__ == "__main__":
    main(sys.argv[1:])
