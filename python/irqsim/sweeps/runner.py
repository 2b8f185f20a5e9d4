"""Running a sweep: plan, skip what is done, compute the rest
(:mod:`irqsim.sweeps.compute`), gather the results.

A directory's runs are those of one
build of irqsim (``build.json``): another build is refused unless asked for
(``new_build``), and a spec may change in its values and seeds only, so that
extending a sweep computes just the new runs. A run whose scenario is invalid at
its grid point, or that fails, is recorded with its error; if every run of
the sweep is invalid, the spec itself is wrong and the sweep stops with the
first error instead.

Runs are generated, never listed: once to count those missing, once to
compute them (a window as wide as the workers, :mod:`irqsim.sweeps.compute`)
and once to gather the results in the spec's order. What a sweep holds does
not grow with its number of runs, but for the ids of runs already finished
(to resume) and the results table it returns.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irqsim import IrqsimError, _core, api
from irqsim import provenance as prov
from irqsim.api import ArgumentError
from irqsim.output import atomic_write, output_dir, read_text
from irqsim.sweeps import dataset
from irqsim.sweeps.cluster import Cluster
from irqsim.sweeps.compute import Job, compute
from irqsim.sweeps.lock import locked
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


@dataclass
class Done:
    runs: int
    failed: int
    computed: int
    #: The results as a pyarrow table (:attr:`results` as pandas, made on first use).
    table: Any

    @functools.cached_property
    def results(self) -> pd.DataFrame:
        return dataset.to_pandas(self.table)


class _Jobs:
    """Every run of a spec as a job, generated afresh by each iteration and never listed."""

    def __init__(self, s: Spec) -> None:
        name, text, base = s.source()
        self.spec = s
        self.sha = hashlib.sha256(text.encode()).hexdigest()
        self.build = prov.build_id()
        self.args = (name, text, str(base), s.origin, {"scenario": name, "scenario_sha256": self.sha, "command": prov.where()["command"]}, self.build)

    def __iter__(self) -> Iterator[Job]:
        name, text, base, origin, provenance, build = self.args
        return (Job(r, name, text, base, origin, provenance, build) for r in self.spec.runs(self.sha, self.build, self._inputs))

    @functools.cached_property
    def _inputs(self):
        """``sets`` → the digest of the files a run with them reads ("" for
        none): a changed program or trace gives its runs new ids. Only the
        keys that name a file and `workload.kind` decide which files, so
        runs that differ in nothing else share one look-up."""
        name, text, base, origin = self.args[:4]
        deciding = (*_core.INPUT_KEYS, "workload.kind")
        known: dict[tuple[str, ...], str] = {}

        def digest(sets: list[str]) -> str:
            files = tuple(x for x in sets if x.split("=", 1)[0].strip() in deciding)
            if files not in known:
                try:
                    found = _core.inputs(text=text, name=name, sets=sets, base=base, origin=origin)
                except IrqsimError:
                    return ""  # the run fails with this error when it runs
                listed = json.dumps([(key, api.file_sha256(path)) for key, path in found])
                known[files] = hashlib.sha256(listed.encode()).hexdigest() if found else ""
            return known[files]

        return digest


def _check_spec(jobs: Iterator[Job]) -> None:
    """Raises the first run's error if no run of the spec validates (the
    spec itself is wrong). Only when the first run is invalid are the others
    loaded: one invalid at its grid point fails as it runs, with the same error."""

    def error(j: Job) -> IrqsimError | None:
        try:
            _core.validate(text=j.text, name=j.name, sets=j.run.overrides, origin=j.label)
        except IrqsimError as e:
            return e
        return None

    first = error(next(jobs))
    if first is not None and all(error(j) is not None for j in jobs):
        raise first


class _Writing(threading.Thread):
    """Runs ``write`` in a thread; :meth:`join` raises what it raised."""

    def __init__(self, write) -> None:
        super().__init__(name="irqsim-sweep-identity", daemon=True)
        self.write, self.error = write, None
        self.start()

    def run(self) -> None:
        try:
            self.write()
        except BaseException as e:  # raised in the sweep's thread by join
            self.error = e

    def join(self, timeout: float | None = None) -> None:
        super().join(timeout)
        if self.error is not None:
            error, self.error = self.error, None
            raise error


def _keep(path: Path, data: bytes) -> None:
    """Writes ``data`` to ``path`` unless it already holds them (a resumed sweep)."""
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    atomic_write(path, data)


def _done(out: Path, retry_failed: bool) -> set[str]:
    """Ids of the runs with a part file (less the failed ones, to retry)."""
    done = dataset.finished(out)
    return done - dataset.failed(out) if retry_failed and done else done


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
    jobs = _Jobs(s)
    _check_spec(iter(jobs))
    output_dir(out / dataset.RUNS)
    with locked(out):
        return _run_locked(s, out, jobs, cluster, progress, retry_failed, new_build)


def _run_locked(s: Spec, out: Path, jobs: _Jobs, cluster: Cluster | None, progress: bool, retry_failed: bool, new_build: bool) -> Done:
    """The rest of :func:`run_sweep`, holding the directory's lock (the
    directory is checked again: another sweep may have written it meanwhile)."""
    import tomli_w

    _check_output(out, s, new_build)
    # The sweep's identity is flushed to disk while the first runs compute
    # (an fsync is milliseconds on a busy disk), and before any part is written.
    identity = _Writing(lambda: (_keep(out / SPEC, tomli_w.dumps(s.to_dict()).encode()), _keep(out / BUILD, json.dumps({"build": prov.build_id(), **prov.build()}, indent=1).encode())))
    try:
        done = _done(out, retry_failed)
        total = s.count()
        missing = sum(j.run.id not in done for j in jobs)
        if missing:
            from irqsim.progress import SweepProgress

            with SweepProgress(total, total - missing, enabled=progress) as bar:
                compute((j for j in jobs if j.run.id not in done), missing, out, cluster or Cluster(), bar, ready=identity.join)
    finally:
        identity.join()
    table = dataset.consolidate(out, (j.run.id for j in jobs), [*s.grid, *s.zip])
    return Done(total, dataset.failures(table), missing, table)


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
    ``out`` and returns its results, one row per run, on ``workers``
    threads of this process (default: one per core) or on the dask
    ``scheduler`` at that address. Rerunning completes only what is missing;
    adding seeds or values computes only the new runs. A directory computed
    by another build of irqsim is refused unless ``new_build``."""
    _check_arguments(spec=spec, out=out, workers=workers, scheduler=scheduler, sets=sets, progress=progress, retry_failed=retry_failed, new_build=new_build)
    cluster = Cluster(workers=workers, scheduler=scheduler)
    return run_sweep(spec, out, sets=sets, cluster=cluster, progress=progress, retry_failed=retry_failed, new_build=new_build).results


def _check_arguments(**given: Any) -> None:
    """Raises :class:`irqsim.ArgumentError` naming the first argument of the wrong type."""
    path = (str, os.PathLike)
    expected = {
        "spec": ((*path, dict), "a spec file's path or a dict"),
        "out": (path, "a directory path"),
        "workers": ((int, type(None)), "a number of threads >= 1, or None"),
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
