"""Pluck paths carried out in runs (docs/dsl.md, "Pluck paths"): no model call reads
them, the values come from the inputs or from lists that earlier steps generate."""

from pathlib import Path

import pytest
from pydantic import Field

from langtree import ExecutionError, RunStructure, TreeNode
from langtree.dsl._paths import split_plucks
from langtree.prompts._plucking import pluck_values
from langtree.prompts._values import Absent
from langtree.runtime import LLMProvider
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest


class Item(TreeNode):
    id: int = Field(description="The id.")
    label: int | str = Field(default="", description="A label.")
    note: str | None = Field(default="", description="A note.")


class TaskCatalog(TreeNode):
    """A catalog."""

    items: list[Item | None] = Field(
        default=[],
        description="""
        ! @all->task.digest@{{
            value.ids=items.*.id,
            value.present=items.**.id,
            value.notes=items.*.note,
            prompt.labels=items.***.label,
        }}
        """,
    )


class TaskDigest(TreeNode):
    """Summarise the labels {labels}."""

    ids: list[int | None] = Field(default=[])
    present: list[int] = Field(default=[])
    notes: list[str | None] = Field(default=[])
    summary: str = Field(description="One sentence.")


def run(
    *tasks: type[TreeNode], inputs: dict[type[TreeNode], object]
) -> tuple[object, FakeChatModel]:
    model = FakeChatModel()
    structure = RunStructure(provider=LLMProvider({"default": model}))
    for task in tasks:
        structure.add(task)
    return structure.run(inputs), model


def test_values_are_plucked_from_the_inputs() -> None:
    items = [{"id": 1, "label": "a", "note": None}, {"id": 2, "label": "b"}]

    result, model = run(TaskCatalog, TaskDigest, inputs={TaskCatalog: {"items": items}})

    digest = result[TaskDigest]  # type: ignore[index]
    assert (digest.ids, digest.present, digest.notes) == ([1, 2], [1, 2], [None, ""])
    assert 'Summarise the labels [\n  "a",\n  "b"\n].' in model.calls[0].text


def test_star_keeps_none_for_an_element_that_is_not_a_node_and_double_star_drops_it() -> None:
    items = [{"id": 1, "label": "a"}, None, {"id": 3, "label": "c"}]
    structure = RunStructure(provider=LLMProvider({"default": FakeChatModel()}))
    structure.add(TaskCatalogLoose)
    structure.add(TaskDigest)

    result = structure.run({TaskCatalogLoose: {"items": items}})

    assert (result[TaskDigest].ids, result[TaskDigest].present) == ([1, None, 3], [1, 3])


class TaskCatalogLoose(TreeNode):
    """A catalog whose labels may be missing."""

    items: list[Item | None] = Field(
        default=[],
        description="! @all->task.digest@{{value.ids=items.*.id, value.present=items.**.id, "
        "prompt.labels=items.**.label}}",
    )


def strict_error(items: list[object]) -> str:
    with pytest.raises(ExecutionError) as caught:
        run(TaskCatalog, TaskDigest, inputs={TaskCatalog: {"items": items}})
    return str(caught.value)


def location() -> str:
    lines = Path(__file__).read_text().splitlines()
    start = next(i for i, text in enumerate(lines, 1) if text.startswith("class TaskCatalog("))
    line = next(i for i, text in enumerate(lines, 1) if i > start and "=items.***.label" in text)
    return f"  in TaskCatalog.items ({__file__}:{line})"


def test_triple_star_fails_on_a_missing_value_naming_the_element() -> None:
    message = strict_error([{"id": 1, "label": "a"}, None])

    assert message == (
        "Pluck 'items.***.label' found no value at 'items[1].label' (element 1): '.***.' "
        "requires every element to have one\n"
        "                prompt.labels=items.***.label,\n"
        "                ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        f"{location()}\n"
        "  hint: use '.**.' to leave out missing values, or '.*.' to keep them as None"
    )


def test_triple_star_fails_on_mixed_types() -> None:
    message = strict_error([{"id": 1, "label": "a"}, {"id": 2, "label": 7}])

    assert message == (
        "Pluck 'items.***.label' found mixed types: 'items[0].label' is 'str', but "
        "'items[1].label' (element 1) is 'int': '.***.' requires one type\n"
        "                prompt.labels=items.***.label,\n"
        "                ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        f"{location()}\n"
        "  hint: make every value the same type, or use '.*.' or '.**.' to accept mixed values"
    )


def test_triple_star_fails_before_the_step_that_would_read_it() -> None:
    model = FakeChatModel()
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskCatalog)
    structure.add(TaskDigest)

    with pytest.raises(ExecutionError):
        structure.run({TaskCatalog: {"items": [None]}})

    assert model.calls == []


# -- plucks from generated lists ------------------------------------------------------------


class Finding(TreeNode):
    claim: str = Field(description="A claim.")
    source: str = Field(description="Where it comes from.")


class TaskStudy(TreeNode):
    """Study the topic."""

    findings: list[Finding] = Field(
        description="! @all->task.sources@{{value.cited=findings.***.source}}"
    )


class TaskSources(TreeNode):
    """List the sources."""

    cited: list[str] = Field(default=[], description="The sources cited.")
    verdict: str = Field(description="Which source is the most reliable.")


