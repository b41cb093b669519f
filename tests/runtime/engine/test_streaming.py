"""Streamed runs: ``stream()``/``astream()`` hand out validated values as the tree fills."""

from __future__ import annotations

import asyncio
import json
from datetime import date
from enum import Enum

import pytest
from pydantic import Field

from langtree import LLMProvider, RunStructure, StepFailedError, TreeNode
from langtree.runtime import (
    RunEvent,
    RunFinished,
    RunResult,
    StepFailed,
    StepFinished,
    ValueMapped,
)
from langtree.testing import FakeChatModel, FakeRequest


class Section(TreeNode):
    """Summarise the section."""

    title: str
    summary: str = Field(description="Two sentences.")


class TaskReport(TreeNode):
    """! @sequential"""

    sections: list[Section] = Field(
        description="! @all->task.digest@{{value.summaries=sections.**.summary}}"
    )
    count: int = Field(description='! transform("sections | length")')


class TaskDigest(TreeNode):
    """Write the digest."""

    summaries: list[str] = Field(default=[], description="The sections' summaries.")
    digest: str = Field(description="One paragraph.")


INPUTS = {TaskReport: {"sections": [{"title": "A"}, {"title": "B"}]}}


def structure_for(model: FakeChatModel, **config: object) -> RunStructure:
    structure = RunStructure(config or None, LLMProvider({"default": model}))
    structure.add(TaskReport)
    structure.add(TaskDigest)
    return structure


def kinds(events: list[RunEvent]) -> list[str]:
    return [type(event).__name__ for event in events]


def test_stream_hands_out_each_instance_mapping_and_the_result_last() -> None:
    model = FakeChatModel()
    events = list(structure_for(model, max_concurrency=1).stream(INPUTS))

    steps = [event for event in events if isinstance(event, StepFinished)]
    assert sorted((event.step_id, event.node_path) for event in steps) == [
        ("task.digest:digest", "task.digest"),
        ("task.report.sections:summary", "task.report.sections[0]"),
        ("task.report.sections:summary", "task.report.sections[1]"),
        ("task.report:count", "task.report"),
    ]
    first = steps[0]
    assert first.values == {"summary": "summary 1"}
    assert first.partial["task.report"]["sections"][0]["summary"] == "summary 1"  # type: ignore[index]
    assert [event.transform for event in steps if event.step_id == "task.report:count"] == [True]
    [mapped] = [event for event in events if isinstance(event, ValueMapped)]
    assert (mapped.path, mapped.value, mapped.source) == (
        "task.digest.summaries",
        ["summary 1", "summary 1"],
        "sections.**.summary",
    )
    assert mapped.command == "! @all->task.digest@{{value.summaries=sections.**.summary}}"
    assert isinstance(events[-1], RunFinished)
    assert kinds(events).count("RunFinished") == 1
    assert events[-1].result[TaskDigest].summaries == ["summary 1", "summary 1"]


def test_a_partial_tree_is_a_copy_taken_when_the_event_happened() -> None:
    events = list(structure_for(FakeChatModel(), max_concurrency=1).stream(INPUTS))
    summaries = [event for event in events if isinstance(event, StepFinished)][:2]
    first, second = (event.partial["task.report"]["sections"] for event in summaries)
    assert [section.get("summary") for section in first] == ["summary 1", None]  # type: ignore[union-attr]
    assert [section.get("summary") for section in second] == ["summary 1", "summary 1"]  # type: ignore[union-attr]


def test_astream_in_async_code() -> None:
    async def collect() -> list[RunEvent]:
        structure = structure_for(FakeChatModel())
        return [event async for event in structure.astream(INPUTS)]

    events = asyncio.run(collect())
    assert kinds(events)[-1] == "RunFinished"
    assert kinds(events).count("StepFinished") == 4


def fail_second_section(request: FakeRequest) -> dict[str, object]:
    if request.node_path == "task.report.sections[1]":
        raise ValueError("no summary today")
    return {name: f"{name} ok" for name in request.fields}


def test_a_failure_the_run_goes_on_after_is_an_event() -> None:
    model = FakeChatModel(fail_second_section)
    structure = structure_for(model, on_error="continue", max_retries=0, max_concurrency=1)
    events = list(structure.stream(INPUTS))

    [failed] = [event for event in events if isinstance(event, StepFailed)]
    assert failed.error.node_path == "task.report.sections[1]"
    assert isinstance(events[-1], RunFinished)
    assert events[-1].result.errors == (failed.error,)


def test_a_failure_that_stops_the_run_is_raised_after_the_events_before_it() -> None:
    model = FakeChatModel(fail_second_section)
    seen: list[RunEvent] = []
    events = structure_for(model, max_retries=0, max_concurrency=1).stream(INPUTS)
    with pytest.raises(StepFailedError) as caught:
        seen.extend(events)
    assert caught.value.node_path == "task.report.sections[1]"
    assert kinds(seen) == ["StepFinished"]


def test_closing_the_stream_cancels_the_run() -> None:
    model = FakeChatModel(latency=0.05)
    events = structure_for(model, max_concurrency=1).stream(INPUTS)
    assert isinstance(next(events), StepFinished)
    events.close()
    calls = len(model.calls)
    asyncio.run(asyncio.sleep(0.2))
    assert calls == len(model.calls) < 3


# --- what events carry: JSON data, as RunResult.dump() shows it ---------------------------


class Grade(Enum):
    POOR = 1
    FAIR = 2
    GOOD = 3


class Mood(Enum):
    CALM = "calm"
    ANGRY = "angry"


class Reviewer(TreeNode):
    name: str
    since: date


