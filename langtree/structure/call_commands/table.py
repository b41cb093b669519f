"""The table of call-style commands: every `CommandKind`, by name."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from langtree.dsl.commands import ExecutionCommand
from langtree.structure.call_commands.input_command import INPUT
from langtree.structure.call_commands.kind import CommandKind
from langtree.structure.call_commands.step_commands import LLM, RESAMPLE
from langtree.structure.call_commands.transform_command import TRANSFORM
from langtree.structure.tree.tree import NodeCommand

__all__ = ["COMMAND_KINDS", "calls", "kind_of"]

COMMAND_KINDS: Mapping[str, CommandKind] = MappingProxyType(
    {kind.name: kind for kind in (INPUT, LLM, RESAMPLE, TRANSFORM)}
)
"""Every call-style command's kind, by name: the same names as `BUILTIN_COMMANDS`."""


def kind_of(command: ExecutionCommand) -> CommandKind:
    """The kind of a parsed call (the parser accepts only the table's names)."""
    return COMMAND_KINDS[command.command_name]


def calls(commands: tuple[NodeCommand, ...], kind: CommandKind) -> list[NodeCommand]:
    """The calls of ``kind`` among ``commands``, in order."""
    return [
        call
        for call in commands
        if isinstance(call.command, ExecutionCommand) and kind_of(call.command) is kind
    ]
