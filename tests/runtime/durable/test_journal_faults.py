"""A journal on a disk that fills or refuses writes: the run stops at the first answer it
cannot record, with every answer it paid for in its result, and a journal that can only
be read replays what it holds (see docs/durable.md).

The disks are real: a tmpfs of a few hundred kilobytes that a run fills, remounted
read-only where a test needs it, and a file bind-mounted read-only over itself. Mounting
needs root, which the test machines and CI have; elsewhere these tests are skipped.
"""

import gc
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from journal_worker import answer
from notes_tree import TaskNotes, notes, notes_structure
from pydantic import Field

from langtree import (
    ExecutionError,
    JournalWriteError,
    LLMProvider,
    RowResult,
    RunStructure,
    TreeNode,
)
from langtree.runtime.durable._journal import JournalReport
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest


def long_answer(request: FakeRequest) -> Mapping[str, object]:
    """An answer of 2 KB per field, so that a few dozen fill a small disk."""
    return {name: f"{name} of {request.node_path} " + "x" * 2000 for name in request.fields}


def recorded(journal: Path) -> int:
    with sqlite3.connect(f"{journal.as_uri()}?mode=ro", uri=True) as connection:
        (count,) = connection.execute("SELECT COUNT(*) FROM answers").fetchone()
    return int(count)


# -- disks ----------------------------------------------------------------------------------


def mount(*arguments: str) -> None:
    done = subprocess.run(["mount", *arguments], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"this machine cannot mount a test disk: {done.stderr.strip()}")


def unmount(path: Path) -> None:
    # What a failed test left open (a connection held by its traceback) keeps the disk
    # busy: collected first, and a disk still busy is detached lazily rather than left.
    gc.collect()
    done = subprocess.run(["umount", str(path)], capture_output=True, check=False)
    if done.returncode != 0:
        subprocess.run(["umount", "--lazy", str(path)], check=True)


