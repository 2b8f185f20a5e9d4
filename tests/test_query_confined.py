"""`irqsim query` sees the dataset's two views and nothing else: no statement
reads, lists, writes or attaches another file, loads an extension, or turns
the confinement off again."""

from __future__ import annotations

import pandas as pd
import pytest

from irqsim.cli import main
from irqsim.sweeps import dataset


@pytest.fixture
def results(tmp_path):
    out = tmp_path / "sweep"
    out.mkdir()
    pd.DataFrame({"seed": [1, 2], "status": ["ok", "ok"], "events": [10, 12]}).to_parquet(out / dataset.RESULTS)
    pd.DataFrame({"metric": ["events"], "n": [2], "mean": [11.0]}).to_parquet(out / dataset.SUMMARY)
    secret = tmp_path / "secret.txt"
    secret.write_text("name,value\nkey,hunter2\n")
    return out, tmp_path


def run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        main(["query", *args])
        code = 0
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def test_the_views_are_queried(results, capsys):
    out, _ = results
    code, stdout, err = run(capsys, str(out), "SELECT seed, n FROM runs JOIN summary ON true ORDER BY seed", "--csv")
    assert (code, stdout) == (0, "seed,n\n1,2\n2,2\n"), err


ESCAPES = [
    ("read-csv", "SELECT * FROM read_csv('{tmp}/secret.txt')", None),
    ("read-csv-etc", "SELECT * FROM read_csv('/etc/passwd', delim=':', header=false)", None),
    ("read-text", "SELECT * FROM read_text('{tmp}/secret.txt')", None),
    ("read-text-etc", "SELECT * FROM read_text('/etc/hostname')", None),
    ("read-blob", "SELECT * FROM read_blob('{tmp}/secret.txt')", None),
    ("glob", "SELECT * FROM glob('{tmp}/*')", None),
    ("glob-root", "SELECT * FROM glob('/root/*')", None),
    ("copy-to", "COPY (SELECT 'x' AS a) TO '{tmp}/pwned.csv'", "pwned.csv"),
    ("copy-over-results", "COPY (SELECT 'x' AS a) TO '{tmp}/sweep/results.parquet' (FORMAT parquet)", None),
    ("attach", "ATTACH '{tmp}/x.db'", "x.db"),
    ("export", "EXPORT DATABASE '{tmp}/exported'", "exported"),
    ("enable-again", "SET enable_external_access = true", None),
    ("reset", "RESET enable_external_access", None),
    ("widen-paths", "SET allowed_paths = ['{tmp}/secret.txt']", None),
    ("install", "INSTALL httpfs", None),
    ("load", "LOAD httpfs", None),
]


@pytest.mark.parametrize(("sql", "leftover"), [c[1:] for c in ESCAPES], ids=[c[0] for c in ESCAPES])
def test_statements_outside_the_dataset_are_refused(results, capsys, sql, leftover):
    out, tmp = results
    before = (out / dataset.RESULTS).read_bytes()
    code, stdout, err = run(capsys, str(out), sql.format(tmp=tmp))
    assert code == 2 and err.startswith("error: query: ") and err.count("\n") == 1, (code, stdout, err)
    assert "hunter2" not in stdout + err and "secret.txt" not in stdout
    assert leftover is None or not (tmp / leftover).exists()
    assert (out / dataset.RESULTS).read_bytes() == before
    # The refusal holds for the rest of the session too.
    code, stdout, err = run(capsys, str(out), f"{sql.format(tmp=tmp)}; SELECT 1")
    assert code == 2, stdout


@pytest.mark.parametrize("sql", ["", "   ", "/* only a comment */"])
def test_an_empty_query_is_one_clean_line(results, capsys, sql):
    out, _ = results
    code, _, err = run(capsys, str(out), sql)
    assert code == 2 and err == "error: query: the SQL holds no statement\n", err
