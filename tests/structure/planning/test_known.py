"""Known and generated fields (DESIGN D2): defaults, ``value`` mappings, supplied inputs."""

from typing import Any

import pytest
from pydantic import Field, create_model

from langtree import RunStructure, StructureError, TreeNode
from langtree.structure.commands._flows import resolve_flows
from langtree.structure.planning._known import KnownFields, known_fields, supplied_fields
from tests.structure.planning.each_trees import Row, TaskBook, TaskDigest, TaskLabels, TaskTable
from tests.structure.validated import structure_of


def known_of(*tasks: type[TreeNode], supplied: KnownFields | None = None) -> KnownFields:
    """The known fields of every node of ``tasks``, as the structure stage computes them."""
    registry = structure_of(*tasks).nodes
    flows, diagnostics = resolve_flows(registry)
    assert diagnostics == []
    return known_fields(registry, flows, supplied or {})


def supplied_of(task: type[TreeNode], value: object) -> KnownFields:
    """The fields supplied by ``value`` given as the inputs of ``task``."""
    structure = structure_of(task)
    (tag,) = structure.tasks
    return supplied_fields(structure.nodes, {tag: value})


# ---------------------------------------------------------------------------------------
# Defaults
# ---------------------------------------------------------------------------------------


class Part(TreeNode):
    name: str


def one_field_task(annotation: Any, default: Any) -> type[TreeNode]:
    """``TaskCase`` with one field ``value``; ``...`` as default makes it required."""
    model: type[TreeNode] = create_model("TaskCase", __base__=TreeNode, value=(annotation, default))
    return model


@pytest.mark.parametrize(
    ("annotation", "default"),
    [
        pytest.param(str, "draft", id="string"),
        pytest.param(str, "", id="empty-string"),
        pytest.param(int, 0, id="zero"),
        pytest.param(bool, False, id="false"),
        pytest.param(list[str], [], id="empty-list"),
        pytest.param(list[str], Field(default_factory=list), id="default-factory"),
        pytest.param(list[Part], Field(default_factory=list), id="node-list-factory"),
        pytest.param(str, Field(default="draft", description="A text."), id="field-default"),
    ],
)
def test_a_default_other_than_none_makes_a_field_known(annotation: Any, default: Any) -> None:
    assert known_of(one_field_task(annotation, default))["task.case"] == {"value"}


@pytest.mark.parametrize(
    ("annotation", "default"),
    [
        pytest.param(str, ..., id="required"),
        pytest.param(str | None, ..., id="required-optional"),
        pytest.param(str | None, None, id="default-none"),
        pytest.param(str | None, Field(default=None, description="A text."), id="field-none"),
        pytest.param(Part | None, None, id="node-default-none"),
    ],
)
def test_a_field_without_a_default_or_defaulting_to_none_is_generated(
    annotation: Any, default: Any
) -> None:
    assert known_of(one_field_task(annotation, default))["task.case"] == set()


# ---------------------------------------------------------------------------------------
# Value mappings
# ---------------------------------------------------------------------------------------


# TaskBook sends each chapter's summary to TaskDigest.summaries; TaskLabels sends each label
# to a row of TaskTable.rows (tests/structure/planning/each_trees.py).
def test_a_value_target_is_known() -> None:
    assert known_of(TaskBook, TaskDigest)["task.digest"] == {"summaries"}


class TaskNotes(TreeNode):
    notes: list[str] = Field(
        description="! @each[notes]->task.board@{{prompt.note=notes, outputs.notes=notes}}*"
    )


class TaskBoard(TreeNode):
    """{note}"""

    note: str
    board: str


def test_prompt_and_outputs_targets_leave_fields_generated() -> None:
    assert known_of(TaskNotes, TaskBoard)["task.board"] == set()


class Sheet(TreeNode):
    heading: str
    body: str


class TaskCopy(TreeNode):
    source: Sheet = Field(description="! @all->task.paste@{{value.sheet=source}}")


class TaskPaste(TreeNode):
    sheet: Sheet
    remark: str


def test_a_node_target_makes_its_whole_subtree_known() -> None:
    known = known_of(TaskCopy, TaskPaste)

    assert (known["task.paste"], known["task.paste.sheet"]) == ({"sheet"}, {"heading", "body"})


def test_an_each_creates_the_elements_its_targets_lie_in() -> None:
    known = known_of(TaskLabels, TaskTable)

    assert (known["task.table"], known["task.table.rows"]) == ({"rows"}, {"label"})


class TaskTheme(TreeNode):
    theme: str = Field(description="! @all->task.gallery.rows@{{value.label=theme}}*")


class TaskGallery(TreeNode):
    rows: list[Row]


def test_an_all_broadcast_fills_elements_without_creating_them() -> None:
    known = known_of(TaskTheme, TaskGallery)

    assert (known["task.gallery"], known["task.gallery.rows"]) == (set(), {"label"})


