"""``langtree journal salvage OLD NEW``, and ``langtree run --journal`` on files that are not
journals."""

import contextlib
import sqlite3
from pathlib import Path

import pytest
from command_line import RUN_REVIEW, refused, shown


def run_review(capsys: pytest.CaptureFixture[str], journal: Path) -> tuple[int, str, str]:
    return shown(capsys, *RUN_REVIEW, "--journal", journal)


def test_salvage_copies_the_answers_it_can_read_into_a_new_journal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    journal, salvaged = tmp_path / "review.sqlite", tmp_path / "salvaged.sqlite"
    first = run_review(capsys, journal)
    with contextlib.closing(sqlite3.connect(journal)) as connection, connection:
        connection.execute("UPDATE answers SET latency = 'slow' WHERE rowid = 1")

    status, out, err = shown(capsys, "journal", "salvage", journal, salvaged)
    resumed = run_review(capsys, salvaged)

    assert (status, err) == (0, "")
    assert out == (
        f"langtree: copied 9 of the 10 answers of '{journal}' into '{salvaged}'; 1 could not "
        "be read (row 1)\n"
    )
    assert resumed[:2] == first[:2]
    assert resumed[2].splitlines()[-2] == (
        "langtree: 10/10 calls done (9 replayed without a model call), 0 failed"
    )


def test_salvage_of_a_missing_journal_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "missing.sqlite"

    err = refused(capsys, "journal", "salvage", missing, tmp_path / "new.sqlite")

    assert err == (
        f"langtree: error: The journal '{missing}' does not exist\n"
        "  hint: give salvage the path of the damaged journal\n"
    )


def test_run_refuses_another_applications_database(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    database = tmp_path / "app.db"
    with contextlib.closing(sqlite3.connect(database)) as connection, connection:
        connection.execute("CREATE TABLE users (name TEXT)")

    err = refused(capsys, *RUN_REVIEW, "--journal", database)

    assert err == (
        f"langtree: error: The journal '{database}' is not a LangTree journal: it is another "
        "application's SQLite database (tables 'users')\n"
        "  hint: give the run a file of its own for its journal: a new path (LangTree "
        "creates it) or an empty file\n"
    )
    with contextlib.closing(sqlite3.connect(database)) as connection:
        tables = connection.execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == [("users",)]
