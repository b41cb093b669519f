"""``langtree run --journal`` on files that are not journals."""

import contextlib
import sqlite3
from pathlib import Path

import pytest

from langtree.cli import main

EXAMPLES = Path(__file__).parent.parent / "examples"
REVIEW = EXAMPLES / "review_rating.py"
REVIEW_INPUTS = EXAMPLES / "inputs" / "review_rating.json"


def shown(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    status = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def run_review(capsys: pytest.CaptureFixture[str], journal: Path) -> tuple[int, str, str]:
    return shown(
        capsys, "run", REVIEW, "--input", REVIEW_INPUTS, "--model", "fake", "--journal", journal
    )


def test_run_refuses_another_applications_database(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    database = tmp_path / "app.db"
    with contextlib.closing(sqlite3.connect(database)) as connection, connection:
        connection.execute("CREATE TABLE users (name TEXT)")

    status, out, err = run_review(capsys, database)

    assert (status, out) == (2, "")
    assert err == (
        f"langtree: error: The journal '{database}' is not a LangTree journal: it is another "
        "application's SQLite database (tables 'users')\n"
        "  hint: give the run a file of its own for its journal: a new path (LangTree "
        "creates it) or an empty file\n"
    )
    with contextlib.closing(sqlite3.connect(database)) as connection:
        tables = connection.execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == [("users",)]
