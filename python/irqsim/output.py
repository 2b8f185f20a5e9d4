"""``irqsim run -o DIR``: a run's output directory, in the manner of gem5's.

DIR holds ``config.toml`` (the resolved scenario with every default, loadable
as a scenario again: ``irqsim run DIR/config.toml`` gives the same metrics),
``metrics.json`` (metrics, their units and provenance), ``bins.parquet``,
``context_bins.parquet``, ``latencies.parquet`` and, for scenarios that run
code, ``code_bins.parquet``, and ``timeline.json`` (a Chrome trace) when the
run recorded one. Each file is written to a temporary name and renamed, so a
reader never sees half a file; reusing DIR removes the files of an earlier
run that this one does not write (other files are left alone). A write that
fails (no space, no permission) removes its temporary file and raises
:class:`irqsim.OutputError` naming the path.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from irqsim import InputError, __version__, api, metrics
from irqsim import provenance as prov
from irqsim.api import OutputError

#: Every file a run may write.
OUTPUTS = ("config.toml", "metrics.json", "bins.parquet", "context_bins.parquet", "latencies.parquet", "code_bins.parquet", "timeline.json")
#: Keys holding a path relative to the scenario's file, made absolute when it is written elsewhere.
PATH_KEYS = (("code", "program"), ("nic_firmware", "program"), ("workload", "pcap"), ("workload", "strace"), ("workload", "events_file"))


@contextmanager
def _replacing(path: Path) -> Iterator[Path]:
    """Yields a temporary path to write; renamed to ``path`` once the body is
    done. A failure removes it and raises :class:`OutputError` naming ``path``."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as e:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass  # the directory itself is the problem: there is no file to remove
        raise OutputError(f"{path}: cannot write: {e.strerror or e}") from None


def atomic_write(path: Path, data: bytes | Callable[[str], object], durable: bool = True) -> None:
    """Writes ``data`` to ``path`` by way of a temporary file and a rename;
    ``data`` may instead be a function that writes the file at the path it
    is given (a large output written by a library, never held in memory).

    The rename alone keeps a killed process from leaving half a file; with
    ``durable`` the file is also flushed to disk first, so that it survives
    a power cut (an fsync: milliseconds on a busy disk, so files that every
    run writes again are written without it)."""
    with _replacing(path) as tmp:
        if callable(data):
            data(str(tmp))
        else:
            with open(tmp, "wb") as f:
                f.write(data)
        if durable:
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def output_dir(path: Path) -> Path:
    """Makes directory ``path`` (and its parents) unless it exists."""
    if path.exists() and not path.is_dir():
        raise OutputError(f"{path}: exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"{path}: cannot create the directory: {e.strerror or e}") from None
    return path


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path``; a file that cannot be read, or that is not
    a regular file (a FIFO would block), is an :class:`InputError` naming it."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise InputError(f"{path}: not a regular file; give a file")
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: byte {e.start}: not UTF-8 text") from None


def _drop_nulls(v: Any) -> Any:
    """TOML has no null: an unset optional key is left out (and reads back unset)."""
    if isinstance(v, dict):
        return {k: _drop_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_drop_nulls(x) for x in v]
    return v


def config_toml(scenario: str | os.PathLike, sets: api.Overrides = None) -> str:
    """The resolved scenario, every default filled in, as TOML text."""
    import tomli_w

    resolved = api.validate(scenario, sets)
    _, _, path = scenario_text(scenario)
    for section, key in PATH_KEYS:
        value = resolved.get(section, {}).get(key)
        # A bundled program's name is no path: only a file beside the scenario is made absolute.
        if value and path is not None and not Path(value).is_absolute() and (path.parent / value).exists():
            resolved[section][key] = str((path.parent / value).resolve())
    head = f"# irqsim {__version__}: {scenario} resolved with every default\n"
    return head + tomli_w.dumps(_drop_nulls(resolved))


def scenario_text(scenario: str | os.PathLike) -> tuple[str, str, Path | None]:
    """``(name, TOML text, file or None)`` of a scenario as :func:`irqsim.run` reads it."""
    src = api.source(scenario)
    if "text" in src:
        return "<string>", src["text"], None
    path = Path(src["path"])
    return str(scenario), read_text(path), path


def provenance(scenario: str | os.PathLike, sets: list[str], timing: dict) -> dict:
    """What produced a result (:mod:`irqsim.provenance`): build, scenario name
    and content hash, the files it read with theirs, overrides, command line,
    host, start and duration."""
    name, text, _ = scenario_text(scenario)
    return {
        **prov.build(),
        "scenario": name,
        "scenario_sha256": hashlib.sha256(text.encode()).hexdigest(),
        "inputs": api.inputs(scenario, sets),
        "overrides": list(sets),
        **prov.where(),
        **timing,
    }


def _parquet(df, path: Path) -> None:
    import io

    buf = io.BytesIO()
    df.to_parquet(buf)
    atomic_write(path, buf.getvalue())


def write_run(out: Path, r: api.Result, scenario: str | os.PathLike, sets: list[str], timeline: bool = False) -> None:
    """Writes run ``r`` of ``scenario`` with overrides ``sets`` to directory
    ``out``, with its timeline if it ``timeline`` was recorded."""
    output_dir(out)
    atomic_write(out / "config.toml", config_toml(scenario, sets).encode())
    doc = r.to_dict()
    doc.pop("bins"), doc.pop("context_bins")
    code = doc.pop("code_bins", None)
    doc["units"] = {k: metrics.unit(k) for k in doc["metrics"]}
    doc["provenance"] = provenance(scenario, sets, r.timing)
    atomic_write(out / "metrics.json", json.dumps(doc, indent=1, allow_nan=False).encode())
    _parquet(r.bins.reset_index(), out / "bins.parquet")
    _parquet(r.context_bins.reset_index(), out / "context_bins.parquet")
    _parquet(r.latencies, out / "latencies.parquet")
    if code:
        _parquet(r.code_bins.reset_index(), out / "code_bins.parquet")
    if timeline:
        write_timeline(out / "timeline.json", r)
    written = {"config.toml", "metrics.json", "bins.parquet", "context_bins.parquet", "latencies.parquet"}
    written |= {"code_bins.parquet"} if code else set()
    written |= {"timeline.json"} if timeline else set()
    for stale in set(OUTPUTS) - written:
        (out / stale).unlink(missing_ok=True)


def write_timeline(path: Path, r: api.Result) -> tuple[int, int]:
    """Writes ``r``'s timeline to ``path`` as a Chrome trace, streamed from
    the core (the trace is never whole in memory), by way of a temporary file
    and a rename; returns ``(events written, events not recorded)``."""
    with _replacing(path) as tmp:
        return tuple(r._report.write_chrome_trace(tmp))
