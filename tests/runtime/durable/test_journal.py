"""The call journal: answers recorded in SQLite and replayed, so that a stopped run
resumes without paying twice (see ``langtree.runtime.durable._journal`` and docs/durable.md)."""

import io
import itertools
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path

import pytest
from journal_worker import (
    INPUTS,
    MAX_CONCURRENCY,
    RETRY,
    ReportModel,
    TaskReport,
    answer,
    structure,
)
from notes_tree import Paragraph, TaskNotes, notes, notes_structure
from pydantic import Field

from langtree import ExecutionError, LLMProvider, RunStructure, StepFailedError, TreeNode
from langtree.runtime.durable._journal import JournalReport
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest

NOTES = notes(3)


def run(task: type[TreeNode], inputs: Mapping[object, object], journal: Path, model: FakeChatModel):
    structure = RunStructure(provider=LLMProvider({"fake": model}))
    structure.add(task)
    return structure.run(inputs, journal=journal)


def test_a_second_run_replays_every_answer_and_calls_no_model(tmp_path: Path) -> None:
    journal = tmp_path / "run.sqlite"
    first = run(TaskNotes, NOTES, journal, FakeChatModel(responder=answer))
    model = FakeChatModel(responder=answer)

    second = run(TaskNotes, NOTES, journal, model)

    assert model.calls == []
    assert second[TaskNotes] == first[TaskNotes]
    assert [r.replayed for r in first.trace] == [False] * 4
    assert [r.replayed for r in second.trace] == [True] * 4
    assert [r.raw_output for r in second.trace] == [r.raw_output for r in first.trace]
    assert (first.usage.calls, second.usage.calls) == (4, 0)
    assert first.journal == JournalReport(path=str(journal), replayed=0, recorded=4, unmatched=0)
    assert second.journal == JournalReport(path=str(journal), replayed=4, recorded=0, unmatched=0)


def test_a_failed_run_resumes_with_the_calls_that_had_not_finished(tmp_path: Path) -> None:
    journal = tmp_path / "run.sqlite"

    def broken(request: FakeRequest) -> Mapping[str, object]:
        if request.node_path == "task.notes.paragraphs[1]":
            raise ValueError("the provider is down")
        return answer(request)

    with pytest.raises(StepFailedError) as failed:
        run(TaskNotes, NOTES, journal, FakeChatModel(responder=broken))
    finished_before = {r.node_path for r in failed.value.result.trace if r.error is None}
    model = FakeChatModel(responder=answer)

    resumed = run(TaskNotes, NOTES, journal, model)

    every = {"task.notes", *(f"task.notes.paragraphs[{i}]" for i in range(3))}
    assert "task.notes.paragraphs[1]" not in finished_before
    assert sorted(call.node_path for call in model.calls) == sorted(every - finished_before)
    assert resumed[TaskNotes].paragraphs[1].summary == "summary of task.notes.paragraphs[1]"


class TaskNotesReworded(TreeNode):
    """Summarise the notes."""

    paragraphs: list[Paragraph] = Field(default=[], description="The paragraphs.")
    digest: str = Field(description="One paragraph, for a busy reader.")


def test_a_changed_prompt_invalidates_its_own_calls_and_nothing_else(tmp_path: Path) -> None:
    journal = tmp_path / "run.sqlite"
    run(TaskNotes, NOTES, journal, FakeChatModel(responder=answer))
    model = FakeChatModel(responder=answer)
    inputs = {TaskNotesReworded: NOTES[TaskNotes]}

    # The same tag (task.notes_reworded differs): only the digest's prompt differs.
    reworded = RunStructure(provider=LLMProvider({"fake": model}))
    reworded.add(TaskNotesReworded)
    result = reworded.run(inputs, journal=journal)

    assert all(call.node_path.startswith("task.notes_reworded") for call in model.calls)
    assert result.journal is not None
    assert (result.journal.replayed, result.journal.unmatched) == (0, 4)


class Rated(TreeNode):
    """Rate the paragraph.

    ! resample(3)
    """

    text: str = Field(description="The paragraph.")
    rating: str = Field(description="A word.")


class TaskRatings(TreeNode):
    """Rate the paragraphs."""

    items: list[Rated] = Field(default=[], description="The paragraphs.")


