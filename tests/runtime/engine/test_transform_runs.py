"""Transform fields at run time: computed without a model call, typed, scheduled, traced."""

from __future__ import annotations

import base64
import json
from datetime import date
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from langtree import Asset, ExecutionError, TreeNode
from langtree.testing import FakeChatModel, FakeRequest
from tests.runtime.fake_structures import structure_for

SOURCE_LINES = Path(__file__).read_text().splitlines()


def line_of(snippet: str) -> int:
    return next(i for i, text in enumerate(SOURCE_LINES, 1) if snippet in text)


class Finding(TreeNode):
    id: str
    claim: str
    confidence: float


class TaskResearch(TreeNode):
    """Research the topic."""

    topic: str
    findings: list[Finding] = Field(description="What you found.")
    strong_ids: list[str] = Field(
        description="""! transform(
            "findings | selectattr('confidence', 'ge', 0.8) | map(attribute='id') | list"
        )"""
    )
    count: int = Field(description='! transform("findings | length")')
    mean_confidence: float = Field(
        description="""! transform("(findings | sum(attribute='confidence')) / count")"""
    )
    slug: str = Field(description="""! transform("topic | lower | replace(' ', '-')")""")
    summary: str = Field(description="Summarise the findings.")


FINDINGS = [
    {"id": "f1", "claim": "Tides follow the moon", "confidence": 0.9},
    {"id": "f2", "claim": "Cheese is moon rock", "confidence": 0.1},
    {"id": "f3", "claim": "The moon drifts away", "confidence": 0.8},
]


def research_answers(request: FakeRequest) -> dict[str, object]:
    if request.fields == ("findings",):
        return {"findings": FINDINGS}
    return {name: f"{name} text" for name in request.fields}


def test_transforms_compute_typed_values_without_a_model_call() -> None:
    model = FakeChatModel(research_answers)
    result = structure_for(TaskResearch, model=model).run(
        {TaskResearch: {"topic": "The Moon and Tides"}}
    )

    task = result[TaskResearch]
    assert task.strong_ids == ["f1", "f3"]
    assert task.count == 3
    assert task.mean_confidence == pytest.approx(0.6)
    assert task.slug == "the-moon-and-tides"
    assert [call.fields for call in model.calls] == [("findings",), ("summary",)]
    assert len(result.trace) == 2


def test_a_later_step_sees_the_computed_values_in_its_context() -> None:
    model = FakeChatModel(research_answers)
    structure_for(TaskResearch, model=model).run({TaskResearch: {"topic": "Moon"}})

    summary_prompt = model.calls[1].text
    assert '## Strong Ids\n\n[\n  "f1",\n  "f3"\n]' in summary_prompt
    assert "## Count\n\n3" in summary_prompt
    assert "## Slug\n\nmoon" in summary_prompt


def test_transforms_are_recorded_beside_the_trace_and_in_the_provenance() -> None:
    result = structure_for(TaskResearch, model=FakeChatModel(research_answers)).run(
        {TaskResearch: {"topic": "Moon"}}
    )

    # In the order they were computed: the slug reads only an input.
    assert [(r.step_id, r.node_path, r.field, r.value) for r in result.transforms] == [
        ("task.research:slug", "task.research", "slug", "moon"),
        ("task.research:strong_ids", "task.research", "strong_ids", ["f1", "f3"]),
        ("task.research:count", "task.research", "count", 3),
        ("task.research:mean_confidence", "task.research", "mean_confidence", pytest.approx(0.6)),
    ]
    [record] = result.provenance("task.research.count")
    assert record.to_dict() | {"at": None} == {
        "kind": "transform",
        "path": "task.research.count",
        "value": 3,
        "at": None,
        "step_id": "task.research:count",
        "location": "TaskResearch.count",
        "expression": "findings | length",
    }
    data = json.loads(result.to_json())
    assert [entry["field"] for entry in data["transforms"]] == [
        "slug",
        "strong_ids",
        "count",
        "mean_confidence",
    ]
    assert data["transforms"][2]["expression"] == "findings | length"


class Source(TreeNode):
    url: str
    reliable: bool


class Researcher(TreeNode):
    summary: str = Field(description="What the sources say.")
    confidence: float = Field(description="How sure you are, 0 to 1.")


