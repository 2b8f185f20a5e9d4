"""Running a sweep: plan, skip what is done, compute the rest on dask,
write each run as it finishes, gather the results.

The client writes every part file (workers only compute), so the workers
need no access to the output directory. A run whose scenario is invalid at
its grid point, or that fails, is recorded with its error; if every run of
the sweep is invalid, the spec itself is wrong and the sweep stops with the
first error instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irqsim import IrqsimError, __version__, _core
from irqsim.api import ArgumentError
from irqsim.output import atomic_write, output_dir, read_text
from irqsim.sweeps import dataset
from irqsim.sweeps.cluster import Cluster
from irqsim.sweeps.lock import locked
from irqsim.sweeps.spec import Run, Spec

if TYPE_CHECKING:
    import pandas as pd

SPEC = "sweep.toml"


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


def _row(job: Job, metrics: dict[str, Any] | None, error: str | None, wall: float) -> dict[str, Any]:
    return {
        **job.run.params,
        "seed": job.run.seed,
        "status": "ok" if error is None else "error",
        "error": error,
        **(metrics or {}),
        "run_id": job.run.id,
        **job.provenance,
        "overrides": json.dumps(job.run.overrides),
        "wall_seconds": wall,
    }


def execute(job: Job) -> dict[str, Any]:
    """Runs one job (on a worker); a failure becomes the row's error."""
    t0 = time.perf_counter()
    try:
        rep = _core.run(text=job.text, name=job.name, sets=job.run.overrides, base=job.base, origin=job.label)
        return _row(job, dict(rep.metrics()), None, time.perf_counter() - t0)
    except Exception as e:  # recorded, never fatal: one bad point must not stop a sweep
        return _row(job, None, f"{type(e).__name__}: {e}", time.perf_counter() - t0)


def _check_output(out: Path, spec: Spec) -> None:
    """Refuses a directory that holds another spec's results."""
    path = out / SPEC
    if path.is_file():
        import tomllib

        if tomllib.loads(read_text(path)) != spec.to_dict():
            raise IrqsimError(f"{out}: holds the results of a different sweep ({path}); use another directory")


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
                row = _row(futures[f], None, f"KilledWorker: {e}", 0.0)
            except Exception as e:
                raise IrqsimError(f"sweep stopped: lost the cluster ({type(e).__name__}: {e}); rerun to resume") from None
            dataset.write_part(out, row)
            bar.advance(row["status"] == "ok")


def _jobs(s: Spec) -> list[Job]:
    name, text, base = s.source()
    sha = hashlib.sha256(text.encode()).hexdigest()
    provenance = {"irqsim_version": __version__, "scenario": name, "scenario_sha256": sha}
    return [Job(r, name, text, str(base), s.origin, provenance) for r in s.runs(sha)]


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
) -> Done:
    """Runs what is missing of ``spec`` into ``out``; see :func:`irqsim.sweep`."""
    s = Spec.load(spec)
    if sets:
        s = s.with_sets(sets)
    jobs = _jobs(s)
    out = Path(out)
    _check_output(out, s)
    invalid = _invalid(jobs)
    output_dir(out / dataset.RUNS)
    with locked(out):
        return _run_locked(s, out, jobs, invalid, cluster, progress, retry_failed)


def _run_locked(s: Spec, out: Path, jobs: list[Job], invalid: dict, cluster: Cluster | None, progress: bool, retry_failed: bool) -> Done:
    import tomli_w

    _check_output(out, s)
    atomic_write(out / SPEC, tomli_w.dumps(s.to_dict()).encode())

    todo = []
    for j in _missing(out, jobs, retry_failed):
        if e := invalid.get(j.run.id):
            dataset.write_part(out, _row(j, None, f"{type(e).__name__}: {e}", 0.0))
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
) -> pd.DataFrame:
    """Runs a sweep (a spec file or dict, docs/sweeps.md) into directory
    ``out`` and returns its results, one row per run. Rerunning completes
    only what is missing."""
    _check_arguments(spec=spec, out=out, workers=workers, scheduler=scheduler, sets=sets, progress=progress, retry_failed=retry_failed)
    cluster = Cluster(workers=workers, scheduler=scheduler)
    return run_sweep(spec, out, sets=sets, cluster=cluster, progress=progress, retry_failed=retry_failed).results


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
