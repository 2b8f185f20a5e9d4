"""Running a sweep: plan, skip what is done, compute the rest
(:mod:`irqsim.sweeps.compute`), gather the results.

A directory's runs are those of one
build of irqsim (``build.json``): another build is refused unless asked for
(``new_build``), and a spec may change in its values and seeds only, so that
extending a sweep computes just the new runs. A run whose scenario is invalid at
its grid point, or that fails, is recorded with its error; if every run of
the sweep is invalid, the spec itself is wrong and the sweep stops with the
first error instead.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irqsim import IrqsimError, _core
from irqsim import provenance as prov
from irqsim.output import atomic_write, read_text
from irqsim.sweeps import dataset
from irqsim.sweeps.cluster import Cluster
from irqsim.sweeps.compute import Job, compute, not_run
from irqsim.sweeps.spec import Spec

if TYPE_CHECKING:
    import pandas as pd

SPEC = "sweep.toml"
BUILD = "build.json"


def _check_output(out: Path, spec: Spec, new_build: bool) -> None:
    """Refuses a directory holding another sweep's results (one that differs
    in more than values and seeds) or another build's, unless ``new_build``."""
    import tomllib

    path = out / SPEC
    if path.is_file():
        old = Spec.from_dict(tomllib.loads(read_text(path)), spec.base, str(path))
        for what, a, b in (("scenario", old.scenario, spec.scenario), ("[set]", old.set, spec.set), ("[grid] keys", list(old.grid), list(spec.grid)), ("[zip] keys", list(old.zip), list(spec.zip))):
            if a != b:
                raise IrqsimError(f"{out}: holds the results of a different sweep ({path}: its {what} differ; a sweep extends by values and seeds only); use another directory")
    build = out / BUILD
    earlier = json.loads(read_text(build))["build"] if build.is_file() else ("an irqsim without provenance" if dataset.finished(out) else None)
    if earlier not in (None, prov.build_id()) and not new_build:
        raise IrqsimError(
            f"{out}: computed by irqsim {earlier}, this is {prov.build_id()}; pass --new-build to compute its runs again with this build (the earlier runs stay in runs/), or use another directory"
        )


@dataclass(frozen=True)
class Done:
    runs: int
    failed: int
    computed: int
    results: Any  # pandas.DataFrame


def _jobs(s: Spec) -> list[Job]:
    name, text, base = s.source()
    sha = hashlib.sha256(text.encode()).hexdigest()
    provenance = {"scenario": name, "scenario_sha256": sha, "command": prov.where()["command"]}
    build = prov.build_id()
    return [Job(r, name, text, str(base), s.origin, provenance, build) for r in s.runs(sha, build)]


def _invalid(jobs: list[Job]) -> dict[str, IrqsimError]:
    """The runs whose scenario does not validate at their grid point; if that
    is every run, the spec itself is wrong and its first error is raised."""
    invalid = {}
    for j in jobs:
        try:
            _core.validate(text=j.text, name=j.name, sets=j.run.overrides, origin=j.label)
        except IrqsimError as e:
            invalid[j.run.id] = e
    if len(invalid) == len(jobs):
        raise next(iter(invalid.values()))
    return invalid


def _missing(out: Path, jobs: list[Job], retry_failed: bool) -> list[Job]:
    """The jobs without a part file (or with a failed one, to retry)."""
    done = dataset.finished(out)
    if retry_failed and done:
        parts = dataset.read_parts(out, [j.run.id for j in jobs if j.run.id in done]).to_pandas()
        done -= set(parts.loc[parts["status"] != "ok", "run_id"])
    return [j for j in jobs if j.run.id not in done]


def run_sweep(
    spec: str | os.PathLike | dict,
    out: str | os.PathLike,
    *,
    sets: list[str] | None = None,
    cluster: Cluster | None = None,
    progress: bool = False,
    retry_failed: bool = False,
    new_build: bool = False,
) -> Done:
    """Runs what is missing of ``spec`` into ``out``; see :func:`irqsim.sweep`."""
    import tomli_w

    s = Spec.load(spec)
    if sets:
        s = s.with_sets(sets)
    jobs = _jobs(s)
    out = Path(out)
    _check_output(out, s, new_build)
    invalid = _invalid(jobs)
    (out / dataset.RUNS).mkdir(parents=True, exist_ok=True)
    atomic_write(out / SPEC, tomli_w.dumps(s.to_dict()).encode())
    atomic_write(out / BUILD, json.dumps({"build": prov.build_id(), **prov.build()}, indent=1).encode())

    missing = _missing(out, jobs, retry_failed)
    dataset.write_parts(out, [not_run(j, f"{type(e).__name__}: {e}") for j in missing if (e := invalid.get(j.run.id))])
    todo = [j for j in missing if j.run.id not in invalid]
    if todo:
        from irqsim.progress import SweepProgress

        with SweepProgress(len(jobs), len(jobs) - len(todo), enabled=progress) as bar:
            compute(todo, out, cluster or Cluster(), bar)
    results = dataset.consolidate(out, [j.run.id for j in jobs], [*s.grid, *s.zip])
    return Done(len(jobs), int((results["status"] != "ok").sum()), len(todo), results)


def sweep(
    spec: str | os.PathLike | dict,
    out: str | os.PathLike,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    sets: list[str] | None = None,
    progress: bool = False,
    retry_failed: bool = False,
    new_build: bool = False,
) -> pd.DataFrame:
    """Runs a sweep (a spec file or dict, docs/sweeps.md) into directory
    ``out`` and returns its results, one row per run. Rerunning completes
    only what is missing; adding seeds or values computes only the new runs.
    A directory computed by another build of irqsim is refused unless ``new_build``."""
    cluster = Cluster(workers=workers, scheduler=scheduler)
    return run_sweep(spec, out, sets=sets, cluster=cluster, progress=progress, retry_failed=retry_failed, new_build=new_build).results
