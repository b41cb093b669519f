"""``RunStructure({"on_error": "continue"})``: a failed step instance does not stop the run."""

import json

import pytest

from langtree import ExecutionError, RunStructure, StructureError
from langtree.runtime import LLMProvider, StepFailedError
from langtree.runtime.result import SkippedInstance
from langtree.testing import FakeChatModel
from langtree.testing.fake_model import FakeRequest, ResponderResult
from tests.runtime.test_engine import report_digest

BROKEN = "task.summarize_report.sections[1]"
SECTIONS = [
    {"title": "Costs", "paragraphs": [{"text": "Costs rose."}]},
    {"title": "Plans", "paragraphs": [{"text": "We grow."}]},
    {"title": "Risks", "paragraphs": [{"text": "Few."}]},
]


def broken_section(request: FakeRequest) -> ResponderResult:
    if request.node_path == BROKEN:
        return {"summary": None}
    if request.fields == ("summary",):
        return {"summary": f"summary of {request.node_path}"}
    return {"headline": "Short", "digest": "Read it."}


def run(config: dict[str, object], model: FakeChatModel):  # type: ignore[no-untyped-def]
    structure = RunStructure(config, provider=LLMProvider({"default": model}))
    structure.add(report_digest.TaskSummarizeReport)
    structure.add(report_digest.TaskWriteDigest)
    return structure.run({report_digest.TaskSummarizeReport: {"sections": SECTIONS}})


def test_a_failing_branch_does_not_stop_the_others() -> None:
    model = FakeChatModel(responder=broken_section)

    result = run({"on_error": "continue"}, model)

    (error,) = result.errors
    assert isinstance(error, StepFailedError)
    assert (error.step_id, error.node_path, len(error.attempts)) == (
        "task.summarize_report.sections:summary",
        BROKEN,
        3,
    )
    assert sorted(call.node_path for call in model.calls) == [
        "task.summarize_report.sections[0]",
        *[BROKEN] * 3,
        "task.summarize_report.sections[2]",
    ]
    assert result.partial(report_digest.TaskSummarizeReport)["sections"] == [
        {**SECTIONS[0], "summary": "summary of task.summarize_report.sections[0]"},
        SECTIONS[1],
        {**SECTIONS[2], "summary": "summary of task.summarize_report.sections[2]"},
    ]


def test_the_dependents_of_a_failed_instance_are_skipped() -> None:
    result = run({"on_error": "continue"}, FakeChatModel(responder=broken_section))

    assert result.skipped == (
        SkippedInstance(
            step_id="task.write_digest:headline+digest",
            node_path="task.write_digest",
            because=f"task.summarize_report.sections:summary at {BROKEN}",
        ),
    )


def test_a_task_that_does_not_validate_raises_when_read() -> None:
    result = run({"on_error": "continue"}, FakeChatModel(responder=broken_section))

    with pytest.raises(ExecutionError) as caught:
        result[report_digest.TaskWriteDigest]

    assert str(caught.value) == (
        "The values of 'TaskWriteDigest' do not validate: 1 step instance(s) failed and "
        "1 were skipped:\n"
        "  - section_summaries.1: Input should be a valid string\n"
        "  - headline: Field required\n"
        "  - digest: Field required\n"
        "  - Missing value for 'TaskWriteDigest.section_summaries[1]': its source "
        "'task.summarize_report.sections[1].summary' was never produced, and a list element "
        "has no default\n"
        "    hint: map into a field of the list's nodes, which can have a default, or send the "
        "list with '@all' and a '.**.' pluck path, which leaves absent values out\n"
        "  hint: see result.errors and result.skipped; "
        "result.partial('TaskWriteDigest') gives the values as plain data"
    )


def test_failure_names_every_task_that_does_not_validate() -> None:
    result = run({"on_error": "continue"}, FakeChatModel(responder=broken_section))

    failure = result.failure()

    assert isinstance(failure, ExecutionError)
    with pytest.raises(ExecutionError) as summarize:
        result[report_digest.TaskSummarizeReport]
    with pytest.raises(ExecutionError) as digest:
        result[report_digest.TaskWriteDigest]
    assert str(failure) == f"{summarize.value}\n{digest.value}"


def test_the_json_lists_errors_skipped_instances_and_partial_values() -> None:
    result = run({"on_error": "continue"}, FakeChatModel(responder=broken_section))
    data = json.loads(result.to_json())

    assert data["tasks"] == {}
    assert [(e["step_id"], e["node_path"]) for e in data["errors"]] == [
        ("task.summarize_report.sections:summary", BROKEN)
    ]
    assert [s["node_path"] for s in data["skipped"]] == ["task.write_digest"]
    assert set(data["partial"]) == {"task.summarize_report", "task.write_digest"}


def test_without_failures_continue_changes_nothing() -> None:
    def fine(request: FakeRequest) -> ResponderResult:
        if request.fields == ("summary",):
            return {"summary": "ok"}
        return {"headline": "Short", "digest": "Read it."}

    result = run({"on_error": "continue"}, FakeChatModel(responder=fine))

    assert (result.errors, result.skipped, result.invalid) == ((), (), {})
    assert result.failure() is None
    assert result[report_digest.TaskWriteDigest].section_summaries == ["ok", "ok", "ok"]


def test_the_default_policy_still_raises() -> None:
    with pytest.raises(StepFailedError) as caught:
        run({}, FakeChatModel(responder=broken_section))

    assert caught.value.node_path == BROKEN


def test_a_bad_on_error_value_is_a_structure_error() -> None:
    with pytest.raises(StructureError) as caught:
        RunStructure({"on_error": "ignore"})

    assert [(d.message, d.hint) for d in caught.value.diagnostics] == [
        (
            "'on_error' must be 'raise' or 'continue', got 'ignore'",
            "pass 'raise' (the default: a failed step stops the run) or 'continue' "
            "(finish the other steps and list the failures in result.errors)",
        )
    ]
