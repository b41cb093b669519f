"""What a journal file may be: a new or empty file, or a LangTree journal. Another
application's database is refused untouched, and damage is named (see docs/durable.md)."""

from pathlib import Path

import pytest
from journal_notes import answer, damaged_journal, query, run
from notes_tree import TaskNotes

from langtree import ExecutionError
from langtree.testing import FakeChatModel

SALVAGE_HINT = (
    "  hint: `langtree journal salvage {path} NEW.sqlite` copies the answers that can still "
    "be read into a new file, NEW.sqlite, to use instead"
)


# -- damage ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [
        pytest.param(
            "usage", "{not json", "its usage is not a JSON object: '{not json'", id="usage"
        ),
        pytest.param(
            "usage", "[1, 2]", "its usage is not a JSON object: '[1, 2]'", id="usage-list"
        ),
        pytest.param(
            "answer",
            "first",
            "its answer number is not a whole number from 1: 'first'",
            id="answer",
        ),
        pytest.param("sample", 0, "its sample is not a whole number from 1: 0", id="sample"),
        pytest.param(
            "latency", "slow", "its latency is not a number of seconds: 'slow'", id="latency"
        ),
        pytest.param(
            "raw_output", b"\x00\x01", "its raw output is not text: b'\\x00\\x01'", id="blob"
        ),
    ],
)
def test_a_hand_edited_row_is_damage_named_by_its_row(
    tmp_path: Path, column: str, value: object, problem: str
) -> None:
    journal = tmp_path / "run.sqlite"
    run(journal, FakeChatModel(responder=answer))
    node = "task.notes.paragraphs[1]"
    query(journal, f"UPDATE answers SET {column} = ? WHERE node_path = ?", value, node)
    ((row,),) = query(journal, "SELECT rowid FROM answers WHERE node_path = ?", node)
    model = FakeChatModel(responder=answer)

    with pytest.raises(ExecutionError) as caught:
        run(journal, model)

    assert model.calls == []
    assert str(caught.value) == (
        f"The journal '{journal}' is damaged: row {row} (step "
        f"'task.notes.paragraphs:summary' for '{node}') {problem}\n"
        + SALVAGE_HINT.format(path=journal)
    )


def test_a_damaged_page_is_damage_not_a_folder_problem(tmp_path: Path) -> None:
    journal, _ = damaged_journal(tmp_path)
    model = FakeChatModel(responder=answer)

    with pytest.raises(ExecutionError) as caught:
        run(journal, model, 40)

    assert model.calls == []
    assert str(caught.value) == (
        f"The journal '{journal}' is damaged: database disk image is malformed\n"
        + SALVAGE_HINT.format(path=journal)
    )


# -- files that are not journals ------------------------------------------------------------

NOT_A_JOURNAL = (
    "The journal '{path}' is not a LangTree journal: {what}\n"
    "  hint: give the run a file of its own for its journal: a new path (LangTree creates "
    "it) or an empty file"
)


def test_another_applications_database_is_refused_untouched(tmp_path: Path) -> None:
    database = tmp_path / "app.db"
    query(database, "CREATE TABLE users (name TEXT)")
    query(database, "CREATE TABLE orders (item TEXT)")
    before = database.read_bytes()
    model = FakeChatModel(responder=answer)

    with pytest.raises(ExecutionError) as caught:
        run(database, model)

    assert model.calls == []
    assert database.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["app.db"]
    assert str(caught.value) == NOT_A_JOURNAL.format(
        path=database,
        what="it is another application's SQLite database (tables 'orders', 'users')",
    )


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("These are notes, not a journal.\n" * 100)

    with pytest.raises(ExecutionError) as caught:
        run(text, FakeChatModel(responder=answer))

    assert str(caught.value) == NOT_A_JOURNAL.format(path=text, what="it is not a SQLite database")


def empty_database(path: Path) -> None:
    query(path, "PRAGMA user_version = 0")
    query(path, "VACUUM")


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(Path.touch, id="empty-file"),
        pytest.param(empty_database, id="database-without-tables"),
    ],
)
def test_an_empty_file_becomes_a_journal(tmp_path: Path, make: object) -> None:
    journal = tmp_path / "run.sqlite"
    make(journal)  # type: ignore[operator]

    first = run(journal, FakeChatModel(responder=answer))
    model = FakeChatModel(responder=answer)
    again = run(journal, model)

    assert first.journal is not None
    assert first.journal.recorded == 4
    assert model.calls == []
    assert again[TaskNotes] == first[TaskNotes]


def test_a_folder_that_does_not_exist_is_named(tmp_path: Path) -> None:
    journal = tmp_path / "runs" / "run.sqlite"

    with pytest.raises(ExecutionError) as caught:
        run(journal, FakeChatModel(responder=answer))

    assert str(caught.value) == (
        f"The journal '{journal}' cannot be created: its folder '{tmp_path / 'runs'}' does "
        "not exist\n"
        "  hint: create the folder, or give the run a journal in a folder that exists"
    )
