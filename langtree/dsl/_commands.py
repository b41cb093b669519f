"""The command objects the parser produces.

Commands are frozen value objects: constructing one neither validates nor resolves
anything (the parser and the structure stage do). Each renders back to canonical DSL text
with `to_text()`, which parses to an equal command. Source positions are kept for
error messages but take no part in equality.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from langtree.dsl._paths import Scope, split_scope

__all__ = [
    "AggregationFunction",
    "AllCommand",
    "Command",
    "CommentCommand",
    "ContextCommand",
    "EachCommand",
    "ExecutionCommand",
    "Modifier",
    "NodeModifierCommand",
    "ResamplingCommand",
    "Scalar",
    "Span",
    "Value",
    "VariableAssignmentCommand",
    "VariableMapping",
    "VariableReference",
    "format_value",
]

Modifier: TypeAlias = Literal["sequential", "parallel"]
"""A node modifier command: `! @sequential` or `! @parallel`."""
AggregationFunction: TypeAlias = Literal["mean", "median", "mode", "sum", "min", "max"]
"""How `@resampled[field]->function` combines the samples of an enum field."""

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Span:
    """Where a piece of a command stands: 1-based line and column, and its length."""

    line: int
    column: int
    length: int


@dataclass(frozen=True, slots=True)
class VariableReference:
    """An unquoted identifier used as a value: an assembly variable resolved later."""

    name: str


Scalar: TypeAlias = str | int | float | bool
"""A literal value: a quoted string, a number, ``true`` or ``false``."""
Value: TypeAlias = Scalar | VariableReference
"""An argument of a call-style command: a literal, or a reference to an assembly variable."""


def format_value(value: Value) -> str:
    """Render a value as DSL text (strings double-quoted with escapes)."""
    if isinstance(value, VariableReference):
        return value.name
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + "".join(_ESCAPES.get(char, char) for char in value) + '"'
    return repr(value)


def _comment_suffix(comment: str | None) -> str:
    return f" # {comment}" if comment else ""


@dataclass(frozen=True, slots=True, kw_only=True)
class VariableMapping:
    """One ``target=source`` pair inside ``@{{...}}``.

    ``source_path`` is ``None`` for an implicit mapping (``{{outputs.summary}}``) and
    ``"*"`` for the wildcard (the whole current node); it keeps the pluck operators of a
    pluck path as written (``items.*.id``; `langtree.dsl._paths.split_plucks()`).
    A literal source (``value.status="draft"``) is ``literal``, with ``source_path``
    ``None``.
    """

    target_path: str
    source_path: str | None
    literal: Scalar | None = None
    span: Span | None = field(default=None, compare=False, repr=False)

    def __repr__(self) -> str:
        # ``literal`` is shown only when there is one: a mapping that reads a field reads
        # as it did before literals existed.
        literal = "" if self.literal is None else f", literal={self.literal!r}"
        return (
            f"VariableMapping(target_path={self.target_path!r}, "
            f"source_path={self.source_path!r}{literal})"
        )

    @property
    def scope(self) -> Scope | None:
        """The target's scope (``prompt``, ``value``, ``outputs``, ``task``), if any."""
        return split_scope(self.target_path)[0]

    @property
    def is_implicit(self) -> bool:
        """Whether the source is inferred from the target's name."""
        return self.source_path is None and self.literal is None

    @property
    def is_literal(self) -> bool:
        """Whether the source is a literal value (``"draft"``, ``3``, ``true``)."""
        return self.literal is not None

    @property
    def is_wildcard(self) -> bool:
        """Whether the source is ``*``, the whole current node."""
        return self.source_path == "*"

    @property
    def resolved_source_path(self) -> str:
        """The source path, with an implicit one inferred from the target (scope removed)."""
        if self.source_path is not None:
            return self.source_path
        return split_scope(self.target_path)[1]

    def to_text(self) -> str:
        """Render as DSL text."""
        if self.literal is not None:
            return f"{self.target_path}={format_value(self.literal)}"
        if self.source_path is None:
            return self.target_path
        return f"{self.target_path}={self.source_path}"


def _mappings_text(mappings: tuple[VariableMapping, ...]) -> str:
    return ",".join(mapping.to_text() for mapping in mappings)


