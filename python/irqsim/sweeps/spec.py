"""A sweep spec: which scenario, which keys to vary, how many seeds.

```toml
scenario = "mt-interrupts/driver-rx-single"   # bundled name or path (relative to this file)
seeds = 3                                     # run.seed = 1, 2, 3 (or a list: [7, 11])
[set]                                         # fixed overrides for every run
"run.duration_ms" = 50.0
[grid]                                        # Cartesian product
"cpu.context_policy" = ["single", "multithreaded"]
"workload.packet_bytes" = [64, 512, 1500]
[zip]                                         # varied together (equal lengths)
"nic.rx_buffer_bytes" = [4096, 16384]
"nic.tx_queue_packets" = [16, 64]
max_runs = 100000                             # the default; a larger sweep is refused
```

Every run is identified by a hash of what determines its numbers: the
scenario's content, the resolved overrides (seed included) and the build of
irqsim (its commit). Seeds must differ (a repeated seed is the same run, not
another sample). Nothing is listed: a seed count stays a ``range``, the
number of runs is counted from the lengths before any run exists (a spec with
more than ``max_runs`` is refused), and runs are generated one at a time.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irqsim import ConfigError, api
from irqsim.output import read_text, scenario_text

KEYS = ("scenario", "seeds", "set", "grid", "zip", "max_runs")
#: Runs a spec may have unless it sets ``max_runs``; and the most it may set.
MAX_RUNS = 100_000
MAX_RUNS_LIMIT = 10_000_000


def _error(origin: str, key: str, msg: str) -> ConfigError:
    return ConfigError(f"{origin}: `{key}`: {msg}")


def _flatten(table: Mapping, prefix: str = "") -> dict[str, Any]:
    """``{"cpu": {"clock_mhz": [..]}}`` (unquoted dotted keys) → ``{"cpu.clock_mhz": [..]}``."""
    flat = {}
    for k, v in table.items():
        if isinstance(v, Mapping):
            flat.update(_flatten(v, f"{prefix}{k}."))
        else:
            flat[f"{prefix}{k}"] = v
    return flat


def _values(origin: str, key: str, values: Any) -> list:
    """A grid or zip list: non-empty, scalars of one type (ints widen to floats)."""
    if not isinstance(values, list) or not values:
        raise _error(origin, key, "must be a non-empty list of values")
    kinds = {bool if isinstance(v, bool) else float if isinstance(v, (int, float)) else type(v) for v in values}
    if len(kinds) > 1 or not kinds <= {bool, float, str}:
        raise _error(origin, key, "values must be all numbers, all strings or all booleans")
    if kinds == {float} and not all(isinstance(v, int) for v in values):
        return [float(v) for v in values]
    return list(values)


def key_value(item: str, origin: str) -> tuple[str, Any]:
    """``"key=value"`` as ``(key, value)``, the value read as TOML if it
    parses (``5``, ``"x"``, ``{a = 1}``) and taken as a bare string if not."""
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise _error(origin, item, "expected KEY=VALUE")
    try:
        return key.strip(), tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return key.strip(), value


@dataclass(frozen=True)
class Run:
    """One run of a sweep: its varied values, seed and every override."""

    id: str
    params: dict[str, Any]
    seed: int
    overrides: list[str]


@dataclass
class Spec:
    scenario: str
    #: ``range(1, n + 1)`` for ``seeds = n``, never listed.
    seeds: list[int] | range
    grid: dict[str, list] = field(default_factory=dict)
    zip: dict[str, list] = field(default_factory=dict)
    set: dict[str, Any] = field(default_factory=dict)
    #: Directory a relative scenario path is read from.
    base: Path = Path(".")
    origin: str = "sweep"
    max_runs: int = MAX_RUNS

    @classmethod
    def load(cls, spec: str | os.PathLike | Mapping) -> Spec:
        """Reads a spec from a TOML file or a dict."""
        if isinstance(spec, Mapping):
            return cls.from_dict(spec, Path("."), "sweep spec")
        path = Path(spec)
        try:
            doc = tomllib.loads(read_text(path))
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: {e}") from None
        return cls.from_dict(doc, path.parent, str(path))

    @classmethod
    def from_dict(cls, doc: Mapping, base: Path, origin: str) -> Spec:
        unknown = [k for k in doc if k not in KEYS]
        if unknown:
            raise _error(origin, unknown[0], f"unknown key; a spec has {', '.join(KEYS)}")
        if not isinstance(doc.get("scenario"), str):
            raise _error(origin, "scenario", "required: a bundled scenario name or a TOML path")
        max_runs = doc.get("max_runs", MAX_RUNS)
        if not (isinstance(max_runs, int) and not isinstance(max_runs, bool) and 1 <= max_runs <= MAX_RUNS_LIMIT):
            raise _error(origin, "max_runs", f"must be an integer from 1 to {MAX_RUNS_LIMIT:,}")
        seeds = doc.get("seeds", 1)
        if isinstance(seeds, int) and not isinstance(seeds, bool) and seeds >= 1:
            if seeds > max_runs:
                raise _error(origin, "seeds", f"{seeds:,} seeds are more runs than max_runs = {max_runs:,}")
            seeds = range(1, seeds + 1)
        elif not (isinstance(seeds, list) and seeds and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)):
            raise _error(origin, "seeds", "must be a count >= 1 or a list of seeds")
        repeated = [] if isinstance(seeds, range) else [(s, n) for s, n in Counter(seeds).items() if n > 1]
        if repeated:
            seed, n = repeated[0]
            raise _error(origin, "seeds", f"seed {seed} is listed {n} times; a seed gives the same run each time, not another sample")
        tables = {}
        for name in ("grid", "zip", "set"):
            t = doc.get(name, {})
            if not isinstance(t, Mapping):
                raise _error(origin, name, "must be a table of \"key.path\" = value")
            tables[name] = _flatten(t)
        grid = {k: _values(origin, f"grid.{k}", v) for k, v in tables["grid"].items()}
        zipped = {k: _values(origin, f"zip.{k}", v) for k, v in tables["zip"].items()}
        if len({len(v) for v in zipped.values()}) > 1:
            raise _error(origin, "zip", "lists must have equal lengths")
        seen: dict[str, str] = {}
        for name, keys in (("grid", grid), ("zip", zipped), ("set", tables["set"])):
            for k in keys:
                if k == "run.seed":
                    raise _error(origin, f"{name}.{k}", "seeds are set by `seeds`")
                if k in seen:
                    raise _error(origin, f"{name}.{k}", f"also in [{seen[k]}]")
                seen[k] = name
        spec = cls(doc["scenario"], seeds, grid, zipped, tables["set"], base, origin, max_runs)
        if spec.count() > max_runs:
            shape = " × ".join(f"{len(v):,}" for v in grid.values()) or "1"
            rows = f" × {len(next(iter(zipped.values()))):,} zip rows" if zipped else ""
            raise _error(origin, "max_runs", f"{shape} grid points{rows} × {len(seeds):,} seed{'s' if len(seeds) > 1 else ''} = {spec.count():,} runs, more than max_runs = {max_runs:,}; set max_runs (at most {MAX_RUNS_LIMIT:,}) to run them")
        return spec

    def count(self) -> int:
        """How many runs the spec has, without listing them."""
        rows = len(next(iter(self.zip.values()))) if self.zip else 1
        return math.prod(len(v) for v in self.grid.values()) * rows * len(self.seeds)

    def to_dict(self) -> dict:
        """The spec as TOML would hold it (a seed count as the count)."""
        seeds = len(self.seeds) if isinstance(self.seeds, range) else self.seeds
        doc: dict[str, Any] = {"scenario": self.scenario, "seeds": seeds}
        for name in ("set", "grid", "zip"):
            if getattr(self, name):
                doc[name] = dict(getattr(self, name))
        if self.max_runs != MAX_RUNS:
            doc["max_runs"] = self.max_runs
        return doc

    def with_sets(self, sets: list[str]) -> Spec:
        """This spec with command-line ``key=value`` overrides added to [set] (as TOML values)."""
        extra = dict(key_value(s, "--set") for s in sets)
        doc = self.to_dict()
        doc["set"] = {**doc.get("set", {}), **extra}
        return Spec.from_dict(doc, self.base, self.origin)

    def source(self) -> tuple[str, str, Path]:
        """``(name, TOML text, directory its relative paths resolve from)``."""
        local = self.base / self.scenario
        target = str(local) if not Path(self.scenario).is_absolute() and local.is_file() else self.scenario
        name, text, path = scenario_text(target)
        return self.scenario, text, (path.parent if path else Path(".")).resolve()

    def runs(self, scenario_sha256: str, build: str = "", inputs: Callable[[list[str]], str] | None = None) -> Iterator[Run]:
        """Every run, one at a time: grid points × zip rows × seeds, in that
        nesting order; ``build`` (:func:`irqsim.provenance.build_id`) is part
        of each run's id, and so is ``inputs(sets)``, the digest of the files
        the run reads, when it reads any."""
        keys = list(self.grid)
        zkeys = list(self.zip)
        zrows = list(zip(*self.zip.values())) if zkeys else [()]
        for point in itertools.product(*self.grid.values()):
            for zrow in zrows:
                params = dict(zip(keys, point)) | dict(zip(zkeys, zrow))
                for seed in self.seeds:
                    sets = api.sets({**self.set, **params, "run.seed": seed}, label=self.origin)
                    ident: dict = {"scenario_sha256": scenario_sha256, "overrides": sorted(sets), "build": build}
                    if digest := inputs and inputs(sets):
                        ident["inputs"] = digest
                    ident = json.dumps(ident)
                    yield Run(hashlib.sha256(ident.encode()).hexdigest()[:20], params, seed, sets)
