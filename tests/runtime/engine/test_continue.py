"""``RunStructure({"on_error": "continue"})``: a failed step instance does not stop the run."""

import json
from collections.abc import Callable

import pytest
from pydantic import Field

from langtree import ExecutionError, RunStructure, StructureError, TreeNode
from langtree.runtime import LLMProvider, RunResult, StepFailedError
from langtree.runtime.observe._result import SkippedInstance
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest, ResponderResult
from tests.runtime.engine.test_engine import report_digest

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
    assert failure.result is result


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


# -- plucks over failed elements ------------------------------------------------------------
#
# A map-reduce: each document's summary is a step of its own, and the review reads them all
# through a pluck path. The summary of document 1 fails (42 is not a str).


class Doc(TreeNode):
    text: str = Field(description="The document.")
    summary: str = Field(description="Two sentences.")


class TaskReview(TreeNode):
    """Review the documents from their summaries: {summaries}"""

    summaries: list[str] = Field(default=[], description="The summaries.")
    review: str = Field(description="One paragraph.")


DOCS = [{"text": "Tides."}, {"text": "Moons."}, {"text": "Waves."}]


def docs_task(
    source: str, destination: str = "task.review", target: str = "value.summaries"
) -> type[TreeNode]:
    """The documents, sent to ``target`` in ``destination`` by ``source``."""

    class TaskDocs(TreeNode):
        """Summarise each document."""

        docs: list[Doc] = Field(
            default=[], description=f"! @all->{destination}@{{{{{target}={source}}}}}"
        )

    return TaskDocs


def summaries(request: FakeRequest) -> ResponderResult:
    if request.node_path.endswith("docs[1]"):
        return {"summary": 42}
    return {name: f"{name} of {request.node_path}" for name in request.fields}


def run_continuing(
    *tasks: type[TreeNode],
    inputs: dict[type[TreeNode], object],
    responder: Callable[[FakeRequest], ResponderResult] = summaries,
) -> tuple[RunResult, FakeChatModel]:
    model = FakeChatModel(responder=responder)
    structure = RunStructure({"on_error": "continue"}, provider=LLMProvider({"default": model}))
    for task in tasks:
        structure.add(task)
    return structure.run(inputs, max_retries=0), model


@pytest.mark.parametrize("operator", ["*", "***"], ids=["star", "triple-star"])
def test_a_pluck_that_needs_every_element_skips_the_reader_of_a_failed_one(
    operator: str,
) -> None:
    task_docs = docs_task(f"docs.{operator}.summary")

    result, model = run_continuing(task_docs, TaskReview, inputs={task_docs: {"docs": DOCS}})

    assert [error.node_path for error in result.errors] == ["task.docs.docs[1]"]
    assert result.skipped == (
        SkippedInstance(
            step_id="task.review:review",
            node_path="task.review",
            because="task.docs.docs:summary at task.docs.docs[1]",
        ),
    )
    assert [call.fields for call in model.calls] == [("summary",)] * 3
    assert result.invalid["task.review"] == (
        "The values of 'TaskReview' do not validate: 1 step instance(s) failed and 1 were "
        "skipped:\n"
        "  - review: Field required\n"
        "  - Missing value for 'TaskReview.summaries': its source "
        "'task.docs.docs[1].summary' was never produced, and a list element has no default\n"
        "    hint: map into a field of the list's nodes, which can have a default, or send the "
        "list with '@all' and a '.**.' pluck path, which leaves absent values out\n"
        "  hint: see result.errors and result.skipped; result.partial('TaskReview') gives "
        "the values as plain data"
    )
    assert result.partial(task_docs)["docs"][2] == {
        "text": "Waves.",
        "summary": "summary of task.docs.docs[2]",
    }