# ---------------------------------------------------------------------------------------
# Supplied inputs
# ---------------------------------------------------------------------------------------


class Section(TreeNode):
    title: str
    summary: str | None = None


class TaskReport(TreeNode):
    topic: str
    sections: list[Section]
    verdict: str | None = None


class TaskShelf(TreeNode):
    rows: list[list[Section]]


def test_a_dict_supplies_its_keys() -> None:
    assert supplied_of(TaskReport, {"topic": "Tides"}) == {"task.report": {"topic"}}


def test_an_instance_supplies_the_fields_that_were_set() -> None:
    report = TaskReport(topic="Tides", sections=[], verdict=None)

    assert supplied_of(TaskReport, report)["task.report"] == {"topic", "sections", "verdict"}


def test_an_instance_does_not_supply_fields_left_at_their_default() -> None:
    report = TaskReport(topic="Tides", sections=[])

    assert supplied_of(TaskReport, report)["task.report"] == {"topic", "sections"}


@pytest.mark.parametrize(
    ("sections", "expected"),
    [
        pytest.param(
            [{"title": "A", "summary": "a"}, {"title": "B", "summary": "b"}],
            {"title", "summary"},
            id="all-supply-both",
        ),
        pytest.param(
            [{"title": "A", "summary": "a"}, {"title": "B"}], {"title"}, id="one-lacks-summary"
        ),
        pytest.param(
            [Section(title="A"), {"title": "B", "summary": "b"}],
            {"title"},
            id="instance-and-dict",
        ),
        pytest.param([], None, id="empty-list"),
    ],
)
def test_a_list_element_field_is_supplied_when_every_element_supplies_it(
    sections: list[object], expected: set[str] | None
) -> None:
    supplied = supplied_of(TaskReport, {"sections": sections})

    assert supplied.get("task.report.sections") == expected


def test_nested_lists_are_flattened_to_their_elements() -> None:
    rows = [[{"title": "A"}, {"title": "B", "summary": "b"}], [{"title": "C"}]]

    assert supplied_of(TaskShelf, {"rows": rows})["task.shelf.rows"] == {"title"}


def test_supplied_fields_become_known() -> None:
    known = known_of(TaskReport, supplied={"task.report": {"topic"}})

    assert known["task.report"] == {"topic"}


@pytest.mark.parametrize(
    ("value", "message", "hint", "class_name"),
    [
        pytest.param(
            ["Tides"],
            "Inputs for 'task.report' must be a dict or a 'TaskReport' instance, not 'list'",
            "pass a dict of field values or a 'TaskReport' instance",
            "TaskReport",
            id="not-a-dict",
        ),
        pytest.param(
            None,
            "Inputs for 'task.report' must be a dict or a 'TaskReport' instance, not None",
            "pass a dict of field values or a 'TaskReport' instance",
            "TaskReport",
            id="none",
        ),
        pytest.param(
            {"topc": "Tides"},
            "Inputs for 'task.report' name 'topc', which is not a field of 'TaskReport'",
            "its fields are 'topic', 'sections', 'verdict'",
            "TaskReport",
            id="unknown-field",
        ),
        pytest.param(
            {"sections": {"title": "A"}},
            "Inputs for 'task.report.sections' must be a list, not 'dict'",
            "pass a list of elements (dicts or node instances)",
            "Section",
            id="not-a-list",
        ),
        pytest.param(
            {"sections": [{"title": "A"}, "B"]},
            "Inputs for 'task.report.sections' must be a dict or a 'Section' instance, not 'str'",
            "pass a dict of field values or a 'Section' instance",
            "Section",
            id="element-not-a-dict",
        ),
    ],
)
def test_malformed_inputs_are_an_error(
    value: object, message: str, hint: str, class_name: str
) -> None:
    with pytest.raises(StructureError) as caught:
        supplied_of(TaskReport, value)

    (diagnostic,) = caught.value.diagnostics
    assert (diagnostic.message, diagnostic.hint, diagnostic.class_name) == (
        message,
        hint,
        class_name,
    )


class TaskTyped(TreeNode):
    count: int = Field(description="How many.")
    label: str = Field(description="A label.")


def test_supplied_values_that_do_not_fit_their_field_are_errors_before_any_call() -> None:
    structure = RunStructure()
    structure.add(TaskTyped)

    with pytest.raises(StructureError) as caught:
        structure.plan({TaskTyped: {"count": "many", "label": 5}})

    assert [(d.message, d.hint) for d in caught.value.diagnostics] == [
        (
            "Input task.typed.count = 'many' does not fit the field (int): Input should be a "
            "valid integer, unable to parse string as an integer",
            "pass a value of type int",
        ),
        (
            "Input task.typed.label = 5 does not fit the field (str): Input should be a valid "
            "string",
            "pass a value of type str",
        ),
    ]
