"""Where a sweep runs: threads in this process, or one of three kinds of
dask.distributed cluster.

- local (default): one thread per core in the ``irqsim sweep`` process
  (:mod:`irqsim.sweeps.compute`); no dask, nothing listens on any port;
- local with a dashboard (``--dashboard``): a dask ``LocalCluster`` on
  loopback, one single-threaded worker process per core, its dashboard on
  127.0.0.1:8787;
- an existing scheduler, by address (``tcp://host:8786``): its workers must
  have irqsim installed and see the scenario's trace files at the same paths;
- SLURM, through dask-jobqueue's ``SLURMCluster``: options come from
  dask-jobqueue's configuration (``~/.config/dask/jobqueue.yaml``) and
  ``--slurm-opt KEY=VALUE``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from irqsim import IrqsimError


@dataclass
class Cluster:
    workers: int | None = None
    scheduler: str | None = None
    slurm: bool = False
    slurm_jobs: int = 1
    slurm_options: list[str] = field(default_factory=list)
    #: Run on a local dask cluster and serve its dashboard on 127.0.0.1:8787.
    dashboard: bool = False

    def __post_init__(self) -> None:
        if sum([self.workers is not None, self.scheduler is not None, self.slurm]) > 1:
            raise IrqsimError("choose one of --workers, --scheduler and --slurm")
        if self.workers is not None and self.workers < 1:
            raise IrqsimError(f"--workers: must be at least 1, not {self.workers}")
        if self.dashboard and self.local and importlib.util.find_spec("bokeh") is None:
            raise IrqsimError("--dashboard needs bokeh: pip install 'bokeh>=3.1'")

    @property
    def local(self) -> bool:
        """Whether the runs are computed on this machine."""
        return not (self.scheduler or self.slurm)

    @property
    def threads(self) -> bool:
        """Whether the runs are computed by threads of this process (no dask)."""
        return self.local and not self.dashboard

    def local_workers(self) -> int:
        """Threads or worker processes on this machine: ``workers``, else one per core this process may use."""
        if self.workers:
            return self.workers
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

    def slurm_cluster(self):
        """The SLURMCluster these options describe (no job submitted yet)."""
        try:
            from dask_jobqueue import SLURMCluster
        except ImportError:
            raise IrqsimError("--slurm needs dask-jobqueue: pip install 'irqsim[slurm]'") from None
        from irqsim.sweeps.spec import key_value

        kwargs = dict(key_value(opt, "--slurm-opt") for opt in self.slurm_options)
        try:
            return SLURMCluster(**kwargs)
        except (TypeError, ValueError) as e:
            raise IrqsimError(f"--slurm-opt: {e}") from None

    @contextlib.contextmanager
    def client(self) -> Iterator:
        """A dask Client connected to this cluster (not :attr:`threads`), closed on exit."""
        from distributed import Client, LocalCluster

        # A run's own failure is recorded in its row; dask's logs (a worker
        # lost, a comm closed while shutting down) would only break the
        # one-line contract of the command line.
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        with contextlib.ExitStack() as stack:
            if self.scheduler:
                try:
                    client = stack.enter_context(Client(self.scheduler, timeout="20s"))
                except OSError as e:
                    raise IrqsimError(f"--scheduler {self.scheduler}: {e}") from None
            elif self.slurm:
                cluster = stack.enter_context(self.slurm_cluster())
                cluster.scale(jobs=self.slurm_jobs)
                client = stack.enter_context(Client(cluster))
            else:
                with _workers_ignore_ctrl_c():
                    cluster = LocalCluster(
                        n_workers=self.local_workers(), threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:8787", silence_logs=logging.CRITICAL
                    )
                stack.enter_context(cluster)
                client = stack.enter_context(Client(cluster))
                print(f"dask dashboard: {client.dashboard_link}", file=sys.stderr)
            yield client


@contextlib.contextmanager
def _workers_ignore_ctrl_c() -> Iterator[None]:
    """Worker processes started in here inherit an ignored SIGINT (Python
    keeps an inherited SIG_IGN), so Ctrl-C reaches only the client, which
    then shuts them down, instead of each printing a traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
