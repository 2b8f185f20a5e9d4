"""Running a sweep: plan, skip what is done, compute the rest
(:mod:`irqsim.sweeps.compute`), gather the results.

A directory's runs are those of one
build of irqsim (``build.json``): another build is refused unless asked for
(``new_build``), and a spec may change in its values and seeds only, so that
extending a sweep computes just the new runs. A run whose scenario is invalid at
its grid point, or that fails, is recorded with its error; if every run of
the sweep is invalid, the spec itself is wrong and the sweep stops with the
first error instead. Runs are generated, never listed: the memory a sweep
takes does not grow with its number of runs (but for the set of finished
run ids and the results table gathered at the end).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from irqsim import IrqsimError, _core
from irqsim import provenance as prov
from irqsim.api import ArgumentError
from irqsim.output import atomic_write, output_dir, read_text
from irqsim.sweeps import dataset
from irqsim.sweeps.cluster import Cluster
from irqsim.sweeps.compute import Job, compute, not_run
from irqsim.sweeps.lock import locked
from irqsim.sweeps.spec import Spec

if TYPE_CHECKING:
    import pandas as pd

SPEC = "sweep.toml"
BUILD = "build.json"
#: Invalid runs recorded in one part file.
INVALID_BATCH = 1000


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


def _jobs(s: Spec) -> Iterator[Job]:
    """Every run of ``s`` as a job, one at a time (a sweep may have millions)."""
    name, text, base = s.source()
    sha = hashlib.sha256(text.encode()).hexdigest()
    provenance = {"scenario": name, "scenario_sha256": sha, "command": prov.where()["command"]}
    build = prov.build_id()
    return (Job(r, name, text, str(base), s.origin, provenance, build) for r in s.runs(sha, build))


def _invalid(j: Job) -> IrqsimError | None:
    """Why ``j``'s scenario does not validate at its grid point, if it does not."""
    try:
        _core.validate(text=j.text, name=j.name, sets=j.run.overrides, origin=j.label)
    except IrqsimError as e:
        return e
    return None


def _check_some_valid(jobs: Iterator[Job]) -> None:
    """Raises the first run's error if no run of the sweep validates: then
    the spec itself is wrong. Stops at the first valid run (usually the first)."""
    first = None
    for j in jobs:
        e = _invalid(j)
        if e is None:
            return
        first = first or e
    if first is not None:
        raise first


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
    s = Spec.load(spec)
    if sets:
        s = s.with_sets(sets)
    out = Path(out)
    _check_output(out, s, new_build)
    _check_some_valid(_jobs(s))
    output_dir(out / dataset.RUNS)
    with locked(out):
        return _run_locked(s, out, cluster, progress, retry_failed, new_build)


def _run_locked(s: Spec, out: Path, cluster: Cluster | None, progress: bool, retry_failed: bool, new_build: bool) -> Done:
    """The rest of :func:`run_sweep`, holding the directory's lock (the
    directory is checked again: another sweep may have written it meanwhile).
    The jobs are generated, never listed: once to count the missing runs,
    once to run them, once to gather the results."""
    import tomli_w

    _check_output(out, s, new_build)
    atomic_write(out / SPEC, tomli_w.dumps(s.to_dict()).encode())
    atomic_write(out / BUILD, json.dumps({"build": prov.build_id(), **prov.build()}, indent=1).encode())

    done = dataset.finished(out)
    if retry_failed:
        done -= dataset.failed(out)
    missing = sum(j.run.id not in done for j in _jobs(s))
    total = s.count()
    computed = 0
    if missing:
        from irqsim.progress import SweepProgress

        with SweepProgress(total, total - missing, enabled=progress) as bar:
            todo = _valid(out, (j for j in _jobs(s) if j.run.id not in done), bar)
            computed = compute(todo, missing, out, cluster or Cluster(), bar)
    results = dataset.consolidate(out, (j.run.id for j in _jobs(s)), [*s.grid, *s.zip])
    return Done(total, int((results["status"] != "ok").sum()), computed, results)


def _valid(out: Path, jobs: Iterator[Job], bar) -> Iterator[Job]:
    """``jobs`` that validate; the others are recorded as not run (a part
    file per ``INVALID_BATCH`` of them, the last when the jobs run out)."""
    invalid = []
    for j in jobs:
        e = _invalid(j)
        if e is None:
            yield j
            continue
        invalid.append(not_run(j, f"{type(e).__name__}: {e}"))
        bar.advance(False)
        if len(invalid) == INVALID_BATCH:
            dataset.write_parts(out, invalid)
            invalid = []
    dataset.write_parts(out, invalid)


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
    _check_arguments(spec=spec, out=out, workers=workers, scheduler=scheduler, sets=sets, progress=progress, retry_failed=retry_failed, new_build=new_build)
    cluster = Cluster(workers=workers, scheduler=scheduler)
    return run_sweep(spec, out, sets=sets, cluster=cluster, progress=progress, retry_failed=retry_failed, new_build=new_build).results


def _check_arguments(**given: Any) -> None:
    """Raises :class:`irqsim.ArgumentError` naming the first argument of the wrong type."""
    path = (str, os.PathLike)
    expected = {
        "spec": ((*path, dict), "a spec file's path or a dict"),
        "out": (path, "a directory path"),
        "workers": ((int, type(None)), "a number of workers >= 1, or None"),
        "scheduler": ((str, type(None)), "a scheduler address such as 'tcp://host:8786', or None"),
        "sets": ((list, tuple, type(None)), "a list of 'key=value' strings, or None"),
        "progress": ((bool,), "True or False"),
        "retry_failed": ((bool,), "True or False"),
        "new_build": ((bool,), "True or False"),
    }
    for name, value in given.items():
        types, what = expected[name]
        ok = isinstance(value, types) and (bool in types or not isinstance(value, bool))
        if name == "workers" and ok and value is not None:
            ok = value >= 1
        if name == "sets" and ok and value is not None:
            ok = all(isinstance(v, str) for v in value)
        if not ok:
            raise ArgumentError(f"{name}: expected {what}, not {type(value).__name__} {value!r}")
