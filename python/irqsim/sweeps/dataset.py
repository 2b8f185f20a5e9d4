"""A sweep's results on disk.

``DIR/runs/<time>-<run id>.parquet`` holds the finished runs of one batch
(one row each), written to a temporary name, flushed and renamed, so a
killed sweep leaves only whole batches and a rerun skips their runs. A run
written again (``--retry-failed``) is taken from the newest part, the names
starting with the time they were written. After every sweep the parts of the
spec's runs are gathered into ``DIR/results.parquet`` (one row per run, one
schema) and ``DIR/summary.parquet`` / ``summary.csv`` (mean and 95%
confidence interval across seeds of each metric at each grid point). The
parts alone are flushed to disk before their rename (they are the record a
rerun resumes from); the gathered files are written again by every rerun.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irqsim.output import atomic_write

if TYPE_CHECKING:
    import pandas as pd

RUNS = "runs"
RESULTS = "results.parquet"
SUMMARY = "summary.parquet"
#: Columns that are not metrics (besides the grid keys).
TEXT = ("status", "error", "run_id", "scenario", "scenario_sha256", "command", "overrides", "irqsim_version", "irqsim_commit", "irqsim_build", "host", "cpu_model", "started_utc")
META = ("seed", *TEXT, "irqsim_dirty", "wall_seconds", "cpu_seconds")


def write_parts(out: Path, rows: list[dict[str, Any]]) -> None:
    """Writes ``rows`` (a batch of runs) as one part file: to a temporary
    name, flushed to disk, renamed, so the part is whole or absent whenever
    the sweep is killed."""
    import time

    import pyarrow as pa
    import pyarrow.parquet as pq

    from irqsim.sweeps.columns import column

    if not rows:
        return
    kind = {**dict.fromkeys(TEXT, pa.string()), "irqsim_dirty": pa.bool_()}
    names = dict.fromkeys(k for row in rows for k in row)
    table = pa.table({k: column([row.get(k) for row in rows], kind.get(k)) for k in names})
    atomic_write(out / RUNS / f"{time.time_ns():020d}-{rows[0]['run_id']}.parquet", lambda tmp: pq.write_table(table, tmp))


def _parts(out: Path) -> list[Path]:
    """The part files, oldest first; leftovers of interrupted writes are removed."""
    runs = out / RUNS
    for tmp in runs.glob(".*.tmp"):
        tmp.unlink(missing_ok=True)
    return sorted(runs.glob("*.parquet"))


#: What writing the results imports (:func:`preload`).
WRITERS = ("pyarrow.csv", "pyarrow.parquet", "scipy.special")


def preload() -> None:
    """Imports what writing the results takes (pyarrow's Parquet and CSV
    writers, numpy, scipy.special: about 0.45 CPU-s), for a thread to do
    while the runs compute, instead of after the last one."""
    import importlib

    for name in WRITERS:
        importlib.import_module(name)


def preloaded() -> bool:
    """Whether :func:`preload` has nothing left to import."""
    import sys

    return all(name in sys.modules for name in WRITERS)


def _read(path: Path, columns: list[str] | None = None):
    """One Parquet file as a pyarrow table (``pq.read_table`` would import
    ``pyarrow.dataset``, and with it pandas: see :mod:`irqsim.sweeps.columns`)."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as f:
        return f.read(columns=columns)


def finished(out: Path) -> set[str]:
    """Ids of the runs in a part file (pyarrow is imported only if there is one)."""
    return {i for p in _parts(out) for i in _read(p, ["run_id"]).column(0).to_pylist()}


def failed(out: Path) -> set[str]:
    """Ids of the runs whose newest row in a part file is not ``ok``."""
    status: dict[str, str] = {}
    for p in _parts(out):
        t = _read(p, ["run_id", "status"])
        status.update(zip(t.column(0).to_pylist(), t.column(1).to_pylist()))
    return {i for i, s in status.items() if s != "ok"}


#: Ids turned into Arrow at a time by :func:`read_parts` (never all as Python strings).
IDS_AT_ONCE = 4_096
#: Results rows read into Python at a time by :func:`summary_table`.
SUMMARY_ROWS = 4_096


def read_parts(out: Path, ids: Iterable[str]):
    """The rows of the runs ``ids`` yields (each from the newest part
    holding it), in that order, as one pyarrow table of unified schema. The
    ids go to Arrow ``IDS_AT_ONCE`` at a time: no list of them is made."""
    import itertools

    import pyarrow as pa
    import pyarrow.compute as pc

    from irqsim.sweeps.columns import column

    # Newest part first: index_in finds an id's first row, its newest.
    table = pa.concat_tables([_read(p) for p in reversed(_parts(out))], promote_options="permissive")
    def chunks(ids=iter(ids)):
        while chunk := list(itertools.islice(ids, IDS_AT_ONCE)):
            yield column(chunk, pa.string())

    at = pc.index_in(pa.chunked_array(chunks(), pa.string()), value_set=table.column("run_id").combine_chunks())
    if at.null_count:
        from irqsim import IrqsimError

        raise IrqsimError(f"{out / RUNS}: {at.null_count:,} of the sweep's runs have no part file (removed while the sweep ran?); rerun to compute them")
    return table.take(at)


def failures(table) -> int:
    """How many of a results table's runs failed."""
    import pyarrow.compute as pc

    return sum(c["counts"] for c in pc.value_counts(table["status"]).to_pylist() if c["values"] != "ok")


def t975(df):
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (two-sided 95% interval):
    scipy's inverse t CDF (``scipy.stats.t.ppf`` calls it too; importing ``scipy.stats`` takes seconds)."""
    from scipy.special import stdtrit

    return stdtrit(df, 0.975)


