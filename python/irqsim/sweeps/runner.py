"""Running a sweep: plan, skip what is done, compute the rest on dask,
write each run as it finishes, gather the results.

The client writes every part file (workers only compute), so the workers
need no access to the output directory. A directory's runs are those of one
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
from irqsim.sweeps.spec import Run, Spec

if TYPE_CHECKING:
    import pandas as pd

SPEC = "sweep.toml"
BUILD = "build.json"


@dataclass(frozen=True)
class Job:
    """What a worker needs for one run (plain data, pickled to the worker)."""

    run: Run
    name: str
    text: str
    base: str
    #: What errors call the overrides: the spec file.
    label: str
    provenance: dict[str, Any]
    #: The client's :func:`irqsim.provenance.build_id`; a worker of another build refuses the run.
    build: str


def _row(job: Job, metrics: dict[str, Any] | None, error: str | None, measured: dict[str, Any]) -> dict[str, Any]:
    return {
        **job.run.params,
        "seed": job.run.seed,
        "status": "ok" if error is None else "error",
        "error": error,
        **(metrics or {}),
        "run_id": job.run.id,
        **job.provenance,
        "overrides": json.dumps(job.run.overrides),
        **measured,
    }


def execute(job: Job) -> dict[str, Any]:
    """Runs one job (on a worker); a failure becomes the row's error. The
    row records the worker's build, host and the run's time."""
    here = {**prov.build(), "host": prov.where()["host"], "cpu_model": prov.cpu_model()}
    with prov.timed() as timing:
        try:
            if prov.build_id() != job.build:
                raise IrqsimError(f"this worker runs irqsim {prov.build_id()}, the sweep {job.build}: install the same build on every worker")
            rep = _core.run(text=job.text, name=job.name, sets=job.run.overrides, base=job.base, origin=job.label)
            metrics, error = dict(rep.metrics()), None
        except Exception as e:  # recorded, never fatal: one bad point must not stop a sweep
            metrics, error = None, f"{type(e).__name__}: {e}"
    return _row(job, metrics, error, {**here, **timing})


def _not_run(job: Job, error: str) -> dict[str, Any]:
    """The row of a run that failed without running (invalid, or its worker died)."""
    return _row(job, None, error, {**prov.build(), "host": None, "cpu_model": None, "started_utc": None, "wall_seconds": 0.0, "cpu_seconds": 0.0})


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


def _compute(todo: list[Job], out: Path, cluster: Cluster, bar) -> None:
    """Runs ``todo`` on ``cluster``, writing each run's part as it finishes.

    A run whose worker keeps dying (``KilledWorker``: it crashed the process
    or ran out of memory) is recorded as failed; losing the cluster itself
    stops the sweep with nothing recorded for the runs not finished."""
    from distributed import KilledWorker, as_completed

    with cluster.client() as client, bar:
        futures = {client.submit(execute, j, pure=False, key=f"irqsim-{j.run.id}"): j for j in todo}
        for f in as_completed(futures):
            try:
                row = f.result()
            except KilledWorker as e:
                row = _not_run(futures[f], f"KilledWorker: {e}")
            except Exception as e:
                raise IrqsimError(f"sweep stopped: lost the cluster ({type(e).__name__}: {e}); rerun to resume") from None
            dataset.write_part(out, row)
            bar.advance(row["status"] == "ok")


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

    todo = []
    for j in _missing(out, jobs, retry_failed):
        if e := invalid.get(j.run.id):
            dataset.write_part(out, _not_run(j, f"{type(e).__name__}: {e}"))
        else:
            todo.append(j)
    if todo:
        from irqsim.progress import SweepProgress

        _compute(todo, out, cluster or Cluster(), SweepProgress(len(jobs), len(jobs) - len(todo), enabled=progress))
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