@dataclass(frozen=True, slots=True, kw_only=True)
class EachCommand:
    """``@each[inclusion]->destination@{{mappings}}*``: one output per element (n:n).

    ``inclusion_path`` is ``None`` when the brackets are omitted; the structure stage then
    iterates over the field that holds the command.
    """

    inclusion_path: str | None
    destination_path: str
    mappings: tuple[VariableMapping, ...]
    has_multiplicity: bool = True
    comment: str | None = None
    inclusion_span: Span | None = field(default=None, compare=False, repr=False)
    destination_span: Span | None = field(default=None, compare=False, repr=False)

    def to_text(self) -> str:
        """Render as canonical DSL text."""
        inclusion = "" if self.inclusion_path is None else f"[{self.inclusion_path}]"
        star = "*" if self.has_multiplicity else ""
        body = f"@each{inclusion}->{self.destination_path}@{{{{{_mappings_text(self.mappings)}}}}}"
        return f"! {body}{star}{_comment_suffix(self.comment)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class AllCommand:
    """``@all->destination@{{mappings}}`` (1:1), or with a trailing ``*`` (1:n)."""

    destination_path: str
    mappings: tuple[VariableMapping, ...]
    has_multiplicity: bool = False
    comment: str | None = None
    destination_span: Span | None = field(default=None, compare=False, repr=False)

    def to_text(self) -> str:
        """Render as canonical DSL text."""
        star = "*" if self.has_multiplicity else ""
        body = f"@all->{self.destination_path}@{{{{{_mappings_text(self.mappings)}}}}}"
        return f"! {body}{star}{_comment_suffix(self.comment)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeModifierCommand:
    """``@sequential``, ``@parallel`` or ``together`` (which means ``parallel``)."""

    modifier: Modifier
    comment: str | None = None

    def to_text(self) -> str:
        """Render as canonical DSL text."""
        return f"! @{self.modifier}{_comment_suffix(self.comment)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class VariableAssignmentCommand:
    """``name=value``: an assembly variable for this node and its descendants."""

    variable_name: str
    value: str | int | float | bool
    comment: str | None = None

    def to_text(self) -> str:
        """Render as canonical DSL text."""
        return f"! {self.variable_name}={format_value(self.value)}{_comment_suffix(self.comment)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionCommand:
    """``name(arg, ..., key=value)``: a call to a built-in command such as ``resample``."""

    command_name: str
    arguments: tuple[Value, ...] = ()
    named_arguments: tuple[tuple[str, Value], ...] = ()
    comment: str | None = None

    def to_text(self) -> str:
        """Render as canonical DSL text."""
        parts = [format_value(value) for value in self.arguments]
        parts += [f"{name}={format_value(value)}" for name, value in self.named_arguments]
        call = f"{self.command_name}({','.join(parts)})"
        return f"! {call}{_comment_suffix(self.comment)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ResamplingCommand:
    """``@resampled[field]->function``: how resampled values of an Enum field combine."""

    field_name: str
    aggregation_function: AggregationFunction
    comment: str | None = None
    field_span: Span | None = field(default=None, compare=False, repr=False)

    def to_text(self) -> str:
        """Render as canonical DSL text."""
        body = f"@resampled[{self.field_name}]->{self.aggregation_function}"
        return f"! {body}{_comment_suffix(self.comment)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextCommand:
    """``@context[path, ...]``: what the context of the node's own steps holds.

    ``paths`` keeps the entries as written, in order: ``("*",)`` is every known value of
    the node (what a node without the command gets), ``()`` none (only the ``outputs``
    entries that commands send), and any other entry a field path from the node, pluck
    operators kept (``paragraphs.*.summary``; `langtree.dsl._paths.split_plucks()`).
    """

    paths: tuple[str, ...]
    comment: str | None = None
    path_spans: tuple[Span, ...] = field(default=(), compare=False, repr=False)

    def to_text(self) -> str:
        """Render as canonical DSL text."""
        return f"! @context[{', '.join(self.paths)}]{_comment_suffix(self.comment)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class CommentCommand:
    """A standalone comment line: ``! # text`` or ``!# text``."""

    comment: str

    def to_text(self) -> str:
        """Render as canonical DSL text."""
        return f"! # {self.comment}" if self.comment else "! #"


Command: TypeAlias = (
    EachCommand
    | AllCommand
    | NodeModifierCommand
    | VariableAssignmentCommand
    | ExecutionCommand
    | ResamplingCommand
    | ContextCommand
    | CommentCommand
)
"""Any command ``parse_command`` returns: one frozen dataclass per kind of command."""
