"""The call-style commands (``input()``, ``llm(...)``, ``resample(...)``,
``transform(...)``): one `CommandKind` each, in one table.

The parser checks a call against its signature (`langtree.dsl.builtins`); from there on,
every stage reads the command's kind from `COMMAND_KINDS`. A new call-style command is a
module here declaring its kind, a line in the table (`table.py`) and its signature in
`BUILTIN_COMMANDS`.
"""

from langtree.structure.call_commands.input_command import INPUT
from langtree.structure.call_commands.kind import (
    CommandKind,
    FieldCall,
    FieldOnly,
    FieldSource,
    WholeSite,
)
from langtree.structure.call_commands.placement import check_placement, without_effect
from langtree.structure.call_commands.step_commands import LLM, RESAMPLE
from langtree.structure.call_commands.table import COMMAND_KINDS, calls, kind_of
from langtree.structure.call_commands.transform_command import TRANSFORM

__all__ = [
    "COMMAND_KINDS",
    "INPUT",
    "LLM",
    "RESAMPLE",
    "TRANSFORM",
    "CommandKind",
    "FieldCall",
    "FieldOnly",
    "FieldSource",
    "WholeSite",
    "calls",
    "check_placement",
    "kind_of",
    "without_effect",
]
