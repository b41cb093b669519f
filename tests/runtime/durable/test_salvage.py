"""Salvage: the answers of a damaged journal that can still be read, copied into a new
journal, with those lost counted (see ``langtree.runtime.durable._salvage``)."""

from pathlib import Path

import pytest
from journal_notes import answer, damaged_journal, query, run
from notes_tree import TaskNotes

from langtree import ExecutionError
from langtree.runtime.durable._journal import JournalReport
from langtree.runtime.durable._salvage import SalvageReport, salvage_journal
from langtree.testing import FakeChatModel


def test_salvage_copies_what_can_be_read_and_counts_what_is_lost(tmp_path: Path) -> None:
    journal, first = damaged_journal(tmp_path)
    salvaged = tmp_path / "salvaged.sqlite"

    report = salvage_journal(journal, salvaged)
    model = FakeChatModel(responder=answer)
    resumed = run(salvaged, model, 40)

    assert report == SalvageReport(
        source=str(journal), target=str(salvaged), copied=36, lost=5, damaged_rows=()
    )
    # The page held the answers of paragraphs 20 to 24: the digest's prompt shows the
    # same answers again, and the digest is replayed.
    assert sorted(call.node_path for call in model.calls) == [
        f"task.notes.paragraphs[{i}]" for i in range(20, 25)
    ]
    assert resumed[TaskNotes] == first[TaskNotes]
    assert resumed.journal == JournalReport(
        path=str(salvaged), replayed=36, recorded=5, unmatched=0
    )


def test_salvage_leaves_out_a_hand_edited_row_and_names_it(tmp_path: Path) -> None:
    journal = tmp_path / "run.sqlite"
    run(journal, FakeChatModel(responder=answer))
    query(journal, "UPDATE answers SET usage = 'oops' WHERE node_path LIKE '%[2]'")
    ((row,),) = query(journal, "SELECT rowid FROM answers WHERE node_path LIKE '%[2]'")
    salvaged = tmp_path / "salvaged.sqlite"

    report = salvage_journal(journal, salvaged)
    model = FakeChatModel(responder=answer)
    run(salvaged, model)

    assert report == SalvageReport(
        source=str(journal), target=str(salvaged), copied=3, lost=1, damaged_rows=(row,)
    )
    assert [call.node_path for call in model.calls] == ["task.notes.paragraphs[2]"]


def test_salvage_never_writes_over_a_file(tmp_path: Path) -> None:
    journal = tmp_path / "run.sqlite"
    run(journal, FakeChatModel(responder=answer))
    target = tmp_path / "kept.sqlite"
    target.write_text("kept")

    with pytest.raises(ExecutionError) as caught:
        salvage_journal(journal, target)

    assert target.read_text() == "kept"
    assert str(caught.value) == (
        f"Salvage writes a new journal, and '{target}' exists\n"
        "  hint: give salvage the path of a file that does not exist yet"
    )