class GradedReview(TreeNode):
    """
    ! resample(3)
    ! @resampled[grade]->mean
    Grade the review.
    """

    text: str
    reviewer: Reviewer
    grade: Grade = Field(description="The grade.")
    mood: Mood = Field(description="The reviewer's mood.")


class TaskGrading(TreeNode):
    """! @all->task.grade_report@{{value.grades=reviews.*.grade}}"""

    submitted: date
    reviews: list[GradedReview]
    mean_grade: float = Field(
        description="""! transform(
            "(reviews | sum(attribute='grade_resampled_value')) / (reviews | length)"
        )"""
    )


class TaskGradeReport(TreeNode):
    """Report on the grades."""

    grades: list[Grade] = Field(default=[], description="The grades.")
    verdict: str = Field(description="One sentence.")


GRADING_INPUTS = {
    TaskGrading: {
        "submitted": date(2024, 5, 1),
        "reviews": [
            {"text": "Meh.", "reviewer": Reviewer(name="Ada", since=date(2020, 1, 2))},
            {"text": "Great!", "reviewer": {"name": "Bo", "since": date(2021, 3, 4)}},
        ],
    }
}


def grading_model(fail: str | None = None) -> FakeChatModel:
    """Three samples per review's grade: 1, 3, 3 (mean 7/3, FAIR) and 3, 3, 3 (GOOD)."""
    grades = {"task.grading.reviews[0]": [1, 3, 3], "task.grading.reviews[1]": [3, 3, 3]}

    def answer(request: FakeRequest) -> dict[str, object]:
        if request.node_path == fail:
            raise ValueError("no answer today")
        if request.fields == ("grade",):
            return {"grade": grades[request.node_path or ""].pop()}
        if request.fields == ("mood",):
            return {"mood": "calm"}
        return {"verdict": "Fair overall."}

    return FakeChatModel(answer)


def grading_stream(**config: object) -> tuple[list[RunEvent], RunResult]:
    model = grading_model()
    structure = RunStructure(config or None, LLMProvider({"default": model}))
    structure.add(TaskGrading)
    structure.add(TaskGradeReport)
    events = list(structure.stream(GRADING_INPUTS))
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    return events, finished.result


def test_every_event_of_a_run_is_json_as_it_is() -> None:
    events, _ = grading_stream()

    for event in events:
        json.dumps(event.to_dict())
        if isinstance(event, StepFinished):
            assert json.loads(json.dumps(event.values)) == event.values
            assert json.loads(json.dumps(event.partial)) == event.partial
        if isinstance(event, ValueMapped):
            assert json.loads(json.dumps(event.value)) == event.value


def test_events_show_the_values_as_dump_does_with_the_resampled_numbers() -> None:
    events, result = grading_stream()

    steps = {
        (event.step_id, event.node_path): event
        for event in events
        if isinstance(event, StepFinished)
    }
    first_grade = steps[("task.grading.reviews:grade", "task.grading.reviews[0]")]
    assert first_grade.values == {"grade": 2, "grade_resampled_value": pytest.approx(7 / 3)}
    [mapped] = [event for event in events if isinstance(event, ValueMapped)]
    assert mapped.value == [2, 3]
    last = [event for event in events if isinstance(event, StepFinished)][-1]
    dumped = {tag: result.dump(tag) for tag in ("task.grading", "task.grade_report")}
    assert last.partial == dumped
    # f_resampled_value stands right after its field, where dump() puts it.
    assert list(last.partial["task.grading"]["reviews"][0]) == [  # type: ignore[index]
        "text",
        "reviewer",
        "grade",
        "grade_resampled_value",
        "mood",
    ]
    assert dumped["task.grading"]["submitted"] == "2024-05-01"


def test_a_transform_reads_the_resampled_numbers_beside_their_fields() -> None:
    _, result = grading_stream()

    assert result[TaskGrading].mean_grade == pytest.approx((7 / 3 + 3) / 2)


def test_partial_gives_the_values_as_dump_does() -> None:
    _, result = grading_stream()

    for tag in ("task.grading", "task.grade_report"):
        assert result.partial(tag) == result.dump(tag)
        json.dumps(result.partial(tag))


def test_a_failure_event_and_the_partial_values_after_it_are_json() -> None:
    model = grading_model(fail="task.grade_report")
    structure = RunStructure(
        {"on_error": "continue", "max_retries": 0}, LLMProvider({"default": model})
    )
    structure.add(TaskGrading)
    structure.add(TaskGradeReport)
    events = list(structure.stream(GRADING_INPUTS))

    [failed] = [event for event in events if isinstance(event, StepFailed)]
    assert failed.to_dict() == {
        "event": "StepFailed",
        "step_id": "task.grade_report:verdict",
        "node_path": "task.grade_report",
        "kind": "permanent",
        "message": str(failed.error),
    }
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    partial = finished.result.partial(TaskGradeReport)
    assert partial == {"grades": [2, 3]}
    assert json.loads(json.dumps(finished.to_dict()))["result"]["partial"] == {
        "task.grade_report": partial
    }


def test_an_event_as_a_dict_names_its_kind() -> None:
    events, result = grading_stream()

    step = next(event for event in events if isinstance(event, StepFinished))
    assert step.to_dict() == {
        "event": "StepFinished",
        "step_id": step.step_id,
        "node_path": step.node_path,
        "values": step.values,
        "partial": step.partial,
        "transform": step.transform,
    }
    [mapped] = [event for event in events if isinstance(event, ValueMapped)]
    assert mapped.to_dict() == {
        "event": "ValueMapped",
        "path": "task.grade_report.grades",
        "value": [2, 3],
        "command": "! @all->task.grade_report@{{value.grades=reviews.*.grade}}",
        "source": "reviews.*.grade",
    }
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert finished.to_dict() == {"event": "RunFinished", "result": json.loads(result.to_json())}
