"""Computing a sweep's missing runs: one run (:func:`execute`), and how runs
are spread over the cores (:func:`compute`).

The runs to compute come from a generator, never a list (a sweep may
have millions): each way of computing takes the next runs only as workers
are ready for them, so the jobs held at once are those in flight, and the
finished rows wait for their part file in bounded number.

On this machine (the default) the runs go to threads of the ``irqsim
sweep`` process, one per core. The core releases the GIL while it
simulates, so the threads use every core with nothing to start, pickle or
schedule: each takes the next run as it finishes one, and the finished rows
are written as one part file about every ``PART_SECONDS`` (or every
``PART_ROWS`` rows, whichever comes first).

On a dask cluster (a running scheduler, SLURM, or a local one with
``--dashboard``) each worker thread's first run is its own task; the first
run back tells how long a run takes, and the rest go in batches of about
``TASK_SECONDS`` each, so that dask's cost per task (scheduling, pickling, a
round trip) vanishes beside the runs, with enough batches to keep every
worker busy to the end; at most ``IN_FLIGHT`` batches per worker are
submitted at once, the next as one comes back. The client writes every part file (workers only
compute), a batch's runs as one part file, so the workers need no access to
the output directory.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irqsim import IrqsimError, _core
from irqsim import provenance as prov
from irqsim.sweeps import dataset
from irqsim.sweeps.cluster import Cluster
from irqsim.sweeps.spec import Run

#: Threads: finished rows are written as one part file about this often; a killed sweep loses at most that much.
PART_SECONDS = 1.0
#: ... or once this many rows wait, so that the rows held do not grow with the runs' speed.
PART_ROWS = 1_000
#: Threads: finished rows a thread may hand over before the writer takes them; a thread
#: whose rows wait waits too, so the rows held stay bounded while a part file is written.
HANDED_PER_THREAD = 4
#: A batch (one dask task) should take about this long: a killed sweep loses at most that much per worker.
TASK_SECONDS = 1.0
#: Batches per worker at least, so that no worker idles while another finishes a long batch.
BATCHES_PER_WORKER = 4
#: Batches submitted to dask at once, per worker: enough to keep each busy, few enough to hold.
IN_FLIGHT = 2


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


@functools.cache
def _here() -> dict[str, Any]:
    """The build, host and CPU of this process (a worker's, on dask)."""
    return {**prov.build(), "host": prov.where()["host"], "cpu_model": prov.cpu_model()}


class Stopped(BaseException):
    """Raised into a running run (through its progress callback) when the sweep stops; never recorded."""


def execute(job: Job, stop: threading.Event | None = None) -> dict[str, Any]:
    """Runs one job; a failure becomes the row's error. The row records the
    worker's build, host and the run's time. When ``stop`` is set the run
    ends within 65,536 events, raising :class:`Stopped`."""

    def check(_now: int, _end: int) -> None:
        if stop.is_set():
            raise Stopped

    with prov.timed() as timing:
        try:
            if prov.build_id() != job.build:
                raise IrqsimError(f"this worker runs irqsim {prov.build_id()}, the sweep {job.build}: install the same build on every worker")
            rep = _core.run(text=job.text, name=job.name, sets=job.run.overrides, base=job.base, origin=job.label, progress=check if stop else None)
            metrics, error = rep.metrics(), None
        except Exception as e:  # recorded, never fatal: one bad point must not stop a sweep
            metrics, error = None, f"{type(e).__name__}: {e}"
    return _row(job, metrics, error, {**_here(), **timing})


def execute_batch(jobs: list[Job]) -> list[dict[str, Any]]:
    """Runs jobs one after another (one dask task)."""
    return [execute(j) for j in jobs]


def not_run(job: Job, error: str) -> dict[str, Any]:
    """The row of a run that failed without running (invalid, or its worker died)."""
    return _row(job, None, error, {**prov.build(), "host": None, "cpu_model": None, "started_utc": None, "wall_seconds": 0.0, "cpu_seconds": 0.0})


def batch_size(seconds_per_run: float, runs: int, workers: int) -> int:
    """Runs per batch: about ``TASK_SECONDS`` of work, at least ``BATCHES_PER_WORKER`` batches per worker for ``runs``."""
    return max(1, min(round(TASK_SECONDS / max(seconds_per_run, 1e-6)), math.ceil(runs / (workers * BATCHES_PER_WORKER))))


def _record(out: Path, rows: list[dict[str, Any]], bar) -> None:
    dataset.write_parts(out, rows)
    for row in rows:
        bar.advance(row["status"] == "ok")


def compute(todo: Iterator[Job], count: int, out: Path, cluster: Cluster, bar, ready: Callable[[], None] = lambda: None) -> None:
    """Runs the ``count`` jobs ``todo`` yields, writing the finished runs'
    parts as it goes; ``ready()`` is called once the first runs are under
    way, before any part is written."""
    if cluster.threads:
        _on_threads(todo, count, out, cluster.local_workers(), bar, ready)
    else:
        _on_dask(todo, count, out, cluster, bar, ready)


def _on_threads(todo: Iterator[Job], count: int, out: Path, n: int, bar, ready: Callable[[], None]) -> None:
    """``n`` threads take the runs in turn; this thread writes their rows.

    On any exception here (Ctrl-C, a part that cannot be written) the
    threads stop their runs and end; the rows already finished are written
    on Ctrl-C, so that a rerun does not compute them again."""
    take = threading.Lock()
    n = min(n, count)
    finished: queue.Queue = queue.Queue(maxsize=HANDED_PER_THREAD * max(n, 1))
    stop = threading.Event()

    def work() -> None:
        try:
            while not stop.is_set():
                with take:
                    job = next(todo, None)
                if job is None:
                    break
                finished.put(execute(job, stop))  # waits while the writer is behind
        except Stopped:
            pass
        finally:
            finished.put(None)

    threads = [threading.Thread(target=work, name=f"irqsim-sweep-{i}", daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    # The writers' imports, done while the runs simulate (they release the GIL meanwhile);
    # no thread to start when an earlier sweep of this process imported them.
    if not dataset.preloaded():
        threading.Thread(target=dataset.preload, name="irqsim-sweep-imports", daemon=True).start()
    rows: list[dict[str, Any]] = []
    running, last = len(threads), time.monotonic()
    try:
        ready()
        while running:
            row = finished.get()
            if row is None:
                running -= 1
                continue
            rows.append(row)
            if len(rows) >= PART_ROWS or time.monotonic() - last >= PART_SECONDS:
                _record(out, rows, bar)
                rows, last = [], time.monotonic()
    except KeyboardInterrupt:
        stop.set()
        rows += _taken_until_ended(threads, finished)
        _record(out, rows, bar)
        raise
    finally:
        stop.set()
        if running:  # a thread may be waiting to hand over a row: take them until all end
            _taken_until_ended(threads, finished)
    _record(out, rows, bar)


def _taken_until_ended(threads: list[threading.Thread], finished: queue.Queue) -> list[dict[str, Any]]:
    """The rows the stopping threads still hand over, taken until all have ended."""
    rows = []
    while True:
        try:
            row = finished.get(timeout=0.05)
        except queue.Empty:
            if not any(t.is_alive() for t in threads):
                return rows
            continue
        if row is not None:
            rows.append(row)


def _on_dask(todo: Iterator[Job], count: int, out: Path, cluster: Cluster, bar, ready: Callable[[], None]) -> None:
    """One task per worker thread first, then the rest in batches sized by
    the first run back, ``IN_FLIGHT`` per worker at a time.

    A batch whose worker keeps dying (``KilledWorker``: a run crashed the
    process or ran out of memory) is split into single runs; a single run
    that kills its worker is recorded as failed. Losing the cluster itself
    stops the sweep with nothing recorded for the runs not finished."""
    from distributed import KilledWorker, as_completed

    with cluster.client() as client:
        workers = max(1, sum(client.nthreads().values()), cluster.slurm_jobs if cluster.slurm else 1)
        futures: dict = {}
        pending = as_completed()

        def submit(group: list[Job]) -> None:
            f = client.submit(execute_batch, group, pure=False, key=f"irqsim-{group[0].run.id}-{len(group)}")
            futures[f] = group
            pending.add(f)

        for j in itertools.islice(todo, workers):
            submit([j])
        ready()
        size = None
        for f in pending:
            group = futures.pop(f)
            try:
                rows = f.result()
            except KilledWorker as e:
                if len(group) > 1:
                    for j in group:
                        submit([j])
                    continue
                rows = [not_run(group[0], f"KilledWorker: {e}")]
            except Exception as e:
                raise IrqsimError(f"sweep stopped: lost the cluster ({type(e).__name__}: {e}); rerun to resume") from None
            _record(out, rows, bar)
            ok = [r["wall_seconds"] for r in rows if r["status"] == "ok"]
            if size is None and (ok or not futures):
                # A failed run says nothing of how long the others take.
                size = batch_size(max(ok) if ok else TASK_SECONDS, max(0, count - workers), workers)
            while size is not None and len(futures) < IN_FLIGHT * workers and (group := list(itertools.islice(todo, size))):
                submit(group)