def summary_table(results, keys: list[str]):
    """Long table (pyarrow): per grid point and metric, ``n`` seeds, ``mean``, ``ci95_low``, ``ci95_high``.

    The interval is mean ± t(0.975, n-1)·s/√n over the seeds whose value is
    defined (NaN counts as undefined); with one seed it is undefined (NaN).
    Metrics in column order, grid points in order of first appearance.
    Grouped by numpy (``np.add.at``), not pyarrow's group-by, which imports
    pandas (:mod:`irqsim.sweeps.columns`)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from irqsim.sweeps.columns import column, floats, from_numpy

    ok = results.filter(pc.equal(results["status"], column(["ok"], pa.string())[0]))
    metrics = [f.name for f in ok.schema if f.name not in META and f.name not in keys and (pa.types.is_integer(f.type) or pa.types.is_floating(f.type))]
    # Rows are turned into Python values SUMMARY_ROWS at a time, so that what
    # this holds grows with the grid points, not with the runs.
    parts = [(start, ok.slice(start, SUMMARY_ROWS)) for start in range(0, ok.num_rows, SUMMARY_ROWS)]

    def values(part):
        v = np.array([floats(part[m]) for m in metrics], dtype=np.float64).reshape(len(metrics), part.num_rows).T
        return v, ~np.isnan(v)

    points: dict[tuple, int] = {}
    group = np.empty(ok.num_rows, dtype=np.intp)
    for start, part in parts:
        labels = zip(*(part[k].to_pylist() for k in keys)) if keys else [()] * part.num_rows
        group[start : start + part.num_rows] = [points.setdefault(p, len(points)) for p in labels]
    first = np.unique(group, return_index=True)[1].astype(np.int64)  # each point's first row, in order
    n, total, squares = (np.zeros((len(first), len(metrics))) for _ in range(3))
    for start, part in parts:
        v, defined = values(part)
        g = group[start : start + part.num_rows]
        np.add.at(n, g, defined)
        np.add.at(total, g, np.where(defined, v, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / n
        for start, part in parts:
            v, defined = values(part)
            g = group[start : start + part.num_rows]
            np.add.at(squares, g, np.where(defined, v - mean[g], 0.0) ** 2)
        half = t975(np.where(n > 1, n - 1, np.nan)) * np.sqrt(squares / (n - 1)) / np.sqrt(n)
    # One row per (metric, point): metrics outside, points inside.
    at = from_numpy(np.tile(first, len(metrics)))
    flat = [np.ascontiguousarray(a.T).ravel() for a in (mean, mean - half, mean + half)]
    return pa.table(
        {
            **{k: ok[k].take(at) for k in keys},
            "metric": column([m for m in metrics for _ in range(len(first))], pa.string()),
            "n": from_numpy(np.ascontiguousarray(n.T).ravel().astype(np.int64)),
            **dict(zip(("mean", "ci95_low", "ci95_high"), map(from_numpy, flat))),
        }
    )


def summarize(results: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """:func:`summary_table` of a results DataFrame, as a DataFrame."""
    import pyarrow as pa

    return summary_table(pa.Table.from_pandas(results, preserve_index=False), keys).to_pandas()


def consolidate(out: Path, ids: Iterable[str], keys: list[str]):
    """Gathers the parts of the runs ``ids`` yields into results.parquet and
    the summary (parquet and CSV), written by Arrow straight to their files;
    returns the results as a pyarrow table."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    table = read_parts(out, ids)
    summary = summary_table(table, keys)
    # Not flushed to disk: the parts are the record, and any rerun of the sweep writes these again.
    atomic_write(out / RESULTS, lambda tmp: pq.write_table(table, tmp), durable=False)
    atomic_write(out / SUMMARY, lambda tmp: pq.write_table(summary, tmp), durable=False)
    atomic_write(out / "summary.csv", lambda tmp: pcsv.write_csv(summary, tmp), durable=False)
    return table


def to_pandas(table) -> pd.DataFrame:
    """``table`` as a DataFrame whose integer columns stay integers where
    failed runs leave them empty (pandas' nullable ``Int64``)."""
    import pandas as pd
    import pyarrow as pa

    return table.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)


def load(out: str | Path) -> pd.DataFrame:
    """A finished sweep's results as a DataFrame."""
    import pyarrow.parquet as pq

    return to_pandas(pq.read_table(Path(out) / RESULTS))


def query(out: str | Path, sql: str) -> pd.DataFrame:
    """Runs ``sql`` with DuckDB over the views ``runs`` (results) and ``summary``.

    The query is confined to the dataset: once the views exist, DuckDB's
    external access is disabled except for the two Parquet files, and the
    configuration is locked, so no statement can read, list, write or attach
    another file or load an extension."""
    import duckdb

    from irqsim import IrqsimError

    out = Path(out)
    if not (out / RESULTS).is_file():
        raise IrqsimError(f"{out}: no {RESULTS} here (not a sweep's output directory, or the sweep has not finished once)")
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    paths = []
    for view, file in (("runs", RESULTS), ("summary", SUMMARY)):
        path = str((out / file).resolve())
        paths.append(path)
        con.execute(f"CREATE VIEW {view} AS SELECT * FROM read_parquet('{_quote(path)}')")
    allowed = ", ".join(f"'{_quote(p)}'" for p in paths)
    con.execute(f"SET allowed_paths = [{allowed}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    try:
        result = con.execute(sql)
    except duckdb.Error as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise IrqsimError(f"query: {first}") from None
    if result is None:
        raise IrqsimError("query: the SQL holds no statement")
    return result.fetchdf()


def _quote(text: str) -> str:
    """``text`` inside a single-quoted SQL string literal."""
    return text.replace("'", "''")
