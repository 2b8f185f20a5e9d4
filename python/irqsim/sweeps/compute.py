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
to the output directory. Jobs come from a generator and only a bounded
number of batches is submitted at once, so a sweep of millions of runs
never has them all in memory.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Iterable, Iterator
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
#: Runs submitted at once to a remote scheduler or SLURM (one task each); more wait in the client, ungenerated.
REMOTE_IN_FLIGHT = 1024


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


def batches(jobs: Iterable[Job], n: int, seconds_per_run: float, workers: int) -> Iterator[list[Job]]:
    """The ``n`` ``jobs`` in batches of about ``TASK_SECONDS``, at least
    ``BATCHES_PER_WORKER`` per worker; taken from ``jobs`` as they are needed."""
    size = max(1, min(round(TASK_SECONDS / max(seconds_per_run, 1e-6)), math.ceil(n / (workers * BATCHES_PER_WORKER))))
    jobs = iter(jobs)
    while batch := list(itertools.islice(jobs, size)):
        yield batch


def _record(out: Path, rows: list[dict[str, Any]], bar) -> int:
    dataset.write_parts(out, rows)
    for row in rows:
        bar.advance(row["status"] == "ok")
    return len(rows)


def compute(todo: Iterable[Job], n: int, out: Path, cluster: Cluster, bar) -> int:
    """Runs the jobs of ``todo`` (about ``n``, generated as they are needed),
    writing each batch's parts as it finishes; returns how many ran.

    A batch whose worker keeps dying (``KilledWorker``: a run crashed the
    process or ran out of memory) is split into single runs; a single run
    that kills its worker is recorded as failed. Losing the cluster itself
    stops the sweep with nothing recorded for the runs not finished."""
    todo = iter(todo)
    pilot_job = next(todo, None)
    if pilot_job is None:
        return 0
    if cluster.local:
        pilot = execute(pilot_job)
        _record(out, [pilot], bar)
        n -= 1
        # A failed pilot says nothing of how long the others take.
        seconds = max(pilot["wall_seconds"], 1e-4) if pilot["status"] == "ok" else TASK_SECONDS
        workers = cluster.workers or os.cpu_count() or 1
        if seconds * n <= IN_PROCESS_SECONDS:
            return 1 + sum(_record(out, execute_batch(b), bar) for b in batches(todo, n, seconds, 1))
        return 1 + _on_dask(batches(todo, n, seconds, workers), out, cluster, bar, workers * BATCHES_PER_WORKER * 2)
    return _on_dask(([j] for j in itertools.chain([pilot_job], todo)), out, cluster, bar, REMOTE_IN_FLIGHT)


def _on_dask(groups: Iterator[list[Job]], out: Path, cluster: Cluster, bar, in_flight: int) -> int:
    """Runs ``groups`` on dask, at most ``in_flight`` of them submitted at
    once (the next is taken from ``groups`` as one finishes); returns the runs recorded."""
    from distributed import KilledWorker, as_completed

    recorded = 0
    with cluster.client() as client:

        def submit(group: list[Job]):
            f = client.submit(execute_batch, group, pure=False, key=f"irqsim-{group[0].run.id}-{len(group)}")
            futures[f] = group
            return f

        futures: dict = {}
        pending = as_completed([submit(g) for g in itertools.islice(groups, in_flight)])
        for f in pending:
            group = futures.pop(f)
            try:
                rows = f.result()
            except KilledWorker as e:
                if len(group) > 1:
                    for j in group:
                        pending.add(submit([j]))
                    continue
                rows = [not_run(group[0], f"KilledWorker: {e}")]
            except Exception as e:
                raise IrqsimError(f"sweep stopped: lost the cluster ({type(e).__name__}: {e}); rerun to resume") from None
            recorded += _record(out, rows, bar)
            for g in itertools.islice(groups, 1):
                pending.add(submit(g))
    return recorded
