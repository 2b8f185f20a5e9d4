"""Sweeps: a scenario over a grid of keys and seeds, on dask, into Parquet.

``spec`` reads the spec, ``cluster`` picks where it runs, ``runner``
computes what is missing and ``dataset`` keeps the results on disk.
"""

from irqsim.sweeps.cluster import Cluster
from irqsim.sweeps.dataset import load, query
from irqsim.sweeps.runner import run_sweep, sweep
from irqsim.sweeps.spec import Spec

__all__ = ["Cluster", "Spec", "load", "query", "run_sweep", "sweep"]
