"""What a field's annotation means for the tree: a leaf, a node, or a list of nodes.

Dicts and mappings are never iterable; ``list``, ``tuple``, ``set`` and other sequences
are; ``Optional[...]`` and ``Annotated[...]`` around them are seen through. The annotation
readers are those of :mod:`langtree.structure.annotations`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal, TypeAlias, TypeGuard

from langtree.errors import LangTreeError
from langtree.structure.annotations import (
    fixed_tuple_types,
    is_class,
    is_enum,
    render_type,
    strip_optional,
    uniform_item_type,
    union_members,
)
from langtree.structure.tree_node import TreeNode

__all__ = ["FieldKind", "FieldShape", "ShapeError", "field_shape"]

FieldKind: TypeAlias = Literal["leaf", "node", "node_list"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldShape:
    """How a field takes part in the tree.

    Attributes:
        kind: ``leaf`` (a value), ``node`` (one child node) or ``node_list``.
        node_class: The child node class, for ``node`` and ``node_list``.
        list_depth: How many sequence levels wrap the value (``list[list[X]]`` is 2).
        optional: Whether ``None`` is allowed.
        enum: The Enum class of an Enum leaf (seen through ``Optional``).
    """

    kind: FieldKind
    node_class: type[TreeNode] | None = None
    list_depth: int = 0
    optional: bool = False
    enum: type[Enum] | None = None

    @property
    def is_iterable(self) -> bool:
        """Whether ``@each`` can iterate over the field."""
        return self.list_depth > 0


class ShapeError(LangTreeError, TypeError):
    """An annotation LangTree cannot place in the tree (becomes a diagnostic)."""


def field_shape(annotation: object) -> FieldShape:
    """Classify a field annotation.

    Raises:
        ShapeError: A union or a fixed-length tuple holds node classes among other
            types (``Section | int``, ``tuple[Section, Note]``), which the tree cannot
            traverse. Dicts are leaves, whatever they hold.

    >>> field_shape(list[str])
    FieldShape(kind='leaf', node_class=None, list_depth=1, optional=False, enum=None)
    """
    inner, optional = strip_optional(annotation)
    depth = 0
    while (element := uniform_item_type(inner)) is not None:
        inner, _ = strip_optional(element)
        depth += 1
    if _is_node(inner):
        kind: FieldKind = "node_list" if depth else "node"
        return FieldShape(kind=kind, node_class=inner, list_depth=depth, optional=optional)
    _reject_mixed_nodes(inner, annotation)
    enum = inner if is_enum(inner) else None
    return FieldShape(kind="leaf", list_depth=depth, optional=optional, enum=enum)


def _is_node(annotation: object) -> TypeGuard[type[TreeNode]]:
    return is_class(annotation) and issubclass(annotation, TreeNode)


def _reject_mixed_nodes(inner: object, annotation: object) -> None:
    nodes = _nodes_within(inner)
    if nodes:
        names = ", ".join(dict.fromkeys(node.__name__ for node in nodes))
        raise ShapeError(
            f"the type {render_type(annotation)!r} mixes node classes ({names}) with other "
            "types in a union or tuple"
        )


def _nodes_within(annotation: object) -> list[type[TreeNode]]:
    """The node classes inside unions, sequences and fixed tuples (not inside dicts)."""
    inner, _ = strip_optional(annotation)
    if _is_node(inner):
        return [inner]
    item = uniform_item_type(inner)
    members = (item,) if item is not None else union_members(inner) or fixed_tuple_types(inner)
    return [node for member in members or () for node in _nodes_within(member)]
