"""The tree and helpers of the tests of journal files: a journal of notes, written one
call at a time so that its answers lie in the file in the same order in every run, and
damaged as a bad sector would damage it."""

import contextlib
import sqlite3
from collections.abc import Mapping
from pathlib import Path

from notes_tree import notes, notes_structure

from langtree import RunResult
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest


def answer(request: FakeRequest) -> Mapping[str, object]:
    """The same answer for the same call, in any run; 300 characters, so that a page of
    the file holds a few."""
    return {name: f"{name} of {request.node_path} ".ljust(300, ".") for name in request.fields}


def run(journal: Path, model: FakeChatModel, count: int = 3) -> RunResult:
    # One call at a time: the answers lie in the file in the same order in every run.
    return notes_structure(model).run(notes(count), journal=journal, max_concurrency=1)


def query(path: Path, sql: str, *parameters: object) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(path)) as connection, connection:
        return connection.execute(sql, parameters).fetchall()


def damage_page(journal: Path, marker: str) -> None:
    """Overwrite the header of the page of the file that holds ``marker``, as a bad sector
    or a torn copy would."""
    data = bytearray(journal.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    start = data.index(marker.encode()) // page_size * page_size
    data[start : start + 8] = b"\xff" * 8
    journal.write_bytes(bytes(data))


def damaged_journal(tmp_path: Path, count: int = 40) -> tuple[Path, RunResult]:
    journal = tmp_path / "run.sqlite"
    first = run(journal, FakeChatModel(responder=answer), count)
    damage_page(journal, "summary of task.notes.paragraphs[20] ")
    return journal, first
