"""A sweep's results on disk.

``DIR/runs/<time>-<run id>.parquet`` holds the finished runs of one batch
(one row each), written to a temporary name, flushed and renamed, so a
killed sweep leaves only whole batches and a rerun skips their runs. A run
written again (``--retry-failed``) is taken from the newest part, the names
starting with the time they were written. After every sweep the parts of the
spec's runs are gathered into ``DIR/results.parquet`` (one row per run, one
schema) and ``DIR/summary.parquet`` / ``summary.csv`` (mean and 95%
confidence interval across seeds of each metric at each grid point).
"""

from __future__ import annotations

import io
import os
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
TEXT = ("status", "error", "run_id", "scenario", "scenario_sha256", "command", "overrides", "irqsim_version", "irqsim_commit", "host", "cpu_model", "started_utc")
META = ("seed", *TEXT, "irqsim_dirty", "wall_seconds", "cpu_seconds")


def write_parts(out: Path, rows: list[dict[str, Any]]) -> None:
    """Writes ``rows`` (a batch of runs) as one part file: to a temporary
    name, flushed to disk, renamed, so the part is whole or absent whenever
    the sweep is killed."""
    import time

    import pyarrow as pa
    import pyarrow.parquet as pq

    if not rows:
        return
    kind = {**dict.fromkeys(TEXT, pa.string()), "irqsim_dirty": pa.bool_()}
    columns = dict.fromkeys(k for row in rows for k in row)
    table = pa.table({k: pa.array([row.get(k) for row in rows], type=kind.get(k)) for k in columns})
    path = out / RUNS / f"{time.time_ns():020d}-{rows[0]['run_id']}.parquet"
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(table, tmp)
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _parts(out: Path) -> list[Path]:
    """The part files, oldest first; leftovers of interrupted writes are removed."""
    runs = out / RUNS
    for tmp in runs.glob(".*.tmp"):
        tmp.unlink(missing_ok=True)
    return sorted(runs.glob("*.parquet"))


def finished(out: Path) -> set[str]:
    """Ids of the runs in a part file."""
    import pyarrow.parquet as pq

    return {i for p in _parts(out) for i in pq.read_table(p, columns=["run_id"]).column(0).to_pylist()}


def failed(out: Path) -> set[str]:
    """Ids of the runs whose newest row is a failure."""
    import pyarrow.parquet as pq

    status = {}
    for p in _parts(out):
        t = pq.read_table(p, columns=["run_id", "status"])
        status.update(zip(t.column(0).to_pylist(), t.column(1).to_pylist()))
    return {i for i, st in status.items() if st != "ok"}


def read_parts(out: Path, ids: Iterable[str]):
    """The rows of ``ids`` (each from the newest part holding it), in that
    order, as one pyarrow table of unified schema."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.concat_tables([pq.read_table(p) for p in _parts(out)], promote_options="permissive")
    newest = {i: n for n, i in enumerate(table.column("run_id").to_pylist())}
    return table.take([newest[i] for i in ids])


def t975(df):
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (two-sided 95% interval):
    scipy's inverse t CDF (``scipy.stats.t.ppf`` calls it too; importing ``scipy.stats`` takes seconds)."""
    from scipy.special import stdtrit

    return stdtrit(df, 0.975)


def summarize(results: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Long table: per grid point and metric, ``n`` seeds, ``mean``, ``ci95_low``, ``ci95_high``.

    The interval is mean ± t(0.975, n-1)·s/√n over the seeds whose value is
    defined; with one seed it is undefined (NaN)."""
    import numpy as np
    import pandas as pd

    ok = results[results["status"] == "ok"]
    metrics = [c for c in ok.columns if c not in META and c not in keys and pd.api.types.is_numeric_dtype(ok[c])]
    long = ok[keys].join(ok[metrics].astype("float64")).melt(id_vars=keys, value_vars=metrics, var_name="metric")
    g = long.groupby([*keys, "metric"], sort=False, dropna=False)["value"].agg(n="count", mean="mean", sd="std").reset_index()
    with np.errstate(invalid="ignore"):
        half = t975(np.where(g["n"] > 1, g["n"] - 1, np.nan)) * g["sd"] / np.sqrt(g["n"])
    g["ci95_low"], g["ci95_high"] = g["mean"] - half, g["mean"] + half
    return g[[*keys, "metric", "n", "mean", "ci95_low", "ci95_high"]]


def consolidate(out: Path, ids: Iterable[str], keys: list[str]) -> pd.DataFrame:
    """Gathers the parts of ``ids`` into results.parquet and the summary; returns the results."""
    import pyarrow.parquet as pq

    table = read_parts(out, ids)
    buf = io.BytesIO()
    pq.write_table(table, buf)
    atomic_write(out / RESULTS, buf.getvalue())
    results = to_pandas(table)
    summary = summarize(results, keys)
    buf = io.BytesIO()
    summary.to_parquet(buf, index=False)
    atomic_write(out / SUMMARY, buf.getvalue())
    atomic_write(out / "summary.csv", summary.to_csv(index=False).encode())
    return results


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
