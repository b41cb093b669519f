"""Provenance (DESIGN D14): every value of a run records what wrote it, append-only;
a field's history reads newest first."""

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.runtime import RunResult
from langtree.runtime.observe._provenance import UnknownPathError
from langtree.testing import FakeChatModel
from tests.runtime.engine.test_engine import report_digest, run_report_digest, summaries

SUMMARY = "task.summarize_report.sections[0].summary"
SECTION_SUMMARIES = "task.write_digest.section_summaries"


@pytest.fixture(scope="module")
def run() -> tuple[RunResult, FakeChatModel]:
    model = FakeChatModel(responder=summaries)
    return run_report_digest(model), model


def test_a_step_written_field_records_the_step_model_and_prompt_hash(
    run: tuple[RunResult, FakeChatModel],
) -> None:
    result, model = run
    (record,) = result.provenance(SUMMARY)
    call = next(c for c in model.calls if c.node_path == "task.summarize_report.sections[0]")

    assert (
        record.kind,
        record.value,
        record.step_id,
        record.model,
        record.attempt,
        record.sample,
        record.prompt_sha256,
        record.replayed,
        record.command,
    ) == (
        "step",
        "summary of task.summarize_report.sections[0]",
        "task.summarize_report.sections:summary",
        "default",
        1,
        1,
        hashlib.sha256(call.text.encode()).hexdigest(),
        False,
        None,
    )
    assert record.at.tzinfo is UTC
    assert record.at <= datetime.now(UTC)


def test_a_mapping_written_field_records_the_command_and_source(
    run: tuple[RunResult, FakeChatModel],
) -> None:
    result, _ = run
    record = result.provenance(SECTION_SUMMARIES)[0]

    assert (record.kind, record.source, record.location, record.step_id) == (
        "mapping",
        "sections.summary",
        "TaskSummarizeReport.sections",
        None,
    )
    assert record.command is not None
    assert record.command.startswith("! @each[sections]->task.write_digest@{{")
    assert record.value == result[report_digest.TaskWriteDigest].section_summaries


def test_an_input_field_records_the_input(run: tuple[RunResult, FakeChatModel]) -> None:
    result, _ = run

    assert [
        (r.kind, r.value) for r in result.provenance("task.summarize_report.sections[1].title")
    ] == [("input", "Plans")]
    assert [
        (r.kind, r.value)
        for r in result.provenance("task.summarize_report.sections[0].paragraphs[0].text")
    ] == [("input", "Costs rose.")]


def test_a_field_written_twice_keeps_its_history_newest_first(
    run: tuple[RunResult, FakeChatModel],
) -> None:
    result, _ = run
    history = result.provenance(SECTION_SUMMARIES)

    assert [(r.kind, r.value) for r in history] == [
        (
            "mapping",
            [
                "summary of task.summarize_report.sections[0]",
                "summary of task.summarize_report.sections[1]",
            ],
        ),
        ("default", []),
    ]
    assert history[0].at >= history[1].at
    assert history[0].value == result[report_digest.TaskWriteDigest].section_summaries


def test_every_write_is_recorded_in_write_order(run: tuple[RunResult, FakeChatModel]) -> None:
    result, _ = run
    kinds = [record.kind for record in result.provenance_records]

    assert kinds == ["input"] * 4 + ["default", "step", "step", "mapping", "step", "step"]
    assert [record.at for record in result.provenance_records] == sorted(
        record.at for record in result.provenance_records
    )


def test_the_json_includes_the_provenance(run: tuple[RunResult, FakeChatModel]) -> None:
    result, _ = run
    data = json.loads(result.to_json())
    written = [entry for entry in data["provenance"] if entry["path"] == SECTION_SUMMARIES]

    assert data["provenance"] == result.provenance_json()
    assert [(entry["kind"], entry["value"]) for entry in written] == [
        ("default", []),
        (
            "mapping",
            [
                "summary of task.summarize_report.sections[0]",
                "summary of task.summarize_report.sections[1]",
            ],
        ),
    ]
    assert set(written[1]) == {"kind", "path", "value", "at", "command", "source", "location"}
    assert datetime.fromisoformat(written[1]["at"]).tzinfo is not None


def test_an_unknown_path_is_a_key_error_naming_close_paths(
    run: tuple[RunResult, FakeChatModel],
) -> None:
    result, _ = run

    with pytest.raises(KeyError) as caught:
        result.provenance("task.write_digest.section_summary")

    assert isinstance(caught.value, UnknownPathError)
    assert str(caught.value) == (
        "No value was written at 'task.write_digest.section_summary'\n"
        "  hint: did you mean 'task.write_digest.section_summaries', "
        "'task.summarize_report.sections[1].summary', "
        "'task.summarize_report.sections[0].summary'?"
    )


def test_a_step_replayed_from_the_journal_says_so(tmp_path: Path) -> None:
    journal = tmp_path / "run.sqlite"
    structure = RunStructure(provider=LLMProvider({"default": FakeChatModel(responder=summaries)}))
    structure.add(TaskResumed)
    first = structure.run(RESUMED, journal=journal)
    again = structure.run(RESUMED, journal=journal)

    assert [r.replayed for r in first.provenance("task.resumed.summary")] == [False]
    assert [r.replayed for r in again.provenance("task.resumed.summary")] == [True]
    (written,) = [r for r in json.loads(again.to_json())["provenance"] if r["kind"] == "step"]
    assert written["replayed"] is True
    assert [r.replayed for r in again.provenance("task.resumed.text")] == [None]


class TaskResumed(TreeNode):
    """Summarise the text."""

    text: str = Field(description="The text.")
    summary: str = Field(description="One sentence.")


RESUMED = {TaskResumed: {"text": "Costs rose."}}
