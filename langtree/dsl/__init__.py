"""Stage 1 of the pipeline: DSL text to immutable command objects."""

from langtree.dsl.commands import (
    AllCommand,
    Command,
    CommentCommand,
    EachCommand,
    ExecutionCommand,
    NodeModifierCommand,
    ResamplingCommand,
    Span,
    VariableAssignmentCommand,
    VariableMapping,
    VariableReference,
)
from langtree.dsl.parser import parse_command

__all__ = [
    "AllCommand",
    "Command",
    "CommentCommand",
    "EachCommand",
    "ExecutionCommand",
    "NodeModifierCommand",
    "ResamplingCommand",
    "Span",
    "VariableAssignmentCommand",
    "VariableMapping",
    "VariableReference",
    "parse_command",
]
