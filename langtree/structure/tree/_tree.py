"""The node tree: every node class reached from a root task, with its fields and commands.

A node is a place in the tree, not a class: a class used in two fields is two nodes. Tags
name places by the fields that lead to them from the root task: ``task.report.sections``.
The tree ends at a field whose type holds a class above it (``Part.parts: list[Part]``):
a recursive type is a value, generated or supplied whole, since a tree of steps is finite.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field

from pydantic.fields import FieldInfo

from langtree.dsl import Command, ExtractedCommand, Extraction, Span, split_lines
from langtree.errors import Diagnostic
from langtree.structure.tree._origins import Origin, class_origins
from langtree.structure.tree._references import (
    Unresolved,
    complete,
    unresolved_fields,
    unresolved_name,
)
from langtree.structure.tree._shapes import FieldShape, ShapeError, field_shape
from langtree.structure.tree._texts import ClassText, read_class_texts
from langtree.structure.tree._tree_node import TreeNode, display_name
from langtree.structure.types._defaults import default_problem

__all__ = [
    "Node",
    "NodeCommand",
    "NodeField",
    "build_task_nodes",
    "node_diagnostic",
    "task_tag",
    "title_from_name",
]

_TASK_NAME = re.compile(r"Task[A-Z][A-Za-z0-9]*")
_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def task_tag(class_name: str) -> str | None:
    """The tag of a root task class, or ``None`` when the name is not ``Task<CamelCase>``.

    The name after ``Task`` starts with a capital letter, so that the tag is a path that
    commands can name (``Task2Go`` would give ``task.2_go``).

    Examples:
        >>> task_tag("TaskDataProcessor")
        'task.data_processor'
        >>> task_tag("Processor") is None
        True
    """
    if not _TASK_NAME.fullmatch(class_name):
        return None
    return "task." + _WORD_BOUNDARY.sub("_", class_name[4:]).lower()


@functools.lru_cache(maxsize=4096)
def title_from_name(name: str) -> str:
    """A heading from a field or class name (cached: prompts ask for the same few names
    again and again).

    Examples:
        >>> title_from_name("main_analysis"), title_from_name("TaskDataProcessor")
        ('Main Analysis', 'Data Processor')
    """
    if "_" not in name and name[:1].isupper():
        name = _WORD_BOUNDARY.sub("_", name.removeprefix("Task") or name)
    return " ".join(
        word.capitalize() if word.islower() else word for word in name.split("_") if word
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeCommand:
    """A command with the node and text it stands in.

    Attributes:
        command: The parsed command (``EachCommand``, ``AllCommand``, ...).
        extracted: The command as found in the text, with its lines.
        origin: The text that holds it: the class, the field (``None``: the docstring),
            the file and line.
        node_tag: The node whose docstring or field description holds it.
    """

    command: Command
    extracted: ExtractedCommand
    origin: Origin
    node_tag: str

    @property
    def field_name(self) -> str | None:
        """The field whose description holds the command (``None``: the docstring)."""
        return self.origin.field_name

    def diagnostic(
        self, message: str, *, hint: str, span: Span | None = None, warning: bool = False
    ) -> Diagnostic:
        """A diagnostic that points at ``span`` (or the whole first line) of this command."""
        lines = split_lines(self.extracted.text)
        line = span.line if span else self.extracted.line
        source_line = lines[line - self.extracted.line]
        column = span.column if span else len(source_line) - len(source_line.lstrip()) + 1
        return self.origin.diagnostic(
            message,
            hint=hint,
            text_line=line,
            column=column,
            source_line=source_line,
            length=span.length if span else len(source_line.strip()),
            warning=warning,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeField:
    """A field of a node: its type's shape, whether a default makes it known, its text.

    Attributes:
        name: The field's name.
        annotation: Its type, as pydantic holds it.
        shape: How it takes part in the tree: a leaf value, one child node or a list of
            them, and how many lists wrap it.
        has_known_default: Whether a default (not ``None``) or a ``default_factory``
            makes it known, so that no model generates it (DESIGN D2).
        extraction: Its description, split into commands and prompt text.
        commands: The commands of its description.
        origin: Where its description stands (class, field, file and line).
        recursion: The cycle (``Part.parts → Part``) when the field's type holds a class
            above it; the field is then a leaf, its value generated or supplied whole.
        unresolved: Whether the field's type names something that is not defined (an
            error on the field; paths through it are not checked further).
    """

    name: str
    annotation: object
    shape: FieldShape
    has_known_default: bool
    extraction: Extraction
    commands: tuple[NodeCommand, ...]
    origin: Origin
    recursion: str | None = None
    unresolved: bool = False

    @property
    def description(self) -> str:
        """The description with its commands removed."""
        return self.extraction.text


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """One place in the tree.

    Attributes:
        tag: ``task.<name>`` for a root, then the fields leading here.
        node_class: The ``TreeNode`` class at this place.
        parent: The parent's tag (``None`` for a root task).
        field_name: The parent's field that holds this node.
        list_depth: How many lists that field wraps around this node.
        extraction: The docstring, split into commands and prompt text.
        commands: The docstring's commands.
        fields: The fields, in declaration order.
        origin: Where the docstring stands (class, file and line).
    """

    tag: str
    node_class: type[TreeNode]
    parent: str | None
    field_name: str | None
    list_depth: int
    extraction: Extraction
    commands: tuple[NodeCommand, ...]
    fields: tuple[NodeField, ...]
    origin: Origin
    _index: dict[str, NodeField] = dataclass_field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._index.update((node_field.name, node_field) for node_field in self.fields)

    @property
    def text(self) -> str:
        """The docstring with its commands removed."""
        return self.extraction.text

    def field(self, name: str) -> NodeField | None:
        """The field called ``name``, if the node has one."""
        return self._index.get(name)

    @property
    def all_commands(self) -> tuple[NodeCommand, ...]:
        """The docstring's commands, then each field's, in order."""
        return self.commands + tuple(c for f in self.fields for c in f.commands)


def build_task_nodes(task_class: type[TreeNode], tag: str) -> tuple[list[Node], list[Diagnostic]]:
    """Introspect a root task and everything reachable through its fields.

    Classes that pydantic left incomplete (a forward reference defined later) are
    completed first, as pydantic would on first use.

    Returns:
        The nodes, parents before children, and diagnostics for fields that cannot be
        part of the tree (the subtree below such a field is left out): a type that names
        something undefined, that the tree cannot traverse or that no value fits, and a
        default that does not fit its field.

    Raises:
        CommandParseError: A command in the subtree cannot be parsed.
    """
    builder = _Builder()
    # Depth first, each node before the nodes below it, without recursion: trees may
    # nest deeper than Python's recursion limit.
    pending = [_Visit(cls=task_class, tag=tag, parent=None, field_name=None, list_depth=0)]
    while pending:
        pending.extend(reversed(builder.visit(pending.pop())))
    return builder.nodes, builder.diagnostics + builder.incomplete()


@dataclass(frozen=True, slots=True, kw_only=True)
class _Visit:
    """A class to read, at its place in the tree."""

    cls: type[TreeNode]
    tag: str
    parent: str | None
    field_name: str | None
    list_depth: int
    ancestors: tuple[type[TreeNode], ...] = ()


class _Builder:
    """Visits the classes of one task, collecting its nodes and diagnostics."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.diagnostics: list[Diagnostic] = []
        self.read: set[type[TreeNode]] = set()
        self.unresolved = False

    def visit(self, place: _Visit) -> list[_Visit]:
        """Read one class at its place; returns the node classes below it, in order."""
        cls, tag, ancestors = place.cls, place.tag, place.ancestors
        first = cls not in self.read
        self.read.add(cls)
        is_complete = complete(cls)
        texts = read_class_texts(cls)
        fields = [
            self.node_field(cls, name, info, text, tag, (*ancestors, cls))
            for text, (name, info) in zip(texts[1:], cls.model_fields.items(), strict=True)
        ]
        if not is_complete:
            self.mark_unresolved(cls, fields, report=first)
        if first and is_complete:
            self.check_defaults(cls, fields)
        docstring = texts[0]
        self.nodes.append(
            Node(
                tag=tag,
                node_class=cls,
                parent=place.parent,
                field_name=place.field_name,
                list_depth=place.list_depth,
                extraction=docstring.extraction,
                commands=_node_commands(docstring, tag),
                fields=tuple(fields),
                origin=docstring.origin,
            )
        )
        return [
            _Visit(
                cls=child,
                tag=f"{tag}.{node_field.name}",
                parent=tag,
                field_name=node_field.name,
                list_depth=node_field.shape.list_depth,
                ancestors=(*ancestors, cls),
            )
            for node_field in fields
            if (child := node_field.shape.node_class) is not None and not node_field.unresolved
        ]

    def node_field(
        self,
        cls: type[TreeNode],
        name: str,
        info: FieldInfo,
        text: ClassText,
        tag: str,
        classes: tuple[type[TreeNode], ...],
    ) -> NodeField:
        """The field, a leaf when its type cannot be traversed or holds a class above it."""
        shape = self.shape(cls, name, info, text.origin)
        recursion = None
        if shape.node_class in classes:
            assert shape.node_class is not None
            recursion = _cycle(classes, f"{tag}.{name}", shape.node_class)
            shape = FieldShape(kind="leaf", list_depth=shape.list_depth, optional=shape.optional)
        return NodeField(
            name=name,
            annotation=info.annotation,
            shape=shape,
            has_known_default=info.default_factory is not None
            or (not info.is_required() and info.default is not None),
            extraction=text.extraction,
            commands=_node_commands(text, tag),
            origin=text.origin,
            recursion=recursion,
        )

    def shape(self, cls: type[TreeNode], name: str, info: FieldInfo, origin: Origin) -> FieldShape:
        try:
            return field_shape(info.annotation)
        except ShapeError as error:
            message = f"Field {name!r} of {display_name(cls)!r} {error.verdict}: {error}"
            self.diagnostics.append(_origin_diagnostic(origin, message, error.hint))
            return FieldShape(kind="leaf")

    def mark_unresolved(
        self, cls: type[TreeNode], fields: list[NodeField], *, report: bool
    ) -> None:
        """Mark the fields of an incomplete class whose types name something undefined, so
        that paths through them are not checked, and report them once per class."""
        nodes = frozenset(f.shape.node_class for f in fields if f.shape.node_class)
        for found in unresolved_fields(cls, read_elsewhere=nodes):
            index = next(i for i, f in enumerate(fields) if f.name == found.field_name)
            fields[index] = replace(fields[index], unresolved=True)
            if report:
                self.diagnostics.append(_unresolved_diagnostic(cls, found, fields[index].origin))
            self.unresolved = True

    def check_defaults(self, cls: type[TreeNode], fields: list[NodeField]) -> None:
        owner = display_name(cls)
        for node_field in fields:
            info = cls.model_fields[node_field.name]
            partial = node_field.shape.node_class is not None
            problem = default_problem(owner, node_field.name, info, partial=partial)
            if problem is not None:
                self.diagnostics.append(_origin_diagnostic(node_field.origin, *problem))

    def incomplete(self) -> list[Diagnostic]:
        """A diagnostic for each class still incomplete when no field explains why."""
        if self.unresolved:
            return []
        diagnostics = []
        for cls in self.read:
            name = None if cls.__pydantic_complete__ else unresolved_name(cls)
            if name is not None:
                origin = class_origins(cls)[None]
                diagnostics.append(
                    _origin_diagnostic(
                        origin,
                        f"{display_name(cls)!r} refers to {name!r}, which is not defined",
                        _rebuild_hint(f"{name!r}", cls, "it"),
                    )
                )
        return diagnostics


