"""Python values to Arrow arrays and back, without pandas.

pyarrow imports pandas the first time it converts Python or numpy values
(``pa.array``, ``pa.scalar``, ``Array.to_numpy``: it asks whether they are
pandas objects), and so does its group-by (``pyarrow.acero`` imports
``pyarrow.dataset``, which makes a scalar): 0.25 CPU-s, more than all the
runs of a small sweep (docs/performance.md, "Sweeps against a plain loop").
A sweep's columns hold None, bool, int, float and str, so :func:`column`
lays them out as Arrow does (a validity bitmap, then the values, or offsets
and UTF-8 bytes) and hands pyarrow the buffers; any other value goes
through ``pa.array``, as before. :func:`floats` reads a column back as
numpy floats through Python values, for the same reason.
"""

from __future__ import annotations

import array
import itertools
from collections.abc import Sequence
from typing import Any

import pyarrow as pa


def column(values: Sequence[Any], type: pa.DataType | None = None) -> pa.Array:  # noqa: A002 (pa.array's name)
    """``pa.array(values, type)`` for values of one kind, None allowed:
    bool, int (int64), float (float64; ints among floats become floats) or
    str; the type inferred as ``pa.array`` infers it when not given."""
    kind = type or _infer(values)
    n = len(values)
    nulls = sum(v is None for v in values)
    valid = _bits(v is not None for v in values) if nulls else None
    try:
        if kind is None:
            pass
        elif kind == pa.null():
            return pa.nulls(n)
        elif kind == pa.string() and all(isinstance(v, str) for v in values if v is not None):
            data = [b"" if v is None else v.encode() for v in values]
            offsets = array.array("i", itertools.accumulate(map(len, data), initial=0))
            return pa.Array.from_buffers(kind, n, [valid, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))], null_count=nulls)
        elif kind == pa.bool_() and all(isinstance(v, bool) for v in values if v is not None):
            return pa.Array.from_buffers(kind, n, [valid, _bits(v is True for v in values)], null_count=nulls)
        elif kind in (pa.int64(), pa.float64()) and not any(isinstance(v, bool) for v in values):
            code, zero = ("q", 0) if kind == pa.int64() else ("d", 0.0)
            return pa.Array.from_buffers(kind, n, [valid, pa.py_buffer(array.array(code, [zero if v is None else v for v in values]))], null_count=nulls)
    except (TypeError, OverflowError):
        pass  # pyarrow says what is wrong, or converts what ``array`` cannot
    return pa.array(values, type=type)


def from_numpy(a) -> pa.Array:
    """A one-dimensional numpy array of float64 or int64 as an Arrow array (NaN stays NaN)."""
    import numpy as np

    kind = {np.dtype(np.float64): pa.float64(), np.dtype(np.int64): pa.int64()}[a.dtype]
    return pa.Array.from_buffers(kind, len(a), [None, pa.py_buffer(np.ascontiguousarray(a))])


def floats(values) -> Any:
    """An Arrow column of numbers as numpy float64, null as NaN."""
    import numpy as np

    return np.array([np.nan if v is None else v for v in values.to_pylist()], dtype=np.float64)


def _infer(values: Sequence[Any]) -> pa.DataType | None:
    """The type ``pa.array`` gives these values, for the kinds :func:`column` builds; None otherwise."""
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return pa.null()
    if kinds == {bool}:
        return pa.bool_()
    if kinds == {int}:
        return pa.int64()
    if kinds <= {int, float}:
        return pa.float64()
    if kinds == {str}:
        return pa.string()
    return None


def _bits(flags) -> pa.Buffer:
    """Arrow's bitmap of ``flags``: bit i of byte i // 8, least significant first."""
    digits = "".join("1" if f else "0" for f in flags)[::-1]
    return pa.py_buffer(int(digits or "0", 2).to_bytes((len(digits) + 7) // 8, "little"))
