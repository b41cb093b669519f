"""The node tree: every node class reached from a root task, with its fields and commands.

A node is a place in the tree, not a class: a class used in two fields is two nodes. Tags
name places by the fields that lead to them from the root task: ``task.report.sections``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from dataclasses import field as dataclass_field

from pydantic.fields import FieldInfo

from langtree.dsl.commands import Command, Span
from langtree.dsl.extraction import ExtractedCommand, Extraction
from langtree.dsl.tokenizer import split_lines
from langtree.errors import Diagnostic
from langtree.structure.origins import Origin
from langtree.structure.shapes import FieldShape, ShapeError, field_shape
from langtree.structure.texts import ClassText, read_class_texts
from langtree.structure.tree_node import TreeNode, display_name

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
    """A command with the node and text it stands in."""

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
    """A field of a node: its type's shape, whether a default makes it known, its text."""

    name: str
    annotation: object
    shape: FieldShape
    has_known_default: bool
    extraction: Extraction
    commands: tuple[NodeCommand, ...]
    origin: Origin

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

    Returns:
        The nodes, parents before children, and diagnostics for fields that cannot be
        part of the tree (the subtree below such a field is left out).

    Raises:
        CommandParseError: A command in the subtree cannot be parsed.
    """
    nodes: list[Node] = []
    diagnostics: list[Diagnostic] = []
    _visit(task_class, tag, None, None, 0, (), nodes, diagnostics)
    return nodes, diagnostics


def _visit(
    cls: type[TreeNode],
    tag: str,
    parent: str | None,
    field_name: str | None,
    list_depth: int,
    ancestors: tuple[type[TreeNode], ...],
    nodes: list[Node],
    diagnostics: list[Diagnostic],
) -> None:
    texts = read_class_texts(cls)
    fields = []
    children = []
    for text, (name, info) in zip(texts[1:], cls.model_fields.items(), strict=True):
        shape = _shape_or_diagnostic(cls, name, info, text.origin, diagnostics)
        fields.append(_node_field(name, info, shape, text, tag))
        if shape.node_class is not None:
            children.append((name, shape))
    docstring = texts[0]
    nodes.append(
        Node(
            tag=tag,
            node_class=cls,
            parent=parent,
            field_name=field_name,
            list_depth=list_depth,
            extraction=docstring.extraction,
            commands=_node_commands(docstring, tag),
            fields=tuple(fields),
            origin=docstring.origin,
        )
    )
    for name, shape in children:
        assert shape.node_class is not None
        if shape.node_class in (*ancestors, cls):
            cycle = _cycle((*ancestors, cls), f"{tag}.{name}", shape.node_class)
            diagnostics.append(_recursion_diagnostic(cls, name, cycle, texts))
            continue
        _visit(
            shape.node_class,
            f"{tag}.{name}",
            tag,
            name,
            shape.list_depth,
            (*ancestors, cls),
            nodes,
            diagnostics,
        )


def _shape_or_diagnostic(
    cls: type[TreeNode], name: str, info: FieldInfo, origin: Origin, diagnostics: list[Diagnostic]
) -> FieldShape:
    try:
        return field_shape(info.annotation)
    except ShapeError as error:
        diagnostics.append(
            Diagnostic(
                severity="error",
                message=f"Field {name!r} of {display_name(cls)!r} cannot be part of the tree: "
                f"{error}",
                hint="give the field a single node class, or a list of one node class",
                class_name=origin.class_name,
                field_name=name,
                file=origin.file,
                line=origin.line,
            )
        )
        return FieldShape(kind="leaf")


def _node_field(
    name: str, info: FieldInfo, shape: FieldShape, text: ClassText, tag: str
) -> NodeField:
    has_default = info.default_factory is not None or (
        not info.is_required() and info.default is not None
    )
    return NodeField(
        name=name,
        annotation=info.annotation,
        shape=shape,
        has_known_default=has_default,
        extraction=text.extraction,
        commands=_node_commands(text, tag),
        origin=text.origin,
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


def _recursion_diagnostic(
    cls: type[TreeNode], name: str, cycle: str, texts: tuple[ClassText, ...]
) -> Diagnostic:
    origin = next(text.origin for text in texts if text.origin.field_name == name)
    return Diagnostic(
        severity="error",
        message=f"Field {name!r} of {display_name(cls)!r} makes the tree recursive: {cycle}",
        hint="a prompt tree must be finite: break the cycle, e.g. with a separate class "
        "for the nested level",
        class_name=origin.class_name,
        field_name=name,
        file=origin.file,
        line=origin.line,
    )


def node_diagnostic(node: Node, message: str, hint: str) -> Diagnostic:
    """An error at the class of ``node``."""
    return Diagnostic(
        severity="error",
        message=message,
        hint=hint,
        class_name=node.origin.class_name,
        file=node.origin.file,
        line=node.origin.line,
    )
