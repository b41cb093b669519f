"""How errors and diagnostics render."""

import pickle

import pytest

from langtree import CommandParseError, parse_command
from langtree.errors import Diagnostic, render_marker


@pytest.mark.parametrize(
    ("column", "length", "marker"),
    [
        pytest.param(1, 1, "^", id="first-column"),
        pytest.param(3, 4, "  ^~~~", id="span"),
        pytest.param(5, 99, "    ^~", id="clipped-at-line-end"),
        pytest.param(7, 3, "      ^", id="past-the-end"),
    ],
)
def test_render_marker(column: int, length: int, marker: str) -> None:
    assert render_marker("abcdef", column, length) == f"    abcdef\n    {marker}"


def test_parse_error_with_location_names_it() -> None:
    with pytest.raises(CommandParseError) as caught:
        parse_command("! @each[items]->task@{{value.item=items}}")

    located = caught.value.with_location("TaskReport.items (report.py:12)")

    assert str(located) == (
        "@each commands require '*' multiplicity indicator\n"
        "    ! @each[items]->task@{{value.item=items}}\n"
        "                                           ^~\n"
        "  at TaskReport.items (report.py:12), line 1, column 40\n"
        "  hint: add '*' right after '}}'"
    )


def test_parse_error_survives_pickling() -> None:
    with pytest.raises(CommandParseError) as caught:
        parse_command("! @ each[items]->task@{{value.item=items}}*")

    copy = pickle.loads(pickle.dumps(caught.value))

    assert (copy.message, copy.line, copy.column, copy.hint, str(copy)) == (
        caught.value.message,
        caught.value.line,
        caught.value.column,
        caught.value.hint,
        str(caught.value),
    )


DIAGNOSTIC = Diagnostic(
    severity="error",
    message="Destination 'task.missing' does not exist",
    hint="add the task 'TaskMissing', or fix the path",
    class_name="TaskReport",
    field_name="sections",
    file="report.py",
    line=12,
    column=9,
    source_line="! @all->task.missing@{{prompt.x=sections}}",
    length=12,
)


def test_diagnostic_render() -> None:
    assert DIAGNOSTIC.render() == (
        "error: Destination 'task.missing' does not exist\n"
        "    ! @all->task.missing@{{prompt.x=sections}}\n"
        "            ^" + "~" * 11 + "\n"
        "  in TaskReport.sections (report.py:12)\n"
        "  hint: add the task 'TaskMissing', or fix the path"
    )


def test_diagnostic_render_compiler_style() -> None:
    assert DIAGNOSTIC.render_compiler() == (
        "report.py:12:9: error: Destination 'task.missing' does not exist "
        "[TaskReport.sections]\n"
        "    ! @all->task.missing@{{prompt.x=sections}}\n"
        "            ^" + "~" * 11 + "\n"
        "    hint: add the task 'TaskMissing', or fix the path"
    )


def test_diagnostic_without_source_or_file() -> None:
    bare = Diagnostic(severity="warning", message="Unknown scope 'custom'", hint="use prompt")

    assert bare.render() == "warning: Unknown scope 'custom'\n  hint: use prompt"
    assert bare.where == ""
