"""Stage 1 of the pipeline: DSL text to immutable command objects."""

from langtree.dsl.commands import (
    AllCommand,
    Command,
    CommentCommand,
    ContextCommand,
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
from langtree.dsl.signatures import CommandSignature, Parameter, Signatures
from langtree.errors import CommandTextTypeError

__all__ = [
    "AllCommand",
    "Command",
    "CommandSignature",
    "CommandTextTypeError",
    "CommentCommand",
    "ContextCommand",
    "EachCommand",
    "ExecutionCommand",
    "NodeModifierCommand",
    "Parameter",
    "ResamplingCommand",
    "Signatures",
    "Span",
    "VariableAssignmentCommand",
    "VariableMapping",
    "VariableReference",
    "parse_command",
]
