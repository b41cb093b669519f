"""A command written after other text on a line is prompt text; ``validate()`` warns.

What looks like a command is pinned in tests/dsl/test_extraction.py; here, the warning
each one gives, where it points and how it renders.
"""

from pathlib import Path

import pytest
from pydantic import Field

from langtree import RunStructure, StructureError, TreeNode

HINT = "put the command on a line of its own"
THIS_FILE = str(Path(__file__))


def warnings_of(*tasks: type[TreeNode]) -> list[tuple[str | None, int | None, int, str]]:
    """The warnings ``validate()`` returns: (field, line, column, message)."""
    structure = RunStructure()
    for task in tasks:
        structure.add(task)
    return [(d.field_name, d.line, d.column, d.message) for d in structure.validate()]


def message(command: str) -> str:
    return f"{command!r} follows other text on its line, so it is prompt text, not a command"


def line_of(text: str) -> int:
    """The line of this file that holds ``text``."""
    return next(
        number
        for number, line in enumerate(Path(__file__).read_text().splitlines(), start=1)
        if text in line
    )


class TaskSummary(TreeNode):
    """Summarise the report. ! @sequential

    Keep it short. Note: ! llm("fast")
    """

    summary: str = Field(default="", description="The summary. ! @all->task.summary@{{x=y}}")
    verdict: str = Field(default="", description="Great work! Now write the verdict.")


def test_each_stray_command_is_a_warning_at_its_bang() -> None:
    first = line_of('"""Summarise the report. ! @sequential')

    assert warnings_of(TaskSummary) == [
        (
            None,
            first,
            30,
            message("! @sequential"),
        ),
        (
            None,
            first + 2,
            26,
            message('! llm("fast")'),
        ),
        (
            "summary",
            line_of("The summary. ! @all"),
            64,
            message("! @all->task.summary@{{x=y}}"),
        ),
    ]


def test_warning_renders_the_line_with_a_marker_and_the_hint() -> None:
    structure = RunStructure()
    structure.add(TaskSummary)

    rendered = [warning.render() for warning in structure.validate()]

    assert rendered[2] == (
        "warning: '! @all->task.summary@{{x=y}}' follows other text on its line, so it is "
        "prompt text, not a command\n"
        '        summary: str = Field(default="", description="The summary. '
        '! @all->task.summary@{{x=y}}")\n'
        "    " + " " * 63 + "^" + "~" * 27 + "\n"
        f"  in TaskSummary.summary ({THIS_FILE}:{line_of('The summary. ! @all')})\n"
        f"  hint: {HINT}"
    )


class TaskLong(TreeNode):
    verdict: str = Field(
        default="",
        description="Verdict: ! @each[items]->task.long_destination_name@{{value.items=items}}*",
    )


def test_a_long_command_is_shortened_in_the_message() -> None:
    assert [text for *_, text in warnings_of(TaskLong)] == [
        message("! @each[items]->task.long_destination...")
    ]


class TaskProse(TreeNode):
    """Great! Summarise the report; check that a != b. Work together! together we stand.

    ! @parallel
    """

    summary: str = Field(default="", description="Wow! This is the summary.")


def test_prose_with_exclamation_marks_gives_no_warning() -> None:
    assert warnings_of(TaskProse) == []


class TaskBroken(TreeNode):
    """Summarise. ! @parallel"""

    summary: str = Field(description="! @all->task.nowhere@{{prompt.text=summary}}")


def test_warnings_stand_beside_errors_without_hiding_them() -> None:
    structure = RunStructure()
    structure.add(TaskBroken)

    with pytest.raises(StructureError) as caught:
        structure.validate()

    assert [d.severity for d in caught.value.diagnostics] == ["error"]
    assert [d.hint for d in structure.warnings()] == [HINT]