def _origin_diagnostic(origin: Origin, message: str, hint: str) -> Diagnostic:
    """An error where ``origin``'s text starts: its class, or its field."""
    return Diagnostic(
        severity="error",
        message=message,
        hint=hint,
        class_name=origin.class_name,
        field_name=origin.field_name,
        file=origin.file,
        line=origin.line,
    )


def _unresolved_diagnostic(cls: type[TreeNode], found: Unresolved, origin: Origin) -> Diagnostic:
    names = " and ".join(repr(name) for name in found.names)
    several = len(found.names) > 1
    inside = "" if found.owner is cls else f" (in {display_name(found.owner)}.{found.owner_field})"
    message = (
        f"Field {found.field_name!r} of {display_name(cls)!r} refers to {names}{inside}, "
        f"which {'are' if several else 'is'} not defined"
    )
    return _origin_diagnostic(
        origin, message, _rebuild_hint(names, found.owner, "them" if several else "it")
    )


def _rebuild_hint(names: str, owner: type, pronoun: str) -> str:
    return (
        f"define or import {names} where {display_name(owner)!r} is defined, before adding the "
        f"task; or call {display_name(owner)}.model_rebuild() after defining {pronoun}"
    )


def _node_commands(text: ClassText, tag: str) -> tuple[NodeCommand, ...]:
    return tuple(
        NodeCommand(
            command=extracted.command, extracted=extracted, origin=text.origin, node_tag=tag
        )
        for extracted in text.extraction.commands
    )


def _cycle(classes: tuple[type[TreeNode], ...], tag: str, child: type[TreeNode]) -> str:
    """``A.b → B.a → A``: the fields that lead from ``child`` back to itself.

    Args:
        classes: The classes from the root task down to the class holding the field.
        tag: The tag the field would give: the root's tag, then one field per class.
    """
    fields = tag.split(".")[2:]
    start = classes.index(child)
    steps = [f"{display_name(c)}.{f}" for c, f in zip(classes[start:], fields[start:], strict=True)]
    return " → ".join((*steps, display_name(child)))


def node_diagnostic(node: Node, message: str, hint: str) -> Diagnostic:
    """An error at the class of ``node``."""
    return _origin_diagnostic(node.origin, message, hint)
