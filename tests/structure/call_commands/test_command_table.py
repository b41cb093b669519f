"""The call-style commands are one table: the parser's signatures and the structure's
kinds name the same commands, and no other module names a command by a string."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from pydantic import Field

from langtree import TreeNode
from langtree.dsl.builtins import BUILTIN_COMMANDS
from langtree.structure.call_commands import COMMAND_KINDS
from tests.structure.validated import diagnostics

PACKAGE = Path(__file__).parents[3] / "langtree"

TABLE = ("dsl/builtins.py", "structure/call_commands/")
"""The signatures and the kinds: the only places a command's name is written."""

HOMONYMS = Counter(
    {
        # What wrote a value (the caller's input, a transform step): a provenance kind.
        ("provenance.py", "input"): 2,
        ("provenance.py", "transform"): 2,
        # Keys of a step's saved data and of its event, and the noun of a count.
        ("plan.py", "resample"): 1,
        ("plan.py", "transform"): 1,
        ("events.py", "transform"): 1,
        ("result_display.py", "transform"): 1,
        # Input tokens, as OpenTelemetry names them.
        ("otel.py", "input"): 1,
    }
)
"""Strings that spell a command's name and mean something else, by module file name (the
folders a module lies in may change)."""


def name_literals() -> Counter[tuple[str, str]]:
    """Each string constant equal to a command's name outside the table, by module file
    name."""
    found: Counter[tuple[str, str]] = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module.startswith(TABLE):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in BUILTIN_COMMANDS:
                found[path.name, node.value] += 1
    return found


def test_no_module_outside_the_table_names_a_command() -> None:
    assert name_literals() == HOMONYMS


def test_every_signature_has_a_kind() -> None:
    assert sorted(COMMAND_KINDS) == sorted(BUILTIN_COMMANDS)
    assert all(kind.signature is BUILTIN_COMMANDS[name] for name, kind in COMMAND_KINDS.items())


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
