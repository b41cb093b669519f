"""How errors and diagnostics render."""

import builtins
import importlib
import pickle
import pkgutil
import re

import pytest
from report_diagnostic import REPORT_DIAGNOSTIC

import langtree
import langtree.errors
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


@pytest.mark.parametrize(
    "error",
    [
        langtree.JournalWriteError(
            "The cache 'a.sqlite' could not be written (disk full): the run stopped",
            kind="cache",
            read_only=False,
            hint="free space",
        ),
        langtree.MissingVariablesError(["audience", "tone"], ["task.greet"]),
    ],
    ids=lambda error: type(error).__name__,
)
def test_an_error_with_its_parts_survives_pickling(error: langtree.ExecutionError) -> None:
    """The parts the command line words its hints from cross a process (a Ray worker's
    row) with the message."""
    copy = pickle.loads(pickle.dumps(error))

    assert (type(copy), str(copy), vars(copy)) == (type(error), str(error), vars(error))


def test_diagnostic_render() -> None:
    assert REPORT_DIAGNOSTIC.render() == (
        "error: Destination 'task.missing' does not exist\n"
        "    ! @all->task.missing@{{prompt.x=sections}}\n"
        "            ^" + "~" * 11 + "\n"
        "  in TaskReport.sections (report.py:12)\n"
        "  hint: add the task 'TaskMissing', or fix the path"
    )


def test_diagnostic_render_compiler_style() -> None:
    assert REPORT_DIAGNOSTIC.render_compiler() == (
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


def package_exceptions() -> dict[str, type[BaseException]]:
    """Every public exception class the package defines, by name, from all its modules
    (but ``__main__``, which runs the CLI). Private ones never leave their module."""
    found = {}
    for module in pkgutil.walk_packages(langtree.__path__, "langtree."):
        if module.name.endswith(".__main__"):
            continue
        for name, value in vars(importlib.import_module(module.name)).items():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__.startswith("langtree.")
                and not name.startswith("_")
            ):
                found[name] = value
    return found


# One line of the tree: its branch, the class, and the builtin it also subclasses.
TREE_LINE = re.compile(r"^(?P<branch>[ ├└─│]*)(?P<name>\w+)(?: \(also (?P<also>\w+)\))?")


def drawn_tree() -> list[tuple[str, str | None, str | None]]:
    """The tree in ``langtree.errors``' docstring: each class, its parent (``None`` for a
    root) and the builtin it is drawn as also subclassing."""
    assert langtree.errors.__doc__ is not None
    block = re.search(r"```text\n(.*?)```", langtree.errors.__doc__, re.DOTALL)
    assert block is not None
    drawn = []
    stack: list[tuple[int, str]] = []
    for line in block[1].splitlines():
        match = TREE_LINE.match(line)
        assert match is not None, line
        depth = len(match["branch"])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        drawn.append((match["name"], stack[-1][1] if stack else None, match["also"]))
        stack.append((depth, match["name"]))
    return drawn


def test_the_exception_tree_names_every_exception_class() -> None:
    names = [name for name, _, _ in drawn_tree() if not hasattr(builtins, name)]

    assert sorted(names) == sorted(package_exceptions())


def test_the_exception_tree_draws_each_class_under_its_bases() -> None:
    exceptions = package_exceptions()
    misdrawn = [
        name
        for name, parent, also in drawn_tree()
        if parent is not None
        and not (
            issubclass(exceptions[name], exceptions.get(parent) or getattr(builtins, parent))
            and (also is None or issubclass(exceptions[name], getattr(builtins, also)))
        )
    ]

    assert misdrawn == []