class Sourcer(TreeNode):
    sources: list[Source] = Field(description="Where it comes from.")
    confidence: float = Field(description="How good the sources are, 0 to 1.")


class Merged(TreeNode):
    summary: str
    sources: list[str]
    confidence: float


class TaskBrief(TreeNode):
    """! @parallel"""

    researcher: Researcher = Field(default_factory=lambda: Researcher.model_construct())
    sourcer: Sourcer = Field(default_factory=lambda: Sourcer.model_construct())
    merged: Merged = Field(
        description="""! transform(
            "dict(summary=researcher.summary, sources=reliable, confidence=confidence)"
        )"""
    )
    reliable: list[str] = Field(
        description="""! transform(
            "sourcer.sources | selectattr('reliable') | map(attribute='url') | list"
        )"""
    )
    confidence: float = Field(
        description='! transform("(researcher.confidence + sourcer.confidence) / 2")'
    )


def brief_answers(request: FakeRequest) -> dict[str, object]:
    if request.node_path == "task.brief.sourcer":
        sources = [
            {"url": "https://a.example", "reliable": True},
            {"url": "https://b.example", "reliable": False},
        ]
        return {"sources": sources, "confidence": 0.5}
    return {"summary": "It holds.", "confidence": 0.9}


def test_a_transform_merges_two_branches_into_a_node() -> None:
    model = FakeChatModel(brief_answers)
    result = structure_for(TaskBrief, model=model).run({TaskBrief: {}})

    merged = result[TaskBrief].merged
    assert (merged.summary, merged.sources) == ("It holds.", ["https://a.example"])
    assert merged.confidence == pytest.approx(0.7)
    assert len(model.calls) == 4  # the branches' fields, one step each (@sequential)
    assert result.provenance("task.brief.merged.sources")[0].kind == "transform"
    assert [r.field for r in result.transforms] == ["reliable", "confidence", "merged"]


class Paragraph(TreeNode):
    text: str = Field(description="The paragraph.")


class Section(TreeNode):
    title: str
    paragraphs: list[Paragraph] = Field(description="Its paragraphs.")
    size: int = Field(
        description="! transform(\"paragraphs | map(attribute='text') | join | length\")"
    )


class TaskBook(TreeNode):
    sections: list[Section]


def test_a_transform_of_an_element_waits_only_for_its_own_branch() -> None:
    order: list[str] = []

    def answers(request: FakeRequest) -> dict[str, object]:
        order.append(request.node_path or "")
        return {"paragraphs": [{"text": "x" * (len(order) * 10)}]}

    model = FakeChatModel(answers)
    result = structure_for(TaskBook, model=model, max_concurrency=1).run(
        {TaskBook: {"sections": [{"title": "A"}, {"title": "B"}]}}
    )

    assert [section.size for section in result[TaskBook].sections] == [10, 20]
    assert [r.node_path for r in result.transforms] == [
        "task.book.sections[0]",
        "task.book.sections[1]",
    ]


class Order(TreeNode):
    items: list[str]
    keys: list[str]


class TaskOrder(TreeNode):
    order: Order
    count: int = Field(description='! transform("order.items | length + order.keys | length")')
    listed: list[str] = Field(description="! transform(\"order.items | map('upper')\")")


def test_a_dicts_keys_win_over_its_methods_and_lazy_results_become_lists() -> None:
    result = structure_for(TaskOrder, model=FakeChatModel()).run(
        {TaskOrder: {"order": {"items": ["a", "b"], "keys": ["k"]}}}
    )
    assert result[TaskOrder].count == 3
    assert result[TaskOrder].listed == ["A", "B"]


class TaskMutates(TreeNode):
    items: list[str]
    count: int = Field(description='! transform("items.append(1)")')


class TaskDivides(TreeNode):
    numbers: list[int]
    mean: float = Field(description='! transform("(numbers | sum) / (numbers | length)")')


class TaskWrongType(TreeNode):
    name: str
    count: int = Field(description='! transform("name ~ 1")')


class TaskMissingKey(TreeNode):
    order: dict[str, int]
    total: int = Field(description='! transform("order.missing + 1")')


