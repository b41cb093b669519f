"""The table of call-style commands: every `CommandKind`, by name, collected from the
modules of this package.

A call-style command is one module of this package, ``_<name>_command.py``, that declares
the command ``<name>()`` as the constant ``<NAME>``: its signature and its kind together
(``_input_command.py`` declares ``INPUT``, the command ``input()``). The table holds every
such module's command, in the order of their names; no list names them by hand.

The table is collected the first time it is read, not when this module loads: the tree
room parses every text with the commands' signatures (`call_signatures()`), and the
commands' modules are made of that room's nodes, so they can only be imported after it.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from langtree.dsl import Command, ExecutionCommand, Signatures
from langtree.dsl import parse_command as parse_with

# For annotations only: the kinds' module imports the tree room, which imports this one.
if TYPE_CHECKING:
    from langtree.structure.call_commands._kind import CommandKind
    from langtree.structure.tree._tree import NodeCommand

__all__ = [
    "COMMAND_MODULE_SUFFIX",
    "CommandTable",
    "call_signatures",
    "calls",
    "command_kinds",
    "command_table",
    "kind_of",
    "parse_command",
]

COMMAND_MODULE_SUFFIX = "_command"
"""How the name of a module that declares a command ends."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandTable:
    """Every call-style command, by name.

    Attributes:
        kinds: Each command's kind.
        signatures: Each command's signature, as the parser takes them.
    """

    kinds: Mapping[str, CommandKind]
    signatures: Signatures


@functools.cache
def command_table() -> CommandTable:
    """The commands of every ``_<name>_command`` module of this package, by name.

    Raises:
        AttributeError: A command module does not declare its command as ``<NAME>``.
    """
    package = sys.modules[__package__]
    # A module's command is its name without the suffix, and without the underscore
    # that marks a module private: ``_input_command`` declares ``INPUT``.
    modules = sorted(
        (module.name.removeprefix("_").removesuffix(COMMAND_MODULE_SUFFIX), module.name)
        for module in pkgutil.iter_modules(package.__path__)
        if module.name.endswith(COMMAND_MODULE_SUFFIX)
    )
    kinds: list[CommandKind] = [
        getattr(importlib.import_module(f"{__package__}.{module}"), name.upper())
        for name, module in modules
    ]
    return CommandTable(
        kinds=MappingProxyType({kind.name: kind for kind in kinds}),
        signatures=MappingProxyType({kind.name: kind.signature for kind in kinds}),
    )


def call_signatures() -> Signatures:
    """The signature of every call-style command, by name: what the parser accepts."""
    return command_table().signatures


def parse_command(text: str, *, first_line: int = 1) -> Command:
    """Parse one command: a line starting with ``!``, possibly continued inside brackets.

    Args:
        text: The command text. Leading and trailing whitespace is ignored.
        first_line: The line number of the text's first line, for a command that stands
            inside a larger text (a docstring); error positions count from it.

    Returns:
        The command object.

    Raises:
        CommandParseError: The text is not a valid command; the error carries the line,
            column and a hint.
        CommandTextTypeError: ``text`` is not a ``str`` (a ``TypeError``).

    Examples:
        >>> parse_command("! @each[items]->task.processor@{{value.item=items}}*").inclusion_path
        'items'
        >>> parse_command("! resample(3)").arguments
        (3,)
    """
    return parse_with(text, signatures=call_signatures(), first_line=first_line)


def command_kinds() -> Mapping[str, CommandKind]:
    """The kind of every call-style command, by name, in the order of their names."""
    return command_table().kinds


def kind_of(command: ExecutionCommand) -> CommandKind:
    """The kind of a parsed call (the parser accepts only the table's names)."""
    return command_kinds()[command.command_name]


def calls(commands: tuple[NodeCommand, ...], kind: CommandKind) -> list[NodeCommand]:
    """The calls of ``kind`` among ``commands``, in order."""
    return [
        call
        for call in commands
        if isinstance(call.command, ExecutionCommand) and kind_of(call.command) is kind
    ]