class Disk:
    """A tmpfs of its own: small enough for a run to fill, remounted read-only at will."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.mounted = False

    def mount(self, size: str) -> Path:
        self.path.mkdir()
        mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(self.path))
        self.mounted = True
        return self.path

    def read_only(self) -> None:
        mount("-o", "remount,ro", str(self.path))


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    if os.geteuid() != 0:
        pytest.skip("mounting a test disk (a tmpfs, a read-only bind mount) needs root")
    made = Disk(tmp_path / "disk")
    try:
        yield made
    finally:
        if made.mounted:
            unmount(made.path)


@pytest.fixture
def read_only_file() -> Iterator[list[Path]]:
    """Files bind-mounted read-only over themselves: their folder stays writable."""
    if os.geteuid() != 0:
        pytest.skip("mounting a test disk (a tmpfs, a read-only bind mount) needs root")
    files: list[Path] = []
    try:
        yield files
    finally:
        for path in files:
            unmount(path)


def make_read_only(path: Path, files: list[Path]) -> None:
    mount("--bind", str(path), str(path))
    files.append(path)
    mount("-o", "remount,bind,ro", str(path))


# -- a disk that fills ------------------------------------------------------------------------

WRITE_FAILED = (
    "The journal '{path}' could not be written (database or disk is full): the run "
    "stopped, and error.result holds what it had finished, the answers the journal could "
    "not record included\n"
    "  hint: free space on its disk, or give the run a journal on another disk; running "
    "again replays the answers the journal holds"
)


def run_on_full_disk(journal: Path, model: FakeChatModel) -> JournalWriteError:
    """The error of a run whose journal fills its disk (its tasks gone once it returns)."""
    with pytest.raises(JournalWriteError) as caught:
        notes_structure(model).run(notes(60), journal=journal, max_concurrency=4)
    return caught.value


def test_a_full_disk_stops_the_run_with_every_answer_it_paid_for(
    disk: Disk, caplog: pytest.LogCaptureFixture
) -> None:
    journal = disk.mount("160k") / "run.sqlite"
    model = FakeChatModel(responder=long_answer)

    error = run_on_full_disk(journal, model)
    gc.collect()

    assert str(error) == WRITE_FAILED.format(path=journal)
    assert error.result is not None
    answered = [record for record in error.result.trace if record.error is None]
    assert len(answered) == len(model.calls)
    # Only the calls in flight when the first write failed went on: no call started after.
    assert 0 < len(model.calls) - recorded(journal) <= 4
    paragraphs = error.result.partials["task.notes"]["paragraphs"]
    summaries = {record.node_path for record in answered}
    assert summaries == {
        f"task.notes.paragraphs[{i}]"
        for i, paragraph in enumerate(paragraphs)
        if "summary" in paragraph
    }
    assert "never retrieved" not in caplog.text


class TaskLine(TreeNode):
    """Rewrite the line."""

    text: str = Field(description="The line.")
    rewritten: str = Field(description="The line, rewritten.")


def test_a_full_disk_stops_every_row_of_a_dataset(disk: Disk) -> None:
    journal = disk.mount("160k") / "run.sqlite"
    model = FakeChatModel(responder=long_answer)
    tree = RunStructure(provider=LLMProvider({"fake": model}))
    tree.add(TaskLine)
    rows = [{TaskLine: {"text": f"line {i}"}} for i in range(300)]
    handed_out: list[RowResult] = []

    with pytest.raises(JournalWriteError) as caught:
        handed_out.extend(tree.run_many(rows, journal=journal, max_concurrency=4))

    assert str(caught.value) == WRITE_FAILED.format(path=journal)
    assert 0 < len(model.calls) - recorded(journal) <= 4
    results = [row.result or row.error.result for row in handed_out]  # type: ignore[union-attr]
    assert sum(len(result.trace) for result in results) == len(model.calls)
    assert len(model.calls) < 100


# -- a journal that can only be read ----------------------------------------------------------

READ_ONLY = (
    "The journal '{path}' is read-only (on a read-only file system): it replays the "
    "answers it holds, and the call of step 'task.notes.paragraphs:summary' for "
    "'task.notes.paragraphs[3]' is not among them\n"
    "  hint: to make new calls, copy the journal to a folder this process may write to, "
    "and give the run the copy"
)


def test_a_journal_on_a_read_only_disk_replays_what_it_holds(disk: Disk) -> None:
    journal = disk.mount("1m") / "run.sqlite"
    first = notes_structure(FakeChatModel(responder=answer)).run(notes(3), journal=journal)
    disk.read_only()
    model = FakeChatModel(responder=answer)

    again = notes_structure(model).run(notes(3), journal=journal)

    assert model.calls == []
    assert again[TaskNotes] == first[TaskNotes]
    assert again.journal == JournalReport(path=str(journal), replayed=4, recorded=0, unmatched=0)


def test_a_read_only_journal_file_replays_what_it_holds(
    tmp_path: Path, read_only_file: list[Path]
) -> None:
    journal = tmp_path / "run.sqlite"
    first = notes_structure(FakeChatModel(responder=answer)).run(notes(3), journal=journal)
    make_read_only(journal, read_only_file)
    model = FakeChatModel(responder=answer)

    again = notes_structure(model).run(notes(3), journal=journal)

    assert model.calls == []
    assert again[TaskNotes] == first[TaskNotes]


def test_a_read_only_journal_stops_before_a_call_it_could_not_record(disk: Disk) -> None:
    journal = disk.mount("1m") / "run.sqlite"
    notes_structure(FakeChatModel(responder=answer)).run(notes(3), journal=journal)
    disk.read_only()
    model = FakeChatModel(responder=answer)

    with pytest.raises(JournalWriteError) as caught:
        notes_structure(model).run(notes(4), journal=journal)

    assert model.calls == []
    assert str(caught.value) == READ_ONLY.format(path=journal)
    assert caught.value.result is not None
    assert sorted(record.node_path for record in caught.value.result.trace) == [
        f"task.notes.paragraphs[{i}]" for i in range(3)
    ]


def test_a_read_only_journal_file_stops_before_a_call_it_could_not_record(
    tmp_path: Path, read_only_file: list[Path]
) -> None:
    journal = tmp_path / "run.sqlite"
    notes_structure(FakeChatModel(responder=answer)).run(notes(3), journal=journal)
    make_read_only(journal, read_only_file)
    model = FakeChatModel(responder=answer)

    with pytest.raises(JournalWriteError) as caught:
        notes_structure(model).run(notes(4), journal=journal)

    assert model.calls == []
    assert str(caught.value) == READ_ONLY.format(path=journal)


def test_a_journal_cannot_be_created_on_a_read_only_disk(disk: Disk) -> None:
    root = disk.mount("1m")
    disk.read_only()
    model = FakeChatModel(responder=answer)

    with pytest.raises(ExecutionError) as caught:
        notes_structure(model).run(notes(1), journal=root / "run.sqlite")

    assert model.calls == []
    assert str(caught.value) == (
        f"The journal '{root / 'run.sqlite'}' cannot be created: its folder is on a "
        "read-only file system\n"
        "  hint: give the run a journal in a folder this process may write to"
    )


def test_answers_left_in_the_wal_of_a_read_only_disk_are_not_passed_over(disk: Disk) -> None:
    root = disk.mount("1m")
    journal = root / "run.sqlite"
    notes_structure(FakeChatModel(responder=answer)).run(notes(3), journal=journal)
    # A run killed before SQLite moved its last answers into the file leaves them in the
    # -wal file beside it; the copy below is such a pair, without the -shm file.
    (root / "left").mkdir()
    left = root / "left" / "run.sqlite"
    connection = sqlite3.connect(journal)
    connection.execute("PRAGMA wal_autocheckpoint=0")
    with connection:
        connection.execute("UPDATE answers SET latency = 1.5")
    shutil.copy(journal, left)
    shutil.copy(f"{journal}-wal", f"{left}-wal")
    connection.close()
    disk.read_only()
    model = FakeChatModel(responder=answer)

    with pytest.raises(ExecutionError) as caught:
        notes_structure(model).run(notes(3), journal=left)

    assert model.calls == []
    assert str(caught.value) == (
        f"The journal '{left}' cannot be read where it is (on a read-only file system): "
        f"answers are still in its -wal file, which SQLite reads only where it may write\n"
        "  hint: copy the journal with its -wal file to a folder this process may write to, "
        "and give the run the copy"
    )