def test_resampled_calls_are_distinct_in_the_journal(tmp_path: Path) -> None:
    journal = tmp_path / "run.sqlite"
    inputs = {TaskRatings: {"items": [{"text": "one"}]}}
    numbers = itertools.count(1)
    first = run(
        TaskRatings,
        inputs,
        journal,
        FakeChatModel(responder=lambda _: {"rating": f"word {next(numbers)}"}),
    )
    model = FakeChatModel()

    second = run(TaskRatings, inputs, journal, model)

    assert model.calls == []
    samples = [(r.sample, r.raw_output) for r in second.trace]
    assert samples == [(r.sample, r.raw_output) for r in first.trace]
    assert [sample for sample, _ in samples] == [1, 2, 3]
    assert len({raw for _, raw in samples}) == 3
    with sqlite3.connect(journal) as connection:
        (keys,) = connection.execute("SELECT COUNT(DISTINCT key) FROM answers").fetchone()
    assert keys == 3


def test_a_retry_chain_is_replayed_answer_by_answer(tmp_path: Path) -> None:
    journal = tmp_path / "run.sqlite"
    answers = iter([{"summary": 5}, {"summary": "fixed"}])

    def once_wrong(request: FakeRequest) -> Mapping[str, object]:
        return next(answers) if request.node_path == "task.notes.paragraphs[0]" else answer(request)

    first = run(TaskNotes, NOTES, journal, FakeChatModel(responder=once_wrong))
    model = FakeChatModel(responder=answer)
    second = run(TaskNotes, NOTES, journal, model)

    assert model.calls == []
    chain = [
        (r.attempt, r.failure, r.replayed) for r in second.trace if r.node_path.endswith("[0]")
    ]
    assert chain == [(1, "invalid_output", True), (2, None, True)]
    assert second[TaskNotes] == first[TaskNotes]
    assert second[TaskNotes].paragraphs[0].summary == "fixed"


def test_a_call_is_sent_once_every_answer_before_it_is_in_the_journal(tmp_path: Path) -> None:
    # One call at a time: a call gives back its place only once its answer, valid or
    # invalid, is committed, so each call finds every answer before it in the file. Many
    # invalid answers, so that one still queued as the next call starts is not missed.
    journal = tmp_path / "run.sqlite"
    given: list[str] = []
    seen: list[tuple[int, int]] = []

    def latency(request: FakeRequest) -> float:
        with closing(sqlite3.connect(journal)) as connection:
            (rows,) = connection.execute("SELECT COUNT(*) FROM answers").fetchone()
        seen.append((len(given), rows))
        return 0.0

    def invalid_first(request: FakeRequest) -> Mapping[str, object]:
        retry = "could not be used" in request.messages[-1].text
        given.append("valid" if retry or request.node_path == "task.notes" else "invalid")
        return answer(request) if given[-1] == "valid" else {"summary": 5}

    structure = RunStructure(provider=LLMProvider({"fake": FakeChatModel(invalid_first, latency)}))
    structure.add(TaskNotes)
    structure.run(notes(160), journal=journal, max_concurrency=1)

    assert given.count("invalid") == 160
    assert seen == [(answered, answered) for answered in range(321)]


def test_answers_older_than_journal_max_age_are_asked_for_again(tmp_path: Path) -> None:
    journal = tmp_path / "run.sqlite"
    run(TaskNotes, NOTES, journal, FakeChatModel(responder=answer))
    # The answers were recorded on 1 January 2000: a run reads the machine's clock, and
    # any clock of this century finds them more than a day and less than 300 years old.
    with closing(sqlite3.connect(journal)) as connection, connection:
        connection.execute("UPDATE answers SET recorded_at = '2000-01-01T00:00:00+00:00'")
    model = FakeChatModel(responder=answer)
    structure = notes_structure(model)
    years_300, one_day = 300 * 365 * 86_400, 86_400

    fresh = structure.run(NOTES, journal=journal, journal_max_age=years_300)
    expired = structure.run(NOTES, journal=journal, journal_max_age=one_day)
    renewed = structure.run(NOTES, journal=journal, journal_max_age=one_day)

    assert [fresh.journal, expired.journal, renewed.journal] == [
        JournalReport(path=str(journal), replayed=4, recorded=0, unmatched=0),
        JournalReport(path=str(journal), replayed=0, recorded=4, unmatched=0),
        JournalReport(path=str(journal), replayed=4, recorded=0, unmatched=0),
    ]
    assert len(model.calls) == 4
    with sqlite3.connect(journal) as connection:
        (rows,) = connection.execute("SELECT COUNT(*) FROM answers").fetchone()
    assert rows == 4


