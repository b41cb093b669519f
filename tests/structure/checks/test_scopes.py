"""Paths that are valid but unusual are warnings, returned by ``validate()`` (docs/structure.md,
"Warnings"; the spec's "Warning Patterns" and "Multiple Source Handling").

An unknown scope can never resolve in the destination, so it is reported as an error that
says so (see ``test_unknown_scope_is_an_error_that_names_the_scopes``).
"""

from pathlib import Path
from typing import Any

import pytest
from pydantic import Field, create_model

from langtree import TreeNode
from langtree.errors import Diagnostic
from tests.structure.validated import refused, structure_of

SHORT_HINT = "descriptive names make paths easier to follow"
DEEP_HINT = "consider sending a whole node instead of a deeply nested field"
REPEATED_HINT = (
    "a field holds one value: keep one 'value' mapping into it, or use 'outputs' to collect several"
)


def warnings(*tasks: type[TreeNode]) -> list[tuple[str | None, int, str, str]]:
    """The warnings ``validate()`` returns: (field, column, message, hint)."""
    return [(d.field_name, d.column, d.message, d.hint) for d in structure_of(*tasks).validate()]


def source(command: str, field: str = "b") -> type[TreeNode]:
    """``TaskSource`` with ``command`` in the description of ``field``."""
    definitions: dict[str, Any] = {
        "b": (str, Field(default="", description=command if field == "b" else None)),
        "items": (list[Item], Field(default=[], description=command if field == "items" else None)),
    }
    return create_model("TaskSource", __base__=TreeNode, **definitions)


def column(command: str, snippet: str) -> int:
    assert snippet in command, snippet
    return command.index(snippet) + 1


class Item(TreeNode):
    text: str = ""


class P(TreeNode):
    a: str = ""


class L5(TreeNode):
    text: str = ""


class L4(TreeNode):
    l5: L5 = L5()


class L3(TreeNode):
    l4: L4 = L4()


class L2(TreeNode):
    l3: L3 = L3()


class L1(TreeNode):
    l2: L2 = L2()


class TaskTarget(TreeNode):
    p: P = P()
    l1: L1 = L1()
    title: str = ""
    titles: list[str] = Field(default=[])
    # Generated, so that what prompt and outputs targets send reaches a step's prompt.
    verdict: str = Field(description="The verdict.")


# -- one-character components ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "field", "expected"),
    [
        pytest.param(
            "! @all->task.target@{{p.a=b}}",
            "b",
            [
                ("p.a=b", "Path 'b' has one-character component(s) 'b'"),
                ("p.a=b", "Path 'p.a' has one-character component(s) 'p', 'a'"),
            ],
            id="spec-example-target-and-source",
        ),
        pytest.param(
            "! @all->task.target.p@{{value.a=b}}",
            "b",
            [
                ("task.target.p", "Path 'task.target.p' has one-character component(s) 'p'"),
                ("value.a=b", "Path 'b' has one-character component(s) 'b'"),
                ("value.a=b", "Path 'value.a' has one-character component(s) 'a'"),
            ],
            id="destination",
        ),
        pytest.param(
            "! @each[items]->task.target@{{value.titles=items.text,prompt.x=items}}*",
            "items",
            [("prompt.x", "Path 'prompt.x' has one-character component(s) 'x'")],
            id="prompt-name",
        ),
    ],
)
def test_one_character_components(
    command: str, field: str, expected: list[tuple[str, str]]
) -> None:
    assert warnings(source(command, field), TaskTarget) == [
        (field, column(command, snippet), message, SHORT_HINT) for snippet, message in expected
    ]


def test_no_warning_for_longer_names() -> None:
    command = "! @each[items]->task.target@{{value.titles=items.text}}*"

    assert warnings(source(command, "items"), TaskTarget) == []


# -- deep paths --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "snippet", "path"),
    [
        pytest.param(
            "! @all->task.target@{{value.l1.l2.l3.l4.l5.text=items}}*",
            "value.l1",
            "value.l1.l2.l3.l4.l5.text",
            id="scoped-target",
        ),
        pytest.param(
            "! @all->task.target.l1.l2.l3.l4.l5@{{value.text=items}}*",
            "task.target",
            "task.target.l1.l2.l3.l4.l5",
            id="destination",
        ),
    ],
)
def test_paths_of_seven_components_are_deep(command: str, snippet: str, path: str) -> None:
    found = warnings(source(command, "items"), TaskTarget)

    assert found == [
        ("items", column(command, snippet), f"Path {path!r} is 7 components deep", DEEP_HINT)
    ]


def test_a_path_of_six_components_is_not_deep() -> None:
    command = "! @all->task.target@{{l1.l2.l3.l4.l5.text=items}}*"

    assert warnings(source(command, "items"), TaskTarget) == []


# -- several value sources ---------------------------------------------------------------------


class Sub(TreeNode):
    name: str = ""


class TaskDest(TreeNode):
    title: str = ""
    sub: Sub = Sub()


class TaskTwoCommands(TreeNode):
    first: str = Field(default="", description="! @all->task.dest@{{value.title=first}}")
    second: str = Field(default="", description="! @all->task.dest@{{value.title=second}}")


