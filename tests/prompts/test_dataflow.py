"""``@each``/``@all`` carried out on the run's values (DESIGN D6–D8).

Each test adds a source task and a destination task, carries out every command once on
the caller's inputs, and pins what the destination holds.
"""

from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from langtree import ExecutionError, RunStructure, TreeNode
from langtree.prompts._dataflow import EXTERNAL, apply_flow
from langtree.prompts._state import Address, Output, RunState
from langtree.prompts._values import Pending, PendingList
from langtree.structure._config import ConfigInput
from langtree.structure.commands._flows import resolve_flows


def line_of(text: str) -> int:
    """The line of this file where ``text`` first stands."""
    lines = Path(__file__).read_text().splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)


def run(*tasks: type[TreeNode], inputs: dict[str, Any], config: ConfigInput = None) -> RunState:
    """The state after carrying out every command of ``tasks`` once, in order."""
    structure = RunStructure(config)
    for task in tasks:
        structure.add(task)
    structure.validate()
    flows, _ = resolve_flows(structure.nodes)
    state = RunState.start(structure.nodes, inputs)
    for flow in flows:
        apply_flow(state, flow, structure.config.type_mapping)
    return state


# -- @each into value targets ------------------------------------------------------------


class Paragraph(TreeNode):
    text: str = Field(description="The text.")


class Section(TreeNode):
    title: str = Field(default="", description="The title.")
    paragraphs: list[Paragraph] = Field(default=[], description="The paragraphs.")


class Cell(TreeNode):
    text: str = Field(description="The text.")
    note: str = Field(description="A note.")


class Row(TreeNode):
    cells: list[Cell] = Field(description="The cells.")


class TaskGridSource(TreeNode):
    sections: list[Section] = Field(
        default=[],
        description="! @each[sections.paragraphs]->task.sink@{{"
        "value.rows.cells.text=sections.paragraphs.text, value.grouped=sections.paragraphs.text"
        "}}*",
    )


class TaskSink(TreeNode):
    rows: list[Row] = Field(description="The rows.")
    grouped: list[Any] = Field(description="The texts of each section.")


TWO_SECTIONS = {
    "task.grid_source": {
        "sections": [
            {"paragraphs": [{"text": "a"}, {"text": "b"}]},
            {"paragraphs": [{"text": "c"}]},
        ]
    }
}


def test_each_over_two_levels_creates_partial_nodes_at_two_levels() -> None:
    state = run(TaskGridSource, TaskSink, inputs=TWO_SECTIONS)

    assert state.roots["task.sink"]["rows"] == [
        {"cells": [{"text": "a"}, {"text": "b"}]},
        {"cells": [{"text": "c"}]},
    ]


def test_target_with_fewer_levels_gets_a_list_per_element() -> None:
    state = run(TaskGridSource, TaskSink, inputs=TWO_SECTIONS)

    assert state.roots["task.sink"]["grouped"] == [["a", "b"], ["c"]]


def test_created_elements_become_instances() -> None:
    state = run(TaskGridSource, TaskSink, inputs=TWO_SECTIONS)

    assert state.instances("task.sink.rows.cells") == [
        Address("task.sink.rows.cells", (0, 0)),
        Address("task.sink.rows.cells", (0, 1)),
        Address("task.sink.rows.cells", (1, 0)),
    ]


class Person(TreeNode):
    name: str = Field(description="The name.")
    age: int = Field(description="The age.")


class Card(TreeNode):
    name: str = Field(description="The name.")
    age: float = Field(description="The age.")
    greeting: str = Field(description="A greeting.")


class TaskPeople(TreeNode):
    people: list[Person] = Field(
        default=[],
        description="! @each[people]->task.cards@{{value.cards.name=people.name, "
        "value.cards.age=people.age}}*",
    )


class TaskCards(TreeNode):
    cards: list[Card] = Field(default=[], description="One card per person.")


PEOPLE = {"task.people": {"people": [{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}]}}


def test_two_mappings_into_one_list_fill_the_same_elements() -> None:
    state = run(TaskPeople, TaskCards, inputs=PEOPLE)

    assert state.roots["task.cards"]["cards"] == [
        {"name": "Ada", "age": 36.0},
        {"name": "Alan", "age": 41.0},
    ]


def test_values_are_converted_to_the_target_type() -> None:
    state = run(TaskPeople, TaskCards, inputs=PEOPLE)

    ages = [card["age"] for card in state.roots["task.cards"]["cards"]]  # type: ignore[attr-defined]
    assert all(type(age) is float for age in ages)


def test_an_empty_iteration_leaves_an_empty_list() -> None:
    state = run(TaskPeople, TaskCards, inputs={"task.people": {"people": []}})

    assert state.roots["task.cards"]["cards"] == []


