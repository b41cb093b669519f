"""The call-style commands are one table: each command is one module of
`langtree.structure.call_commands`, declaring its signature and its kind, and no other
module names a command by a string."""

from __future__ import annotations

import ast
import importlib
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import Field

import langtree.structure.call_commands as call_commands
from langtree import CommandParseError, TreeNode, parse_command
from langtree.dsl._commands import ExecutionCommand
from langtree.structure.call_commands._kind import CommandKind
from langtree.structure.call_commands._table import (
    COMMAND_MODULE_SUFFIX,
    call_signatures,
    command_kinds,
    command_table,
)
from tests.structure.validated import diagnostics

PACKAGE = Path(__file__).parents[3] / "langtree"

TABLE = ("structure/call_commands/",)
"""The commands' own modules: the only place a command's name is written."""

HOMONYMS = Counter(
    {
        # What wrote a value (the caller's input, a transform step): a provenance kind.
        ("_provenance.py", "input"): 2,
        ("_provenance.py", "transform"): 2,
        # Keys of a step's saved data, and the noun of a count.
        ("_plan.py", "resample"): 1,
        ("_plan.py", "transform"): 1,
        ("_result_display.py", "transform"): 1,
        # Input tokens, as OpenTelemetry names them.
        ("_otel.py", "input"): 1,
    }
)
"""Strings that spell a command's name and mean something else, by module file name (the
folders a module lies in may change; every module is private, so its name starts with an
underscore)."""


def name_literals() -> Counter[tuple[str, str]]:
    """Each string constant equal to a command's name outside the table, by module file
    name."""
    found: Counter[tuple[str, str]] = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module.startswith(TABLE):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in call_signatures():
                found[path.name, node.value] += 1
    return found


def test_no_module_outside_the_table_names_a_command() -> None:
    assert name_literals() == HOMONYMS


def test_the_table_is_every_command_module_in_the_order_of_their_names() -> None:
    modules = sorted(
        path.stem.removeprefix("_").removesuffix(COMMAND_MODULE_SUFFIX)
        for path in (PACKAGE / "structure" / "call_commands").glob(f"*{COMMAND_MODULE_SUFFIX}.py")
    )

    assert list(command_kinds()) == modules == ["input", "llm", "resample", "transform"]
    assert all(isinstance(kind, CommandKind) for kind in command_kinds().values())


def test_the_parser_gets_the_signature_of_every_kind() -> None:
    assert call_signatures() == {name: kind.signature for name, kind in command_kinds().items()}


def test_no_module_of_the_package_declares_a_command_the_table_lacks() -> None:
    declared = [
        (module.name, name)
        for module in map(importlib.import_module, _package_modules())
        for name, value in vars(module).items()
        if isinstance(value, CommandKind) and value not in command_kinds().values()
    ]

    assert declared == []


def _package_modules() -> list[str]:
    folder = PACKAGE / "structure" / "call_commands"
    return [f"{call_commands.__name__}.{path.stem}" for path in sorted(folder.glob("*.py"))]


def problems(task: type[TreeNode]) -> list[tuple[str, str]]:
    return [(d.message, d.hint) for d in diagnostics(task)]


class TaskTwoInputsInDocstring(TreeNode):
    """! input()
    ! input()"""

    review: str = Field(description="The review.")


def test_each_field_only_command_in_a_docstring_is_misplaced() -> None:
    misplaced = (
        "input() marks a field as given by the caller: it belongs in a field's description, "
        "not in the docstring of 'TaskTwoInputsInDocstring'",
        "move it to the description of the field the caller gives",
    )
    assert problems(TaskTwoInputsInDocstring) == [misplaced, misplaced]


class TaskInputWithTwoModels(TreeNode):
    review: str = Field(description='! input()\n! llm("a")\n! llm("b")')


def test_every_command_an_input_leaves_without_effect_is_named() -> None:
    without_effect = (
        "'TaskInputWithTwoModels.review' is an input (input()), which no step generates, so "
        "llm() has no effect on it",
        "remove llm(...), or remove input() to have the field generated",
    )
    repeated = ("More than one llm() in the same text", "keep one llm()")
    assert problems(TaskInputWithTwoModels) == [without_effect, without_effect, repeated]


# -- a new command is its module alone --------------------------------------------------

SHOUT_MODULE = '''
"""``! shout(times)``: a command that only this test declares."""

from langtree.dsl._signatures import CommandSignature, Parameter
from langtree.structure.call_commands._kind import CommandKind, FieldOnly

SHOUT = CommandKind(
    signature=CommandSignature(
        name="shout",
        parameters=(Parameter(name="times", kind=int, minimum=1),),
        usage="'shout(3)'",
    ),
    field_only=FieldOnly(does="makes a field loud", the_field="the loud field"),
)
'''


@pytest.fixture
def shout_command(tmp_path: Path) -> Iterator[None]:
    """``_shout_command.py``, laid in a folder of the package's path as a new command's
    module is laid in the package; the table is read anew before and after."""
    (tmp_path / f"_shout{COMMAND_MODULE_SUFFIX}.py").write_text(SHOUT_MODULE)
    call_commands.__path__.append(str(tmp_path))
    command_table.cache_clear()
    try:
        yield
    finally:
        call_commands.__path__.remove(str(tmp_path))
        sys.modules.pop(f"{call_commands.__name__}._shout{COMMAND_MODULE_SUFFIX}", None)
        command_table.cache_clear()


def parse_error(text: str) -> str:
    with pytest.raises(CommandParseError) as caught:
        parse_command(text)
    return str(caught.value)


@pytest.mark.usefixtures("shout_command")
def test_a_new_command_module_is_all_the_parser_needs() -> None:
    assert parse_command("! shout(3)") == ExecutionCommand(command_name="shout", arguments=(3,))
    assert parse_error("! shout(0)") == (
        "shout() argument 'times' must be at least 1, got 0\n"
        "    ! shout(0)\n"
        "            ^\n"
        "  at line 1, column 9\n"
        "  hint: pass a whole number of 1 or more"
    )
    assert parse_error("! shot(3)").endswith("hint: did you mean 'shout'?")
    assert parse_error("! retry(3)").endswith(
        "hint: the built-in commands are input(), llm(...), resample(...), shout(...) and "
        "transform(...); @context[...] says what a step's context holds"
    )
    assert "'shout' is a built-in command" in parse_error("! shout=3")


@pytest.mark.usefixtures("shout_command")
def test_a_new_command_module_is_all_the_structure_needs() -> None:
    class TaskLoud(TreeNode):
        """! shout(2)
        Write it loud."""

        text: str = Field(description="! shout(2)\n! shout(3)\nThe text. ! shout(4)")

    assert TaskLoud.model_fields["text"].description == "The text. ! shout(4)"
    assert problems(TaskLoud) == [
        (
            "shout() makes a field loud: it belongs in a field's description, not in the "
            "docstring of 'TaskLoud'",
            "move it to the description of the loud field",
        ),
        ("More than one shout() in the same text", "keep one shout()"),
    ]


@pytest.mark.usefixtures("shout_command")
def test_a_new_command_in_its_place_validates() -> None:
    class TaskLoud(TreeNode):
        text: str = Field(description="! shout(2)\nThe text. ! shout(4)")

    assert problems(TaskLoud) == [
        (
            "'! shout(4)' follows other text on its line, so it is prompt text, not a command",
            "put the command on a line of its own",
        )
    ]


def test_the_new_command_is_gone_with_its_module() -> None:
    assert "shout" not in call_signatures()