def test_a_prompt_variable_plucked_over_a_failed_element_is_a_missing_value() -> None:
    task_docs = docs_task("docs.*.summary", target="prompt.summaries")

    result, _ = run_continuing(task_docs, TaskReview, inputs={task_docs: {"docs": DOCS}})

    assert [skipped.step_id for skipped in result.skipped] == ["task.review:review"]
    assert result.invalid["task.review"].splitlines()[2:4] == [
        "  - Missing value for {summaries} in 'task.review': its source "
        "'task.docs.docs[1].summary' was never produced, and a prompt variable has no default",
        "    hint: send the list with a '.**.' pluck path, which leaves absent values out",
    ]


def test_a_double_star_pluck_reduces_over_the_elements_that_succeeded() -> None:
    task_docs = docs_task("docs.**.summary")

    result, model = run_continuing(task_docs, TaskReview, inputs={task_docs: {"docs": DOCS}})

    assert [error.node_path for error in result.errors] == ["task.docs.docs[1]"]
    assert result.skipped == ()
    review = result[TaskReview]
    assert review.summaries == ["summary of task.docs.docs[0]", "summary of task.docs.docs[2]"]
    assert review.review == "review of task.review"
    assert model.calls[-1].fields == ("review",)
    assert (
        'from their summaries: [\n  "summary of task.docs.docs[0]",\n'
        '  "summary of task.docs.docs[2]"\n]' in model.calls[-1].text
    )


class TaskFinder(TreeNode):
    """Find documents."""

    docs: list[Doc] = Field(
        description="""
        Three documents.
        ! @all->task.review@{{value.summaries=docs.**.summary}}
        """
    )


def test_a_double_star_pluck_over_a_list_never_produced_skips_its_reader() -> None:
    def no_docs(request: FakeRequest) -> ResponderResult:
        return {"docs": 42} if request.fields == ("docs",) else {"review": "Fine."}

    result, _ = run_continuing(TaskFinder, TaskReview, inputs={}, responder=no_docs)

    assert [(skipped.step_id, skipped.because) for skipped in result.skipped] == [
        ("task.review:review", "task.finder:docs at task.finder")
    ]


class Passage(TreeNode):
    text: str = Field(description="The passage.")


class Chapter(TreeNode):
    passages: list[Passage] = Field(default=[], description="The passages.")


class TaskNovel(TreeNode):
    """! @all->task.digest@{{value.texts=chapters.**.passages.*.text}}"""

    chapters: list[Chapter] = Field(default=[], description="The chapters.")


class TaskDigest(TreeNode):
    texts: list[list[str]] = Field(default=[], description="The texts of each chapter.")
    digest: str = Field(description="The digest.")


def test_a_double_star_pluck_leaves_out_an_element_whose_inner_pluck_misses_a_value() -> None:
    def passages(request: FakeRequest) -> ResponderResult:
        if request.node_path == "task.novel.chapters[0].passages[1]":
            return {"text": 42}
        return {name: f"{name} of {request.node_path}" for name in request.fields}

    chapters = [{"passages": [{}, {}]}, {"passages": [{}]}]
    result, _ = run_continuing(
        TaskNovel, TaskDigest, inputs={TaskNovel: {"chapters": chapters}}, responder=passages
    )

    assert result.skipped == ()
    assert result[TaskDigest].texts == [["text of task.novel.chapters[1].passages[0]"]]


class TaskCollect(TreeNode):
    """! @all->task.verdict@{{value.summaries=summaries}}"""

    summaries: list[str] = Field(default=[], description="The summaries.")


class TaskVerdict(TreeNode):
    summaries: list[str] = Field(default=[], description="The summaries.")
    verdict: str = Field(description="The verdict.")


def test_a_reader_of_what_a_double_star_pluck_wrote_runs_too() -> None:
    task_docs = docs_task("docs.**.summary", destination="task.collect")

    result, _ = run_continuing(
        task_docs, TaskCollect, TaskVerdict, inputs={task_docs: {"docs": DOCS}}
    )

    assert result.skipped == ()
    assert result[TaskVerdict].summaries == [
        "summary of task.docs.docs[0]",
        "summary of task.docs.docs[2]",
    ]