def test_a_destination_list_of_another_length_is_an_error() -> None:
    inputs = {**PEOPLE, "task.cards": {"cards": [{"name": "x"}, {"name": "y"}, {"name": "z"}]}}

    with pytest.raises(ExecutionError) as raised:
        run(TaskPeople, TaskCards, inputs=inputs)

    assert str(raised.value) == (
        "Length mismatch: the @each over 'people' sends 2 value(s) to 'value.cards.name', "
        "but 'cards' already holds 3 element(s)\n"
        "    ! @each[people]->task.cards@{{value.cards.name=people.name, "
        "value.cards.age=people.age}}*\n"
        "                                  ^~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        f"  in TaskPeople.people ({__file__}:{line_of('! @each[people]->task.cards')})\n"
        "  hint: leave 'cards' empty for the command to fill, or give it one element per "
        "iteration"
    )


def test_a_destination_list_of_the_same_length_is_filled_in() -> None:
    inputs = {**PEOPLE, "task.cards": {"cards": [{"greeting": "Hi"}, {"greeting": "Yo"}]}}

    state = run(TaskPeople, TaskCards, inputs=inputs)

    assert state.roots["task.cards"]["cards"] == [
        {"greeting": "Hi", "name": "Ada", "age": 36.0},
        {"greeting": "Yo", "name": "Alan", "age": 41.0},
    ]


class TaskScores(TreeNode):
    scores: list[str] = Field(
        default=[], description="! @each[scores]->task.totals@{{value.totals=scores}}*"
    )


class TaskTotals(TreeNode):
    totals: list[int] = Field(description="The totals.")


def test_a_value_that_does_not_convert_is_an_error() -> None:
    inputs = {"task.scores": {"scores": ["3", "many"]}}

    with pytest.raises(ExecutionError) as raised:
        run(TaskScores, TaskTotals, inputs=inputs, config={"validation_strategy": "permissive"})

    assert str(raised.value) == (
        "'value.totals' cannot take the value sent: cannot convert 'many' to int: "
        "it is not an integer\n"
        "    "
        '        default=[], description="! @each[scores]->task.totals@{{value.totals=scores}}*"\n'
        "                                                                    ^~~~~~~~~~~~~~~~~~~\n"
        f"  in TaskScores.scores ({__file__}:{line_of('@each[scores]->task.totals')})\n"
        "  hint: check the value of the source, or the type of 'totals'"
    )


def test_strings_are_parsed_when_the_strategy_allows_it() -> None:
    inputs = {"task.scores": {"scores": ["3", "4"]}}

    state = run(TaskScores, TaskTotals, inputs=inputs, config={"validation_strategy": "permissive"})

    assert state.roots["task.totals"]["totals"] == [3, 4]


# -- @all ------------------------------------------------------------------------------


class Item(TreeNode):
    label: str = Field(description="The label.")
    topic: str = Field(description="The topic.")


class TaskTopic(TreeNode):
    topic: str = Field(
        description="! @all->task.shelf@{{value.title=topic}}\n"
        "! @all->task.shelf@{{value.items.topic=topic}}*"
    )


class TaskShelf(TreeNode):
    title: str = Field(description="The title.")
    items: list[Item] = Field(default=[], description="The items.")


def test_all_writes_one_value_to_one_field() -> None:
    state = run(TaskTopic, TaskShelf, inputs={"task.topic": {"topic": "Tides"}})

    assert state.roots["task.shelf"]["title"] == "Tides"


def test_all_with_star_broadcasts_into_existing_elements() -> None:
    inputs = {"task.topic": {"topic": "Tides"}, "task.shelf": {"items": [{}, {"label": "b"}]}}

    state = run(TaskTopic, TaskShelf, inputs=inputs)

    assert state.roots["task.shelf"]["items"] == [
        {"topic": "Tides"},
        {"label": "b", "topic": "Tides"},
    ]


def test_all_with_star_creates_no_elements() -> None:
    state = run(TaskTopic, TaskShelf, inputs={"task.topic": {"topic": "Tides"}})

    assert state.roots["task.shelf"]["items"] == []


def test_all_with_star_fills_the_element_of_a_list_still_to_come() -> None:
    structure = RunStructure()
    structure.add(TaskTopic)
    structure.add(TaskShelf)
    flows, _ = resolve_flows(structure.nodes)
    state = RunState.start(structure.nodes, {"task.topic": {"topic": "Tides"}})
    items = PendingList("task.shelf:items")
    state.roots["task.shelf"]["items"] = items

    for flow in flows:
        apply_flow(state, flow, structure.config.type_mapping)

    assert items.element == {"topic": "Tides"}


def test_written_values_are_copies() -> None:
    class TaskTags(TreeNode):
        tags: list[str] = Field(description="! @all->task.copy@{{value.tags=tags}}")

    class TaskCopy(TreeNode):
        tags: list[str] = Field(description="The tags.")

    state = run(TaskTags, TaskCopy, inputs={"task.tags": {"tags": ["a"]}})
    state.roots["task.copy"]["tags"].append("b")  # type: ignore[attr-defined]

    assert state.roots["task.tags"]["tags"] == ["a"]


