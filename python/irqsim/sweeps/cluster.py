"""Where a sweep runs: one dask.distributed code path, three kinds of cluster.

- local (default): a ``LocalCluster`` on loopback, one single-threaded worker
  process per core, no dashboard unless asked for (``--dashboard``);
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
    #: Serve dask's dashboard (local cluster: on 127.0.0.1:8787).
    dashboard: bool = False

    def __post_init__(self) -> None:
        if sum([self.workers is not None, self.scheduler is not None, self.slurm]) > 1:
            raise IrqsimError("choose one of --workers, --scheduler and --slurm")
        if self.workers is not None and self.workers < 1:
            raise IrqsimError(f"--workers: must be at least 1, not {self.workers}")

    @property
    def local(self) -> bool:
        """Whether the workers are processes on this machine."""
        return not (self.scheduler or self.slurm)

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
        """A dask Client connected to this cluster, closed on exit."""
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
                n = self.workers or os.cpu_count() or 1
                if self.dashboard and importlib.util.find_spec("bokeh") is None:
                    raise IrqsimError("--dashboard needs bokeh: pip install 'bokeh>=3.1'")
                # Without a dashboard the scheduler still serves health checks: on a free port, not 8787.
                web = {"dashboard_address": "127.0.0.1:8787"} if self.dashboard else {"dashboard_address": "127.0.0.1:0", "scheduler_kwargs": {"dashboard": False}}
                with _workers_ignore_ctrl_c():
                    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1", silence_logs=logging.CRITICAL, **web)
                stack.enter_context(cluster)
                client = stack.enter_context(Client(cluster))
                if self.dashboard:
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
