"""Stage 1 of the pipeline: DSL text to immutable command objects."""

from langtree.dsl._commands import (
    AggregationFunction,
    AllCommand,
    Command,
    CommentCommand,
    ContextCommand,
    EachCommand,
    ExecutionCommand,
    Modifier,
    NodeModifierCommand,
    ResamplingCommand,
    Scalar,
    Span,
    Value,
    VariableAssignmentCommand,
    VariableMapping,
    VariableReference,
    format_value,
)
from langtree.dsl._extraction import (
    ExtractedCommand,
    Extraction,
    extract_commands,
    find_stray_commands,
)
from langtree.dsl._hints import suggest
from langtree.dsl._names import TEMPLATE_VARIABLES, reserved_runtime_name
from langtree.dsl._parser import parse_command
from langtree.dsl._paths import (
    PLUCK_OPERATORS,
    SCOPES,
    Pluck,
    PluckOperator,
    split_plucks,
    split_scope,
)
from langtree.dsl._signatures import CommandSignature, Parameter, Signatures
from langtree.dsl._tokenizer import split_lines
from langtree.errors import CommandTextTypeError

__all__ = [
    "PLUCK_OPERATORS",
    "SCOPES",
    "TEMPLATE_VARIABLES",
    "AggregationFunction",
    "AllCommand",
    "Command",
    "CommandSignature",
    "CommandTextTypeError",
    "CommentCommand",
    "ContextCommand",
    "EachCommand",
    "ExecutionCommand",
    "ExtractedCommand",
    "Extraction",
    "Modifier",
    "NodeModifierCommand",
    "Parameter",
    "Pluck",
    "PluckOperator",
    "ResamplingCommand",
    "Scalar",
    "Signatures",
    "Span",
    "Value",
    "VariableAssignmentCommand",
    "VariableMapping",
    "VariableReference",
    "extract_commands",
    "find_stray_commands",
    "format_value",
    "parse_command",
    "reserved_runtime_name",
    "split_lines",
    "split_plucks",
    "split_scope",
    "suggest",
]