# -- prompt, outputs and prompt.external targets ------------------------------------------


class TaskNames(TreeNode):
    """! @all->prompt.external@{{context=names}}"""

    names: list[str] = Field(
        default=[],
        description="! @each[names]->task.board@{{prompt.listing=names, outputs.entries=names}}*\n"
        "! @all->task.board@{{prompt.listing=names}}",
    )


class TaskBoard(TreeNode):
    """Names: {listing_1}; again {listing_2}."""

    board: str = Field(description="The board.")


NAMES = {"task.names": {"names": ["Ada", "Alan"]}}


def test_each_sends_prompt_targets_the_list_of_per_iteration_values() -> None:
    state = run(TaskNames, TaskBoard, inputs=NAMES)

    assert state.prompt_values[(Address("task.board"), "listing")] == [
        ["Ada", "Alan"],
        ["Ada", "Alan"],
    ]


def test_outputs_targets_become_context_entries() -> None:
    state = run(TaskNames, TaskBoard, inputs=NAMES)

    assert state.outputs == {
        Address("task.board"): [Output(name="entries", value=["Ada", "Alan"], field=None)]
    }


def test_prompt_external_receives_variables() -> None:
    state = run(TaskNames, TaskBoard, inputs=NAMES)

    assert state.prompt_values[(EXTERNAL, "context")] == [["Ada", "Alan"]]


class TaskPlan(TreeNode):
    """! @sequential"""

    steps: list[str] = Field(
        default=[],
        description="! @each[steps]->verdict@{{outputs.step_list=steps}}*",
    )
    summary: str = Field(description="A summary.")
    verdict: str = Field(description="The verdict.")


def test_outputs_to_a_leaf_destination_belong_to_that_field() -> None:
    state = run(TaskPlan, inputs={"task.plan": {"steps": ["a"]}})

    assert state.outputs == {
        Address("task.plan"): [Output(name="step_list", value=["a"], field="verdict")]
    }


class Remark(TreeNode):
    """About {point}."""

    text: str = Field(description="The text.")


class Note(TreeNode):
    """! @each[points]->remarks@{{prompt.point=points}}*"""

    points: list[str] = Field(default=[], description="The points.")
    remarks: list[Remark] = Field(default=[], description="The remarks.")


class TaskNotes(TreeNode):
    notes: list[Note] = Field(default=[], description="The notes.")


def test_relative_destinations_receive_only_from_their_own_instance() -> None:
    inputs = {
        "task.notes": {
            "notes": [{"points": ["x"], "remarks": [{}]}, {"points": ["y", "z"], "remarks": [{}]}]
        }
    }

    state = run(TaskNotes, inputs=inputs)

    remark = "task.notes.notes.remarks"
    assert state.prompt_values == {
        (Address(remark, (0, 0)), "point"): [["x"]],
        (Address(remark, (1, 0)), "point"): [["y", "z"]],
    }


# -- values not known yet ----------------------------------------------------------------


def test_pending_values_travel_unconverted() -> None:
    state = run(TaskTopic, TaskShelf, inputs={"task.topic": {"topic": Pending("task.topic:topic")}})

    assert state.roots["task.shelf"]["title"] == Pending("task.topic:topic")


def test_each_over_a_pending_list_writes_a_pending_list() -> None:
    marker = Pending("task.people:people")

    state = run(TaskPeople, TaskCards, inputs={"task.people": {"people": marker}})

    cards = state.roots["task.cards"]["cards"]
    assert isinstance(cards, PendingList)
    assert cards.step_id == "task.people:people"
    assert cards.element == {"name": marker, "age": marker}
    assert state.instances("task.cards.cards") == [Address("task.cards.cards", (None,))]


def test_each_over_a_pending_list_sends_the_marker_to_prompt_targets() -> None:
    marker = Pending("task.names:names")

    state = run(TaskNames, TaskBoard, inputs={"task.names": {"names": marker}})

    assert state.prompt_values[(Address("task.board"), "listing")] == [marker, marker]
    assert state.outputs[Address("task.board")] == [Output(name="entries", value=marker)]


def test_pending_elements_inside_a_known_list_stay_pending() -> None:
    marker = Pending("task.grid_source.sections:paragraphs")
    inputs = {
        "task.grid_source": {"sections": [{"paragraphs": [{"text": "a"}]}, {"paragraphs": marker}]}
    }

    state = run(TaskGridSource, TaskSink, inputs=inputs)

    assert state.roots["task.sink"]["grouped"] == [["a"], marker]
    rows = state.roots["task.sink"]["rows"]
    assert isinstance(rows, list)
    assert rows[0] == {"cells": [{"text": "a"}]}
    assert isinstance(rows[1]["cells"], PendingList)
    assert rows[1]["cells"].element == {"text": marker}