class TaskTwoPaths(TreeNode):
    first: str = Field(default="", description="! @all->task.dest@{{value.sub.name=first}}")
    second: str = Field(default="", description="! @all->task.dest.sub@{{value.name=second}}")


LINES = Path(__file__).read_text().splitlines()


def where(snippet: str, owner: str) -> str:
    """``owner (file:line)`` for the first line of this file holding ``snippet``."""
    line = next(number for number, text in enumerate(LINES, 1) if snippet in text)
    return f"{owner} ({__file__}:{line})"


def file_column(command: str, snippet: str) -> int:
    """The 1-based column of ``snippet`` in this file, where ``command`` is a description."""
    text = next(text for text in LINES if f'description="{command}"' in text)
    return text.index(command) + column(command, snippet)


@pytest.mark.parametrize(
    ("task", "first", "second", "snippet", "message"),
    [
        pytest.param(
            TaskTwoCommands,
            "value.title=first",
            "! @all->task.dest@{{value.title=second}}",
            "value.title",
            "Field 'title' of 'task.dest' already receives a value from 'value.title=first' "
            "in {first}",
            id="by-two-commands",
        ),
        pytest.param(
            TaskTwoPaths,
            "value.sub.name=first",
            "! @all->task.dest.sub@{{value.name=second}}",
            "value.name",
            "Field 'name' of 'task.dest.sub' already receives a value from "
            "'value.sub.name=first' in {first}",
            id="through-two-paths",
        ),
    ],
)
def test_a_field_written_twice_warns_at_the_second_source(
    task: type[TreeNode], first: str, second: str, snippet: str, message: str
) -> None:
    """``message`` names where the first source stands as ``{first}``."""
    origin = where(first, f"{task.__name__}.first")

    assert warnings(task, TaskDest) == [
        ("second", file_column(second, snippet), message.format(first=origin), REPEATED_HINT)
    ]


def test_a_field_written_twice_by_one_command() -> None:
    command = "! @each[items]->task.target@{{value.titles=items.text,value.titles=items.text}}*"

    assert warnings(source(command, "items"), TaskTarget) == [
        (
            "items",
            column(command, "value.titles=items.text}}"),
            "Field 'titles' of 'task.target' already receives a value from "
            "'value.titles=items.text' in this command",
            REPEATED_HINT,
        )
    ]


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(
            "! @each[items]->task.target@{{prompt.texts=items.text,prompt.texts=items}}*",
            id="prompt-sources-are-numbered",
        ),
        pytest.param(
            "! @each[items]->task.target@{{outputs.texts=items.text,outputs.texts=items}}*",
            id="outputs-sources-are-collected",
        ),
        pytest.param(
            "! @each[items]->task.target@{{value.titles=items.text,prompt.titles=items}}*",
            id="value-and-prompt-of-one-name",
        ),
    ],
)
def test_several_prompt_or_outputs_sources_are_expected(command: str) -> None:
    assert warnings(source(command, "items"), TaskTarget) == []


# -- unknown scopes ----------------------------------------------------------------------------


def test_unknown_scope_is_an_error_that_names_the_scopes() -> None:
    found = refused(source("! @all->task.target@{{custom.field=b}}"), TaskTarget)

    assert [(d.field_name, d.column, d.message, d.hint) for d in found] == [
        (
            "b",
            23,
            "Target 'custom.field' starts with 'custom', which is neither a scope nor a field "
            "of 'TaskTarget' (task.target)",
            "start it with one of the scopes outputs, prompt, task, value, or with one of the "
            "fields 'p', 'l1', 'title', 'titles', 'verdict'",
        )
    ]


def test_a_prefix_that_is_a_field_of_the_destination_is_a_field_path() -> None:
    class Custom(TreeNode):
        field: str = ""

    class TaskCustom(TreeNode):
        custom: Custom = Custom()

    command = "! @all->task.custom@{{custom.field=b}}"

    assert warnings(source(command), TaskCustom) == [
        (
            "b",
            column(command, "custom.field"),
            "Path 'b' has one-character component(s) 'b'",
            SHORT_HINT,
        )
    ]


# -- how warnings are reported -----------------------------------------------------------------


class TaskWarned(TreeNode):
    x: str = Field(default="", description="! @all->task.dest@{{value.title=x}}")


def test_validate_returns_warnings_with_their_location() -> None:
    line = next(n for n, text in enumerate(LINES, 1) if "value.title=x}}" in text)
    command = "! @all->task.dest@{{value.title=x}}"
    source_line = f'    x: str = Field(default="", description="{command}")'

    assert structure_of(TaskWarned, TaskDest).validate() == (
        Diagnostic(
            severity="warning",
            message="Path 'x' has one-character component(s) 'x'",
            hint=SHORT_HINT,
            class_name="TaskWarned",
            field_name="x",
            file=__file__,
            line=line,
            column=source_line.index("value.title=x") + 1,
            source_line=source_line,
            length=len("value.title=x"),
        ),
    )


def test_warnings_are_not_raised_with_errors() -> None:
    class TaskMixed(TreeNode):
        x: str = Field(default="", description="! @all->task.dest@{{value.missing=x}}")

    assert [d.severity for d in refused(TaskMixed, TaskDest)] == ["error"]
