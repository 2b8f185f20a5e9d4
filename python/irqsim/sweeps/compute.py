"""Computing a sweep's missing runs: one run on a worker (:func:`execute`),
and how runs are spread over the cores (:func:`compute`).

On a local cluster the first run is computed in the client as a pilot.
When the rest would take less than starting worker processes costs
(``IN_PROCESS_SECONDS``), they run in the client too; otherwise they go to
dask in batches of about ``TASK_SECONDS`` each, so that dask's cost per task
(scheduling, pickling, a round trip) vanishes beside the runs, with enough
batches to keep every worker busy to the end. On a remote scheduler or SLURM
each run is its own task. The client writes every part file (workers only
compute), a batch's runs as one part file, so the workers need no access
to the output directory.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irqsim import IrqsimError, _core
from irqsim import provenance as prov
from irqsim.sweeps import dataset
from irqsim.sweeps.cluster import Cluster
from irqsim.sweeps.spec import Run

#: A batch (one dask task) should take about this long: a killed sweep loses at most that much per worker.
TASK_SECONDS = 1.0
#: Below this estimated time the remaining runs are computed in the client.
IN_PROCESS_SECONDS = 2.0
#: Batches per worker at least, so that no worker idles while another finishes a long batch.
BATCHES_PER_WORKER = 4


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


def execute_batch(jobs: list[Job]) -> list[dict[str, Any]]:
    """Runs jobs one after another (one dask task)."""
    return [execute(j) for j in jobs]


def not_run(job: Job, error: str) -> dict[str, Any]:
    """The row of a run that failed without running (invalid, or its worker died)."""
    return _row(job, None, error, {**prov.build(), "host": None, "cpu_model": None, "started_utc": None, "wall_seconds": 0.0, "cpu_seconds": 0.0})


def batches(jobs: list[Job], seconds_per_run: float, workers: int) -> Iterator[list[Job]]:
    """``jobs`` in batches of about ``TASK_SECONDS``, at least ``BATCHES_PER_WORKER`` per worker."""
    size = max(1, min(round(TASK_SECONDS / max(seconds_per_run, 1e-6)), math.ceil(len(jobs) / (workers * BATCHES_PER_WORKER))))
    for i in range(0, len(jobs), size):
        yield jobs[i : i + size]


def _record(out: Path, rows: list[dict[str, Any]], bar) -> None:
    dataset.write_parts(out, rows)
    for row in rows:
        bar.advance(row["status"] == "ok")


def compute(todo: list[Job], out: Path, cluster: Cluster, bar) -> None:
    """Runs ``todo``, writing each batch's parts as it finishes.

    A batch whose worker keeps dying (``KilledWorker``: a run crashed the
    process or ran out of memory) is split into single runs; a single run
    that kills its worker is recorded as failed. Losing the cluster itself
    stops the sweep with nothing recorded for the runs not finished."""
    if cluster.local:
        pilot = execute(todo[0])
        _record(out, [pilot], bar)
        todo = todo[1:]
        # A failed pilot says nothing of how long the others take.
        seconds = max(pilot["wall_seconds"], 1e-4) if pilot["status"] == "ok" else TASK_SECONDS
        workers = cluster.workers or os.cpu_count() or 1
        if seconds * len(todo) <= IN_PROCESS_SECONDS:
            for b in batches(todo, seconds, 1):
                _record(out, execute_batch(b), bar)
            return
        groups = list(batches(todo, seconds, workers))
    else:
        groups = [[j] for j in todo]
    if groups:
        _on_dask(groups, out, cluster, bar)


def _on_dask(groups: list[list[Job]], out: Path, cluster: Cluster, bar) -> None:
    from distributed import KilledWorker, as_completed

    with cluster.client() as client:

        def submit(group: list[Job]):
            return client.submit(execute_batch, group, pure=False, key=f"irqsim-{group[0].run.id}-{len(group)}")

        futures = {submit(g): g for g in groups}
        pending = as_completed(list(futures))
        for f in pending:
            group = futures.pop(f)
            try:
                rows = f.result()
            except KilledWorker as e:
                if len(group) > 1:
                    for j in group:
                        single = submit([j])
                        futures[single] = [j]
                        pending.add(single)
                    continue
                rows = [not_run(group[0], f"KilledWorker: {e}")]
            except Exception as e:
                raise IrqsimError(f"sweep stopped: lost the cluster ({type(e).__name__}: {e}); rerun to resume") from None
            _record(out, rows, bar)