def test_values_are_plucked_from_a_list_a_step_generates() -> None:
    def responder(request: FakeRequest) -> dict[str, object]:
        if request.fields == ("findings",):
            return {"findings": [{"claim": "c1", "source": "s1"}, {"claim": "c2", "source": "s2"}]}
        return {"verdict": "s1"}

    model = FakeChatModel(responder=responder)
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskStudy)
    structure.add(TaskSources)

    result = structure.run({})

    assert result[TaskSources].cited == ["s1", "s2"]
    assert [call.fields for call in model.calls] == [("findings",), ("verdict",)]
    assert '## Cited\n\n[\n  "s1",\n  "s2"\n]' in model.calls[1].text


def test_preview_shows_a_pluck_of_a_generated_list_as_pending() -> None:
    structure = RunStructure()
    structure.add(TaskStudy)
    structure.add(TaskSources)

    prompts = structure.prompts({})

    assert "[pending: produced by step task.study:findings]" in prompts[-1].text


# -- nesting and @each ----------------------------------------------------------------------


class Paragraph(TreeNode):
    text: str = Field(description="The text.")


class Section(TreeNode):
    title: str = Field(description="The title.")
    paragraphs: list[Paragraph] = Field(default=[], description="The paragraphs.")


class TaskBook(TreeNode):
    """A book."""

    sections: list[Section] = Field(
        default=[],
        description="""
        ! @all->task.outline@{{value.texts=sections.*.paragraphs.*.text}}
        ! @each[sections]->task.outline@{{
            value.titles=sections.title,
            prompt.texts=sections.paragraphs.**.text,
        }}*
        """,
    )


class TaskOutline(TreeNode):
    """Outline the book from its texts: {texts}"""

    texts: list[list[str]] = Field(default=[])
    titles: list[str] = Field(default=[])
    outline: str = Field(description="The outline.")


def test_plucks_nest_and_each_plucks_inside_its_element() -> None:
    sections = [
        {"title": "A", "paragraphs": [{"text": "a1"}, {"text": "a2"}]},
        {"title": "B", "paragraphs": []},
        {"title": "C", "paragraphs": [{"text": "c1"}]},
    ]

    result, model = run(TaskBook, TaskOutline, inputs={TaskBook: {"sections": sections}})

    outline = result[TaskOutline]  # type: ignore[index]
    assert outline.texts == [["a1", "a2"], [], ["c1"]]
    assert outline.titles == ["A", "B", "C"]
    compact = "".join(model.calls[0].text.split())
    assert 'Outlinethebookfromitstexts:[["a1","a2"],[],["c1"]]' in compact


# -- absent lists ---------------------------------------------------------------------------


class TaskHolder(TreeNode):
    """Holds items."""

    items: list[Item] | None = Field(default=None, description="The items.")


def absent(source: str, values: object = None) -> object:
    """The value of ``source`` over ``values`` (``{"items": None}`` by default), a value
    never produced read as `Absent`."""
    structure = RunStructure()
    structure.add(TaskHolder)
    holder, items = structure.get_node("task.holder"), structure.get_node("task.holder.items")
    assert holder is not None
    assert items is not None
    fields = (holder.field("items"), items.field("id"))
    assert None not in fields

    def fail(message: str, hint: str) -> ExecutionError:
        return ExecutionError(f"{message}\n  hint: {hint}")

    _, plucks = split_plucks(source)
    start = {"items": None} if values is None else values
    return pluck_values(start, fields, plucks, where="", fail=fail, absent=Absent)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param("items.*.id", None, id="star-gives-none"),
        pytest.param("items.**.id", [], id="double-star-gives-an-empty-list"),
    ],
)
def test_an_absent_list_plucks_to_none_or_an_empty_list(source: str, expected: object) -> None:
    assert absent(source) == expected


def test_an_absent_list_fails_a_triple_star() -> None:
    with pytest.raises(ExecutionError) as caught:
        absent("items.***.id")

    assert str(caught.value) == (
        "found no list at 'items': '.***.' requires one\n"
        "  hint: supply the list, or use '.**.' (an empty list then) or '.*.' (None then)"
    )


# -- values never produced ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param("items.*.id", [1, Absent("items[1].id"), 3], id="star-keeps-it"),
        pytest.param("items.**.id", [1, 3], id="double-star-leaves-it-out"),
        pytest.param("items.***.id", [1, Absent("items[1].id"), 3], id="triple-star-keeps-it"),
    ],
)
def test_an_element_never_produced_is_absent_and_only_double_star_leaves_it_out(
    source: str, expected: list[object]
) -> None:
    items = [{"id": 1}, {}, {"id": 3}]

    assert absent(source, {"items": items}) == expected


@pytest.mark.parametrize("operator", ["*", "**", "***"])
def test_a_list_never_produced_is_absent_for_every_operator(operator: str) -> None:
    assert absent(f"items.{operator}.id", {}) == Absent("items")


class Listing(TreeNode):
    name: str = Field(description="The name.")
    note: str | None = Field(default=None, description="! input()")


class TaskListings(TreeNode):
    """! @all->task.notes@{{value.notes=listings.*.note}}"""

    listings: list[Listing] = Field(default=[], description="The listings.")


class TaskNotes(TreeNode):
    notes: list[str | None] = Field(default=[], description="The notes.")


def test_a_field_only_the_caller_gives_left_out_is_none_not_absent() -> None:
    listings = [{"name": "a"}, {"name": "b", "note": "fragile"}]

    result, _ = run(TaskListings, TaskNotes, inputs={TaskListings: {"listings": listings}})

    assert result[TaskNotes].notes == [None, "fragile"]  # type: ignore[index]