class TaskOptionalInput(TreeNode):
    note: str | None
    size: int = Field(description='! transform("note | length")')


class TaskUndefinedItem(TreeNode):
    rows: list[dict[str, str]]
    ids: list[str] = Field(description="""! transform("rows | map(attribute='id') | list")""")


@pytest.mark.parametrize(
    ("task", "inputs", "snippet", "why"),
    [
        pytest.param(
            TaskMutates,
            {"items": []},
            "items.append(1)",
            "SecurityError: access to attribute 'append' of 'list' object is unsafe.",
            id="sandbox",
        ),
        pytest.param(
            TaskDivides,
            {"numbers": []},
            "(numbers | sum) / (numbers | length)",
            "ZeroDivisionError: division by zero",
            id="raises",
        ),
        pytest.param(
            TaskWrongType,
            {"name": "Ada"},
            "name ~ 1",
            "cannot convert 'Ada1' to int: it is not an integer",
            id="type",
        ),
        pytest.param(
            TaskMissingKey,
            {"order": {"a": 1}},
            "order.missing + 1",
            "UndefinedError: 'dict object' has no attribute 'missing'",
            id="undefined",
        ),
        pytest.param(
            TaskOptionalInput,
            {"note": None},
            "note | length",
            "TypeError: object of type 'NoneType' has no len()",
            id="none",
        ),
        pytest.param(
            TaskUndefinedItem,
            {"rows": [{"id": "a"}, {"name": "b"}]},
            "rows | map(attribute='id') | list",
            "item [1] of its value is undefined (a name or key it reads has none)",
            id="undefined item",
        ),
    ],
)
def test_a_failing_transform_is_an_execution_error_naming_field_and_expression(
    task: type[TreeNode], inputs: dict[str, object], snippet: str, why: str
) -> None:
    structure = structure_for(task, model=FakeChatModel())
    with pytest.raises(ExecutionError) as caught:
        structure.run({task: inputs})
    field_name = {
        "TaskDivides": "mean",
        "TaskMissingKey": "total",
        "TaskOptionalInput": "size",
        "TaskUndefinedItem": "ids",
    }
    name = field_name.get(task.__name__, "count")
    tag = structure.plan({task: inputs}).steps[0].node_tag
    line = next(
        i for i, text in enumerate(SOURCE_LINES, 1) if snippet in text and "transform" in text
    )
    lines = str(caught.value).splitlines()
    assert lines[0] == f"transform() of '{task.__name__}.{name}' failed at {tag}: {why}"
    assert lines[1].strip() == SOURCE_LINES[line - 1].strip()
    assert lines[3:] == [
        f"  in {task.__name__}.{name} ({__file__}:{line})",
        f"  hint: check the expression {snippet!r} against the values at {tag}",
    ]


class TaskShowsCount(TreeNode):
    items: list[str] = Field(description="Three items.")
    count: int = Field(description='! transform("items | length")')
    verdict: str = Field(description="Say whether {count} items are enough.")


def test_a_failed_producer_skips_the_transform_under_continue() -> None:
    def fail_items(request: FakeRequest) -> dict[str, object]:
        if request.fields == ("items",):
            raise ValueError("no items today")
        return {"verdict": "ok"}

    structure = structure_for(
        TaskShowsCount, model=FakeChatModel(fail_items), on_error="continue", max_retries=0
    )
    result = structure.run({TaskShowsCount: {}})
    assert [(r.step_id, r.because) for r in result.skipped] == [
        ("task.shows_count:count", "task.shows_count:items at task.shows_count"),
        ("task.shows_count:verdict", "task.shows_count:items at task.shows_count"),
    ]
    assert result.transforms == ()


def test_a_runtime_variable_shows_the_computed_value() -> None:
    model = FakeChatModel(
        lambda request: (
            {"items": ["a", "b", "c"]} if request.fields == ("items",) else {"verdict": "ok"}
        )
    )
    structure_for(TaskShowsCount, model=model).run({TaskShowsCount: {}})
    assert "Say whether 3 items are enough." in model.calls[1].text