@pytest.mark.parametrize(
    ("journal", "message"),
    [
        pytest.param(
            "missing-folder/run.sqlite",
            "The journal '{path}' cannot be created: its folder '{folder}' does not exist\n"
            "  hint: create the folder, or give the run a journal in a folder that exists",
            id="missing-folder",
        ),
        pytest.param(
            "not-a-journal.txt",
            "The journal '{path}' is not a LangTree journal: it is not a SQLite database\n"
            "  hint: give the run a file of its own for its journal: a new path (LangTree "
            "creates it) or an empty file",
            id="not-sqlite",
        ),
    ],
)
def test_a_journal_that_cannot_be_used_is_an_error_before_any_call(
    tmp_path: Path, journal: str, message: str
) -> None:
    (tmp_path / "not-a-journal.txt").write_text("These are notes, not a journal.\n" * 100)
    path = tmp_path / journal
    model = FakeChatModel()

    with pytest.raises(ExecutionError) as caught:
        run(TaskNotes, NOTES, path, model)

    assert str(caught.value) == message.format(path=path, folder=path.parent)
    assert model.calls == []


def test_a_journal_setting_that_is_not_a_path_is_an_error() -> None:
    structure = RunStructure(provider=LLMProvider({"fake": FakeChatModel()}))
    structure.add(TaskNotes)

    with pytest.raises(ExecutionError, match="journal must be a file path"):
        structure.run(NOTES, journal=3)  # type: ignore[typeddict-item]


# -- killed with SIGKILL, resumed --------------------------------------------------------

WORKER = Path(__file__).parents[1] / "journal_worker.py"
KILL_AFTER = (9, 30, 1, 55, 17, 42, 8, 64, 23, 3, 36, 12, 50, 27, 6, 45, 19, 33, 14, 60)
"""The answers after which each run kills itself: 20 kills early and late in their runs."""


def test_a_run_killed_again_and_again_resumes_to_the_same_result(tmp_path: Path) -> None:
    root = Path(__file__).parent.parent.parent.parent
    worker = subprocess.run(
        [sys.executable, str(WORKER), str(tmp_path), *map(str, KILL_AFTER)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        timeout=300,
    )
    assert worker.returncode == 0, worker.stderr.decode()
    assert worker.stdout.decode().split() == ["killed"] * len(KILL_AFTER) + ["finished"]

    uninterrupted = io.StringIO()
    reference = structure(ReportModel(uninterrupted).model()).run(
        INPUTS, max_concurrency=MAX_CONCURRENCY, retry=RETRY
    )
    assert json.loads((tmp_path / "result.json").read_text()) == reference.dump(TaskReport)
    logged = read_log((tmp_path / "calls.log").read_text())
    assert {call for _, _, call in logged} == {call for _, _, call in read_log(uninterrupted)}
    runs = [
        [(event, call) for number, event, call in logged if number == run_number]
        for run_number in range(len(KILL_AFTER) + 1)
    ]
    for killed, events in enumerate(runs[:-1]):
        # A killed run's calls that a later run sends again, though they had not failed:
        # answers that were lost, and calls in flight at the kill.
        later = {call for event, call in itertools.chain(*runs[killed + 1 :]) if event == "sent"}
        outcome = {call: event for event, call in events}
        lost = sorted(call for call, event in outcome.items() if event == "sent" and call in later)
        assert len(lost) <= MAX_CONCURRENCY, (killed, lost)


def read_log(log: str | io.StringIO) -> list[tuple[int, str, str]]:
    """The lines of a log of `ReportModel`: the run, the event and the call."""
    text = log if isinstance(log, str) else log.getvalue()
    lines = [line.split("\t") for line in text.splitlines()]
    return [(int(number), event, call) for number, event, call in lines]
