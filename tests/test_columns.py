"""Arrow columns built from buffers (irqsim.sweeps.columns) are what
``pa.array`` builds, and a sweep writes its Parquet without pandas."""

from __future__ import annotations

import math
import subprocess
import sys

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irqsim.sweeps.columns import column

KINDS = [
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.one_of(st.integers(-(2**53), 2**53), st.floats()),
    st.text(),
]


def same(a: pa.Array, b: pa.Array) -> bool:
    """Equal types and values, NaN equal to NaN, and the same nulls."""
    key = [None if v is None else ("nan" if isinstance(v, float) and math.isnan(v) else (type(v), v)) for v in a.to_pylist()]
    return a.type == b.type and a.null_count == b.null_count and key == [None if v is None else ("nan" if isinstance(v, float) and math.isnan(v) else (type(v), v)) for v in b.to_pylist()]


@pytest.mark.parametrize("kind", range(len(KINDS)))
@settings(deadline=None)
@given(data=st.data())
def test_a_column_is_what_pa_array_gives(kind, data):
    values = data.draw(st.lists(st.one_of(st.none(), KINDS[kind]), max_size=40))
    got = column(values)
    got.validate(full=True)
    assert same(got, pa.array(values)), (values, got)


@pytest.mark.parametrize(
    "values, kind",
    [([None, "a", "é"], pa.string()), ([True, None, False], pa.bool_()), ([None, None], pa.string()), ([1, 2.5, None], pa.float64()), ([], pa.int64())],
)
def test_a_column_of_a_given_type(values, kind):
    got = column(values, kind)
    got.validate(full=True)
    assert same(got, pa.array(values, type=kind))


def test_other_values_go_through_pa_array():
    assert column([[1, 2], None]).type == pa.list_(pa.int64())
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError, TypeError)):
        column([1, "a"])
    with pytest.raises((pa.ArrowInvalid, OverflowError)):
        column([2**64])


def test_a_sweep_writes_parquet_without_pandas(tmp_path):
    """pyarrow imports pandas at its first conversion of Python values and
    with its group-by; `irqsim sweep` does neither (0.25 CPU-s)."""
    spec = tmp_path / "s.toml"
    spec.write_text('scenario = "bench/rx-overload"\nseeds = 2\n[set]\n"run.duration_ms" = 1.0\n[grid]\n"workload.packet_bytes" = [500, 1500]\n')
    code = (
        "import sys\nfrom irqsim.cli import main\n"
        f"try:\n    main(['sweep', {str(spec)!r}, '-o', {str(tmp_path / 'out')!r}])\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print('LOADED', sorted(m for m in ('pandas', 'pyarrow.dataset', 'matplotlib', 'dask', 'distributed', 'duckdb') if m in sys.modules), file=sys.stderr)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "LOADED []" in p.stderr, p.stderr
    assert {f.name for f in (tmp_path / "out").iterdir()} >= {"results.parquet", "summary.parquet", "summary.csv"}
