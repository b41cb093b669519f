"""The call journal: answers recorded in SQLite and replayed, so that a stopped run
resumes without paying twice (see ``langtree.runtime.journal`` and docs/durable.md)."""

import itertools
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import pytest
from journal_worker import INPUTS, MAX_CONCURRENCY, TaskReport, answer, structure
from pydantic import Field

from langtree import ExecutionError, LLMProvider, RunStructure, StepFailedError, TreeNode
from langtree.runtime.journal import JournalReport
from langtree.testing import FakeChatModel
from langtree.testing.fake_model import FakeRequest


class Paragraph(TreeNode):
    """Summarise the paragraph."""

    text: str = Field(description="The paragraph.")
    summary: str = Field(description="One sentence.")


class TaskNotes(TreeNode):
    """Summarise the notes."""

    paragraphs: list[Paragraph] = Field(default=[], description="The paragraphs.")
    digest: str = Field(description="One paragraph.")


NOTES = {TaskNotes: {"paragraphs": [{"text": f"p{i}"} for i in range(3)]}}


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


def test_answers_older_than_journal_max_age_are_asked_for_again(tmp_path: Path) -> None:
    journal = tmp_path / "run.sqlite"
    run(TaskNotes, NOTES, journal, FakeChatModel(responder=answer))
    time.sleep(0.05)
    model = FakeChatModel(responder=answer)
    structure = RunStructure(provider=LLMProvider({"fake": model}))
    structure.add(TaskNotes)

    fresh = structure.run(NOTES, journal=journal, journal_max_age=3600)
    expired = structure.run(NOTES, journal=journal, journal_max_age=0.01)
    renewed = structure.run(NOTES, journal=journal, journal_max_age=3600)

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

WORKER = Path(__file__).with_name("journal_worker.py")
KILLS = 10


def start_worker(
    tmp_path: Path, run_number: int, stall_after: int | None = None
) -> subprocess.Popen[bytes]:
    root = Path(__file__).parent.parent.parent
    stall = [] if stall_after is None else [str(stall_after)]
    return subprocess.Popen(
        [
            sys.executable,
            str(WORKER),
            str(tmp_path / "run.sqlite"),
            str(tmp_path / "calls.log"),
            str(tmp_path / "result.json"),
            str(run_number),
            *stall,
        ],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def logged_calls(tmp_path: Path) -> list[tuple[int, str]]:
    path = tmp_path / "calls.log"
    if not path.exists():
        return []
    lines = [line.split("\t") for line in path.read_text().splitlines()]
    return [(int(run), f"{node}:{fields}") for run, node, fields in lines if fields]


def test_a_run_killed_again_and_again_resumes_to_the_same_result(tmp_path: Path) -> None:
    rng = random.Random(20261124)
    for run_number in range(KILLS):
        calls = rng.randint(15, 45)
        target = len(logged_calls(tmp_path)) + calls
        # The worker stalls 20 calls past the kill's target, so it is killed mid-run even
        # when the test looks late: the seed draws 305 calls in all, so at most
        # 305 + 10 x 20 of the 551 go before the last run.
        worker = start_worker(tmp_path, run_number, stall_after=calls + 20)
        deadline = time.monotonic() + 60
        while len(logged_calls(tmp_path)) < target and worker.poll() is None:
            assert time.monotonic() < deadline, "the worker made no progress"
            time.sleep(0.005)
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        assert not (tmp_path / "result.json").exists(), "a kill came after the run's end"
    final = start_worker(tmp_path, KILLS)
    _, errors = final.communicate(timeout=120)
    assert final.returncode == 0, errors.decode()

    reference = structure(FakeChatModel(responder=answer)).run(INPUTS, max_concurrency=8)
    assert json.loads((tmp_path / "result.json").read_text()) == reference.dump(TaskReport)
    calls = logged_calls(tmp_path)
    assert len({call for _, call in calls}) == 551
    seen: set[str] = set()
    for run_number in range(KILLS + 1):
        made = [call for number, call in calls if number == run_number]
        resent = [call for call in made if call in seen]
        assert len(resent) <= MAX_CONCURRENCY, (run_number, resent)
        seen.update(made)
    assert Counter(call for _, call in calls).most_common(1)[0][1] <= 2
