"""Streamed runs: ``stream()``/``astream()`` hand out validated values as the tree fills."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import Field

from langtree import LLMProvider, RunStructure, StepFailedError, TreeNode
from langtree.runtime import RunEvent, RunFinished, StepFailed, StepFinished, ValueMapped
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
