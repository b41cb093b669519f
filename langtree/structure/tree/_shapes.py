"""What a field's annotation means for the tree: a leaf, a node, or a list of nodes.

The iterables are the specification's: ``list``, ``tuple`` and other sequences, bare ones
included (their elements are ``Any``). Dicts, mappings and sets are leaves, never iterated;
``Optional[...]`` and ``Annotated[...]`` around them are seen through. A type that cannot
hold a value at all (a set of nodes, a dict keyed by a list) is refused. The annotation
readers are those of `langtree.structure.types._annotations`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, TypeAlias, TypeGuard, get_args, get_origin

from langtree.errors import LangTreeError
from langtree.structure.tree._tree_node import TreeNode
from langtree.structure.types._annotations import (
    fixed_tuple_types,
    is_class,
    is_enum,
    literal_values,
    mapping_types,
    render_type,
    sequence_kind,
    strip_annotated,
    strip_optional,
    uniform_item_type,
    union_members,
)

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
    """An annotation LangTree cannot place in the tree (becomes a diagnostic).

    Attributes:
        verdict: What the annotation means for the field, e.g. ``"cannot be part of the
            tree"``.
        hint: How to fix the annotation.
    """

    def __init__(self, message: str, *, verdict: str, hint: str) -> None:
        super().__init__(message)
        self.verdict = verdict
        self.hint = hint


def field_shape(annotation: object) -> FieldShape:
    """Classify a field annotation (worked out once per hashable annotation: the same
    few types, ``str`` and ``list[str]`` among them, come back in field after field).

    Raises:
        ShapeError: A union or a fixed-length tuple holds node classes among other
            types (``Section | int``, ``tuple[Section, Note]``), which the tree cannot
            traverse; a set or a dict key holds nodes, or another value that cannot be
            hashed (``set[Section]``, ``dict[list[str], int]``), so that no value fits.
            Dicts are leaves, whatever their values are.

    Examples:
        >>> field_shape(list[str])
        FieldShape(kind='leaf', node_class=None, list_depth=1, optional=False, enum=None)
    """
    try:
        hash(annotation)
    except TypeError:  # e.g. a list in ``Annotated`` metadata
        return _shape(annotation)
    return _cached_shape(annotation)


@functools.lru_cache(maxsize=4096)
def _cached_shape(annotation: object) -> FieldShape:
    return _shape(annotation)


def _shape(annotation: object) -> FieldShape:
    _reject_unhashable(annotation)
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
            "types in a union or tuple",
            verdict="cannot be part of the tree",
            hint="give the field a single node class, or a list of one node class",
        )


def _nodes_within(annotation: object) -> list[type[TreeNode]]:
    """The node classes inside unions, sequences and fixed tuples (not inside dicts)."""
    inner, _ = strip_optional(annotation)
    if _is_node(inner):
        return [inner]
    item = uniform_item_type(inner)
    members = (item,) if item is not None else union_members(inner) or fixed_tuple_types(inner)
    return [node for member in members or () for node in _nodes_within(member)]


# -- values that must be hashable --------------------------------------------------------------


def _reject_unhashable(annotation: object) -> None:
    """Refuse a set element or dict key type whose values cannot be hashed, or that are nodes."""
    if not get_args(annotation):
        return
    for place, element in _hashed_types(annotation):
        nodes = [node.__name__ for node in _classes_within(element) if _is_node(node)]
        if nodes and place == "set":
            raise ShapeError(
                f"the type {render_type(annotation)!r} holds nodes in a set, which has no "
                "order and needs hashable elements",
                verdict="cannot be part of the tree",
                hint=f"declare the field as a list, e.g. list[{nodes[0]}]",
            )
        if nodes:
            raise ShapeError(
                f"the type {render_type(annotation)!r} uses nodes as dict keys, which must "
                "be hashable",
                verdict="cannot be part of the tree",
                hint="key the dict by a str (or another hashable type), or use a list of nodes",
            )
        if not _hashable(element):
            in_set = place == "set"
            raise ShapeError(
                f"the type {render_type(annotation)!r} puts {render_type(element)!r} in "
                f"{'a set, whose elements' if in_set else 'dict keys, which'} must be hashable",
                verdict="can never hold a value",
                hint=("use a list instead of the set, or a" if in_set else "use a")
                + " hashable type (str, a tuple, a frozen model)",
            )


def _hashed_types(annotation: object) -> Iterator[tuple[Literal["set", "key"], object]]:
    """Every set element type and dict key type within ``annotation``."""
    annotation = strip_annotated(annotation)
    if literal_values(annotation) is not None:
        return
    if sequence_kind(annotation) in ("set", "frozenset"):
        for element in get_args(annotation)[:1]:
            yield "set", element
    elif (types := mapping_types(annotation)) is not None:
        yield "key", types[0]
    for argument in get_args(annotation):
        if argument is not Ellipsis:
            yield from _hashed_types(argument)


def _classes_within(annotation: object) -> Iterator[object]:
    """``annotation`` and every type argument within it, seen through ``Annotated``."""
    annotation = strip_annotated(annotation)
    yield annotation
    if literal_values(annotation) is None:
        for argument in get_args(annotation):
            yield from _classes_within(argument)


def _hashable(annotation: object) -> bool:
    """Whether values of the annotation can be hashed (``Any`` and unknowns: assume so)."""
    annotation, _ = strip_optional(annotation)
    if (members := union_members(annotation)) is not None:
        return all(_hashable(member) for member in members)
    if literal_values(annotation) is not None or annotation is Any:
        return True
    if sequence_kind(annotation) == "tuple":
        arguments = get_args(annotation)
        return all(_hashable(argument) for argument in arguments if argument is not Ellipsis)
    origin = get_origin(annotation) or annotation
    return not (isinstance(origin, type) and origin.__hash__ is None)
