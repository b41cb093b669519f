"""How values appear in prompts (DESIGN D10: strings as-is, numbers as text, the rest JSON)."""

import datetime
from decimal import Decimal
from enum import Enum
from pathlib import PurePosixPath

import pytest
from pydantic import BaseModel, Field

from langtree import ExecutionError, TreeNode
from langtree.prompts._values import (
    Pending,
    PendingList,
    contains_pending,
    pending_list,
    render_value,
)


class Colour(Enum):
    RED = "red"
    BLUE = "blue"


class Level(Enum):
    LOW = 1
    HIGH = 2


class Point(BaseModel):
    x: int
    y: int = 0


class Paragraph(TreeNode):
    text: str


class Section(TreeNode):
    title: str
    paragraphs: list[Paragraph] = Field(default=[])
    colour: Colour = Colour.RED


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("as written  \n# not json", "as written  \n# not json", id="str"),
        pytest.param("", "", id="empty-str"),
        pytest.param(3, "3", id="int"),
        pytest.param(2.5, "2.5", id="float"),
        pytest.param(True, "true", id="true"),
        pytest.param(False, "false", id="false"),
        pytest.param(None, "null", id="none"),
        pytest.param(Colour.BLUE, "blue", id="str-enum"),
        pytest.param(Level.HIGH, "2", id="int-enum"),
        pytest.param(Decimal("1.50"), "1.50", id="decimal"),
        pytest.param(datetime.date(2024, 5, 1), "2024-05-01", id="date"),
        pytest.param(PurePosixPath("/tmp/x"), "/tmp/x", id="path"),
        pytest.param(Pending("task.a:b"), "[pending: produced by step task.a:b]", id="pending"),
        pytest.param(
            pending_list("task.a:items", 1),
            "[pending: produced by step task.a:items]",
            id="pending-list",
        ),
    ],
)
def test_scalars(value: object, expected: str) -> None:
    assert render_value(value) == expected


def test_lists_and_dicts_are_indented_json() -> None:
    value = {"names": ["Ada", "Grace"], "count": 2, "nested": {"ok": True, "none": None}}

    assert render_value(value) == (
        "{\n"
        '  "names": [\n'
        '    "Ada",\n'
        '    "Grace"\n'
        "  ],\n"
        '  "count": 2,\n'
        '  "nested": {\n'
        '    "ok": true,\n'
        '    "none": null\n'
        "  }\n"
        "}"
    )


def test_empty_list() -> None:
    assert render_value([]) == "[]"


def test_non_ascii_text_is_kept() -> None:
    assert render_value(["café", "日本"]) == '[\n  "café",\n  "日本"\n]'


def test_nested_models_become_json_with_enum_values() -> None:
    section = Section(title="Intro", paragraphs=[Paragraph(text="Hi.")])

    assert render_value(section) == (
        "{\n"
        '  "title": "Intro",\n'
        '  "paragraphs": [\n'
        "    {\n"
        '      "text": "Hi."\n'
        "    }\n"
        "  ],\n"
        '  "colour": "red"\n'
        "}"
    )


def test_models_and_enums_inside_containers() -> None:
    assert render_value([Point(x=1), Colour.RED, Level.LOW]) == (
        '[\n  {\n    "x": 1,\n    "y": 0\n  },\n  "red",\n  1\n]'
    )


def test_pending_inside_containers_shows_its_step() -> None:
    value = {"summary": Pending("task.a:summary"), "items": [Pending("task.a:items")]}

    assert render_value(value) == (
        "{\n"
        '  "summary": "[pending: produced by step task.a:summary]",\n'
        '  "items": [\n'
        '    "[pending: produced by step task.a:items]"\n'
        "  ]\n"
        "}"
    )


def test_sets_render_sorted_so_the_text_is_deterministic() -> None:
    assert render_value({"tags": {"b", "c", "a"}}) == (
        '{\n  "tags": [\n    "a",\n    "b",\n    "c"\n  ]\n}'
    )


def test_tuples_render_as_lists() -> None:
    assert render_value((1, "a")) == '[\n  1,\n  "a"\n]'


def test_pending_list_holds_one_element_per_level() -> None:
    nested = pending_list("task.a:grid", 2)

    assert isinstance(nested.element, PendingList)
    assert nested.element.element == {}
    assert nested.step_id == nested.element.step_id == "task.a:grid"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(Pending("s"), True, id="pending"),
        pytest.param(pending_list("s", 1), True, id="pending-list"),
        pytest.param([1, [2, Pending("s")]], True, id="nested-list"),
        pytest.param({"a": {"b": Pending("s")}}, True, id="nested-dict"),
        pytest.param(("x", Pending("s")), True, id="tuple"),
        pytest.param({"a": [1, 2], "b": "text"}, False, id="plain"),
        pytest.param(None, False, id="none"),
    ],
)
def test_contains_pending(value: object, expected: bool) -> None:
    assert contains_pending(value) is expected


def nested(depth: int, leaf: object) -> object:
    """``{"a": [{"a": [... leaf ...]}]}``: ``depth`` levels of dicts and lists."""
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"a": value}
    return value


def test_values_nested_thousands_of_levels_deep_render_as_json() -> None:
    depth = 3000
    value: object = "end"
    for _ in range(depth):
        value = {"a": value}
    opening = ["{"] + ["  " * level + '"a": {' for level in range(1, depth)]
    closing = ["  " * level + "}" for level in reversed(range(depth))]

    text = render_value(value)

    assert text == "\n".join([*opening, "  " * depth + '"a": "end"', *closing])


def test_contains_pending_deep_inside_a_value() -> None:
    assert contains_pending(nested(5000, Pending("s"))) is True
    assert contains_pending(nested(5000, "plain")) is False


def test_a_value_that_contains_itself_is_an_error() -> None:
    looped: dict[str, object] = {}
    looped["self"] = [looped]

    with pytest.raises(ExecutionError) as raised:
        render_value(looped)

    assert str(raised.value) == (
        "A value nests deeper than 10,000 levels: LangTree takes it to contain itself\n"
        "  hint: pass values without cycles (a list that holds itself, say)"
    )