def test_rows_of_a_dataset_compute_their_own_transforms() -> None:
    model = FakeChatModel(lambda request: {"verdict": "ok"})
    structure = structure_for(TaskShowsCount, model=model)
    rows = [{TaskShowsCount: {"items": ["a"] * size}} for size in (1, 2, 3)]
    results = list(structure.run_many(rows))
    assert [row.result[TaskShowsCount].count for row in results if row.result] == [1, 2, 3]


# --- what a transform reads: the values as to_json() shows them --------------------------


class Severity(Enum):
    BLOCKER = "blocker"
    NIT = "nit"


class Level(Enum):
    LOW = 1
    HIGH = 3


class Issue(TreeNode):
    text: str = Field(description="What is wrong.")
    severity: Severity = Field(description="How bad it is.")
    due: date = Field(description="When it must be fixed.")


ISSUES = [
    {"text": "Crashes on start", "severity": "blocker", "due": "2024-05-01"},
    {"text": "Typo in a comment", "severity": "nit", "due": "2024-06-30"},
]


class TaskCodeReview(TreeNode):
    """Review the change."""

    issues: list[Issue] = Field(description="What you found.")
    blockers: list[str] = Field(
        description="""! transform(
            "issues | selectattr('severity', 'eq', 'blocker') | map(attribute='text') | list"
        )"""
    )
    first_due: date = Field(description='! transform("issues[0].due")')
    first_due_text: str = Field(description='! transform("issues[0].due")')
    worst: Severity = Field(description='! transform("issues[0].severity")')
    named: Severity = Field(description="""! transform("'nit'")""")
    level: Level = Field(description='! transform("3")')


def test_a_transform_reads_enum_members_as_their_values_and_dates_as_text() -> None:
    model = FakeChatModel(lambda request: {"issues": ISSUES})
    result = structure_for(TaskCodeReview, model=model).run({TaskCodeReview: {}})

    review = result[TaskCodeReview]
    assert review.blockers == ["Crashes on start"]
    assert review.first_due_text == "2024-05-01"
    # What a transform gives is converted to its field's type, as before.
    assert (review.first_due, review.worst, review.named, review.level) == (
        date(2024, 5, 1),
        Severity.BLOCKER,
        Severity.NIT,
        Level.HIGH,
    )
    assert len(model.calls) == 1


def test_a_transform_reads_an_input_node_as_to_json_shows_it() -> None:
    issues = [Issue.model_validate(issue) for issue in ISSUES]
    result = structure_for(TaskCodeReview, model=FakeChatModel()).run(
        {TaskCodeReview: TaskCodeReview.model_construct(issues=issues)}
    )

    assert result[TaskCodeReview].blockers == ["Crashes on start"]


def test_a_transform_of_an_enum_field_under_the_exact_strategy_keeps_its_value() -> None:
    model = FakeChatModel(lambda request: {"issues": ISSUES})
    result = structure_for(
        TaskCodeReview, model=model, validation_strategy="exact", allow_string_parsing=False
    ).run({TaskCodeReview: {}})

    assert (result[TaskCodeReview].worst, result[TaskCodeReview].first_due) == (
        Severity.BLOCKER,
        date(2024, 5, 1),
    )


def test_a_transform_converts_a_json_form_without_string_parsing() -> None:
    model = FakeChatModel(lambda request: {"issues": ISSUES})
    result = structure_for(TaskCodeReview, model=model, allow_string_parsing=False).run(
        {TaskCodeReview: {}}
    )

    assert (result[TaskCodeReview].worst, result[TaskCodeReview].first_due) == (
        Severity.BLOCKER,
        date(2024, 5, 1),
    )


class TaskPhotoFacts(TreeNode):
    photo: Asset
    facts: dict[str, Any] = Field(description='! transform("photo")')
    kind: str = Field(description="""! transform("photo['media_type']")""")


def test_a_transform_reads_an_asset_as_the_dict_to_json_shows() -> None:
    photo = Asset(data=b"\x89PNG", media_type="image/png", title="Front")
    result = structure_for(TaskPhotoFacts, model=FakeChatModel()).run(
        {TaskPhotoFacts: {"photo": photo}}
    )

    facts = result[TaskPhotoFacts].facts
    assert facts == photo.model_dump(mode="json")
    assert facts["data"] == base64.b64encode(b"\x89PNG").decode()
    assert result[TaskPhotoFacts].kind == "image/png"
