"""The nodes of every added task, and how dotted paths resolve among them (DESIGN D5)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from difflib import get_close_matches
from typing import NamedTuple

from langtree.structure.tree._tree import Node, NodeField
from langtree.structure.tree._tree_node import display_name

__all__ = ["FieldKey", "NodeRegistry", "PathProblem", "ResolvedPath"]


class FieldKey(NamedTuple):
    """A field of a node, by the node's tag and the field's name."""

    node_tag: str
    field_name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedPath:
    """Where a dotted path leads.

    Attributes:
        node: The node the path ends in (the node that holds ``field``, or the node
            the path names).
        field: The last field, or ``None`` when the path names a node.
        fields: Every field the path goes through, in order (``field`` last).
        list_levels: How many list levels the path crosses, its last field's included.
    """

    node: Node
    field: NodeField | None
    fields: tuple[NodeField, ...]
    list_levels: int

    @property
    def field_key(self) -> FieldKey | None:
        """The tag of the node that holds the last field, and its name (``None``: no field)."""
        if self.field is None:
            return None
        names_node = self.field.shape.node_class is not None and self.node.parent is not None
        holder = self.node.parent if names_node else self.node.tag
        assert holder is not None
        return FieldKey(holder, self.field.name)

    @property
    def level_by_component(self) -> tuple[int, ...]:
        """The list levels crossed up to and including each field of the path."""
        levels, total = [], 0
        for node_field in self.fields:
            total += node_field.shape.list_depth
            levels.append(total)
        return tuple(levels)


@dataclass(frozen=True, slots=True, kw_only=True)
class PathProblem:
    """Why a path does not resolve: which component, and a message and hint.

    Attributes:
        reported: The path goes through a field whose type names something undefined,
            which is an error of the field itself: the path adds nothing to report.
    """

    component: int
    message: str
    hint: str
    reported: bool = False


class NodeRegistry:
    """Every node of the added tasks, by tag."""

    def __init__(self) -> None:
        self._nodes: dict[str, Node] = {}
        self._children: dict[str, list[Node]] = {}
        self._tasks: dict[str, list[Node]] = {}
        self._paths: dict[str, tuple[Node, ...]] = {}

    def add(self, nodes: list[Node]) -> None:
        """Register the nodes of one task (its root first, parents before children)."""
        self._paths.clear()
        if nodes:
            self._tasks[nodes[0].tag] = nodes
        for node in nodes:
            self._nodes[node.tag] = node
            self._children.setdefault(node.tag, [])
            if node.parent is not None:
                self._children[node.parent].append(node)

    def get(self, tag: str) -> Node | None:
        """The node with ``tag``, if any."""
        return self._nodes.get(tag)

    def __iter__(self) -> Iterator[Node]:
        """Every node, tasks in tag order (whatever order they were added in)."""
        for tag in sorted(self._tasks):
            yield from self._tasks[tag]

    def texts(self) -> Iterator[Node | NodeField]:
        """Every node's docstring and field descriptions: each node, then its fields."""
        for node in self:
            yield node
            yield from node.fields

    def children(self, tag: str) -> list[Node]:
        """The child nodes of the node with ``tag``, in field order."""
        return self._children.get(tag, [])

    def subtree(self, node: Node) -> Iterator[Node]:
        """``node`` and every node below it, in tree order (walked without recursion, as
        trees may nest deeper than Python's recursion limit)."""
        pending = [node]
        while pending:
            current = pending.pop()
            yield current
            pending.extend(reversed(self.children(current.tag)))

    def subtree_fields(self, node: Node) -> Iterator[FieldKey]:
        """The fields of ``node`` and of every node below it, in tree order."""
        for member in self.subtree(node):
            yield from (FieldKey(member.tag, node_field.name) for node_field in member.fields)

    def list_levels(self, tag: str) -> int:
        """How many list levels lie on the way from the root task to the node at ``tag``
        (its own included)."""
        return sum(node.list_depth for node in self.path(tag))

    def path(self, tag: str) -> list[Node]:
        """The nodes from the root task down to the node with ``tag`` (empty if unknown).

        Worked out once per tag (runs ask for the same paths for every instance)."""
        known = self._paths.get(tag)
        if known is None:
            path: list[Node] = []
            node = self._nodes.get(tag)
            while node is not None:
                path.append(node)
                node = self._nodes.get(node.parent) if node.parent else None
            known = self._paths[tag] = tuple(reversed(path))
        return list(known)

    def field_above(self, node: Node, name: str) -> FieldKey | None:
        """The field ``name`` of ``node`` or of the nearest node above it (the field a
        ``{name}`` in ``node``'s texts, or a name in its transforms, reads)."""
        for holder in reversed(self.path(node.tag)):
            if holder.field(name) is not None:
                return FieldKey(holder.tag, name)
        return None

    def roots(self) -> list[Node]:
        """The root task nodes, sorted by tag."""
        return sorted((n for n in self._nodes.values() if n.parent is None), key=lambda n: n.tag)

    def child(self, node: Node, field_name: str) -> Node | None:
        """The node held by ``node``'s field ``field_name``, if it is a node field."""
        return self._nodes.get(f"{node.tag}.{field_name}")

    def resolve(self, path: str, start: Node) -> ResolvedPath | PathProblem:
        """Resolve a dotted path: ``task.<name>...`` from a root task, else from ``start``."""
        parts = path.split(".")
        if parts[0] == "task" and len(parts) > 1:
            root = self._nodes.get(f"task.{parts[1]}")
            if root is None:
                return self._no_task(parts[1], own_root=self.path(start.tag)[0].tag)
            return self._walk(root, parts, 2)
        return self._walk(start, parts, 0)

    def resolve_relative(self, path: str, start: Node) -> ResolvedPath | PathProblem:
        """Resolve a dotted path from ``start`` only: ``task`` is read as a field name."""
        return self._walk(start, path.split("."), 0)

    def _no_task(self, name: str, *, own_root: str) -> PathProblem:
        """No task at ``task.<name>``; the hint never suggests the command's own task."""
        tag = f"task.{name}"
        close = get_close_matches(tag, sorted(set(self._tasks) - {own_root}), n=1)
        hint = f"did you mean {close[0]!r}? Or " if close else ""
        return PathProblem(
            component=1,
            message=f"No task {tag!r} has been added",
            hint=f"{hint}add the class {_task_class_name(name)!r} with RunStructure.add()"
            + ("" if close else ", or fix the path"),
        )

    def _walk(self, node: Node, parts: list[str], index: int) -> ResolvedPath | PathProblem:
        fields: list[NodeField] = []
        levels = 0
        for position in range(index, len(parts)):
            if fields and fields[-1].shape.node_class is None:
                return _beyond_leaf(fields[-1], parts, position)
            if fields:
                child = self.child(node, fields[-1].name)
                assert child is not None
                node = child
            node_field = node.field(parts[position])
            if node_field is None:
                return _no_field(node, parts, position)
            if node_field.unresolved:
                return PathProblem(component=position, message="", hint="", reported=True)
            fields.append(node_field)
            levels += node_field.shape.list_depth
        last = fields[-1] if fields else None
        if last is not None and last.shape.node_class is not None:
            node = self.child(node, last.name) or node
        return ResolvedPath(node=node, field=last, fields=tuple(fields), list_levels=levels)


def _task_class_name(snake: str) -> str:
    return "Task" + "".join(word.capitalize() for word in snake.split("_"))


def _no_field(node: Node, parts: list[str], position: int) -> PathProblem:
    names = ", ".join(repr(f.name) for f in node.fields) or "none"
    return PathProblem(
        component=position,
        message=f"{display_name(node.node_class)!r} ({node.tag}) has no field {parts[position]!r}",
        hint=f"its fields are {names}",
    )


def _beyond_leaf(node_field: NodeField, parts: list[str], position: int) -> PathProblem:
    rest = ".".join(parts[position:])
    if node_field.recursion is not None:
        return PathProblem(
            component=position,
            message=f"Field {node_field.name!r} has a recursive type ({node_field.recursion}), "
            f"so its value is generated or supplied whole: {rest!r} cannot be reached "
            "through it",
            hint=f"use the whole field ({node_field.name!r}), or give the nested level a class "
            "of its own",
        )
    return PathProblem(
        component=position,
        message=f"Field {node_field.name!r} holds a value, not a node: "
        f"{rest!r} cannot be reached through it",
        hint="paths can only go through fields whose type is a TreeNode or a list of them",
    )
