"""A sweep's results on disk.

``DIR/runs/<run id>.parquet`` holds one finished run each, written to a
temporary name and renamed, so a killed sweep leaves only whole runs and a
rerun skips them. After every sweep the parts of the spec's runs are
gathered into ``DIR/results.parquet`` (one row per run, one schema) and
``DIR/summary.parquet`` / ``summary.csv`` (mean and 95% confidence interval
across seeds of each metric at each grid point).
"""

from __future__ import annotations

import io
import math
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irqsim.output import atomic_write

if TYPE_CHECKING:
    import pandas as pd

RUNS = "runs"
RESULTS = "results.parquet"
SUMMARY = "summary.parquet"
#: Columns that are not metrics (besides the grid keys).
META = ("seed", "status", "error", "run_id", "irqsim_version", "scenario", "scenario_sha256", "overrides", "wall_seconds")
TEXT = ("status", "error", "run_id", "irqsim_version", "scenario", "scenario_sha256", "overrides")


def write_part(out: Path, row: dict[str, Any]) -> None:
    """Writes one run's row as ``runs/<run_id>.parquet``, atomically."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({k: pa.array([v], type=pa.string() if k in TEXT else None) for k, v in row.items()})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    atomic_write(out / RUNS / f"{row['run_id']}.parquet", buf.getvalue())


def finished(out: Path) -> set[str]:
    """Run ids with a part file; leftovers of interrupted writes are removed."""
    runs = out / RUNS
    for tmp in runs.glob(".*.tmp"):
        tmp.unlink(missing_ok=True)
    return {p.stem for p in runs.glob("*.parquet")}


def read_parts(out: Path, ids: list[str]):
    """The parts of ``ids``, in that order, as one pyarrow table of unified schema."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = [pq.read_table(out / RUNS / f"{i}.parquet") for i in ids]
    return pa.concat_tables(tables, promote_options="permissive")


@lru_cache(maxsize=None)
def t975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom
    (two-sided 95% interval), by bisection on its numerically integrated CDF."""
    import numpy as np

    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)

    def cdf(t: float) -> float:
        x = np.linspace(0.0, t, 20001)
        y = c * (1 + x * x / df) ** (-(df + 1) / 2)
        return 0.5 + float(np.sum((y[1:] + y[:-1]) / 2) * (x[1] - x[0]))

    lo, hi = 0.0, 100.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < 0.975 else (lo, mid)
    return (lo + hi) / 2


def summarize(results: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Long table: per grid point and metric, ``n`` seeds, ``mean``, ``ci95_low``, ``ci95_high``.

    The interval is mean ± t(0.975, n-1)·s/√n over the seeds whose value is
    defined; with one seed it is undefined (NaN)."""
    import pandas as pd

    ok = results[results["status"] == "ok"]
    metrics = [c for c in ok.columns if c not in META and c not in keys and pd.api.types.is_numeric_dtype(ok[c])]
    rows = []
    groups = ok.groupby(keys, sort=False, dropna=False) if keys else [((), ok)]
    for point, g in groups:
        point = point if isinstance(point, tuple) else (point,)
        for m in metrics:
            v = g[m].dropna().astype(float)
            n = len(v)
            mean = v.mean() if n else math.nan
            half = t975(n - 1) * v.std(ddof=1) / math.sqrt(n) if n > 1 else math.nan
            rows.append({**dict(zip(keys, point)), "metric": m, "n": n, "mean": mean, "ci95_low": mean - half, "ci95_high": mean + half})
    return pd.DataFrame(rows, columns=[*keys, "metric", "n", "mean", "ci95_low", "ci95_high"])


def consolidate(out: Path, ids: list[str], keys: list[str]) -> pd.DataFrame:
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
