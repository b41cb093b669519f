"""Reading Python type annotations: unions, literals, containers, models, and their names.

Every reader takes an annotation as Pydantic stores it (``Model.model_fields[name]
.annotation``) and answers one question about it, or ``None`` when the question does not
apply. ``typing.List[X]`` reads like ``list[X]`` and ``Optional[X]`` like ``X | None``;
only `strip_annotated()` and `strip_optional()` see through ``Annotated``.

Two views of collections serve two stages: `sequence_kind()`, `item_type()` and
`fixed_tuple_types()` name the containers that values convert between, while
`uniform_item_type()` is what iterating a field yields, for the tree's ``@each``: the
specification's iterables are sequences (``list``, ``tuple`` and other sequence types, bare
ones included), never sets or mappings.

Examples:
    >>> strip_optional(Annotated[list[int] | None, "meta"])
    (list[int], True)
    >>> render_type(dict[str, list[int]] | None)
    'dict[str, list[int]] | None'
"""

from __future__ import annotations

import collections.abc as abc
import types
from enum import Enum
from types import NoneType
from typing import Annotated, Any, Literal, TypeGuard, Union, get_args, get_origin

from pydantic import BaseModel

__all__ = [
    "SequenceKind",
    "fixed_tuple_types",
    "is_class",
    "is_enum",
    "is_model",
    "item_type",
    "literal_values",
    "mapping_types",
    "render_type",
    "sequence_kind",
    "strip_annotated",
    "strip_optional",
    "uniform_item_type",
    "union_members",
]

SequenceKind = Literal["list", "tuple", "sequence", "set", "frozenset"]
_SEQUENCE_KINDS: dict[type, SequenceKind] = {
    list: "list",
    tuple: "tuple",
    abc.Sequence: "sequence",
    # Values converted into a mutable sequence or set are built as lists and sets.
    abc.MutableSequence: "list",
    set: "set",
    abc.Set: "set",
    abc.MutableSet: "set",
    frozenset: "frozenset",
}
_MAPPINGS: tuple[type, ...] = (dict, abc.Mapping, abc.MutableMapping)
_ITERABLES: frozenset[type] = frozenset({list, tuple, abc.Sequence, abc.MutableSequence})


def strip_annotated(annotation: object) -> object:
    """The annotation without ``Annotated`` metadata; ``None`` becomes ``NoneType``.

    Examples:
        >>> strip_annotated(Annotated[Annotated[int, "inner"], "outer"])
        <class 'int'>
    """
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return NoneType if annotation is None else annotation


def strip_optional(annotation: object) -> tuple[object, bool]:
    """The annotation without ``Annotated`` metadata and ``None``, and whether it allowed ``None``.

    Returns:
        The remaining type (the one member left, seen through ``Annotated``, or the union of
        the others) and ``True`` when ``None`` was a member of a union. A bare ``None`` is
        ``NoneType`` and not optional.

    Examples:
        >>> strip_optional(int | str | None)
        (typing.Union[int, str], True)
    """
    annotation = strip_annotated(annotation)
    members = union_members(annotation)
    if members is None:
        return annotation, False
    kept = [member for member in members if member is not NoneType]
    optional = len(kept) < len(members)
    if len(kept) == 1:
        return strip_annotated(kept[0]), optional
    return Union[tuple(kept)], optional  # noqa: UP007 - built from a tuple


def union_members(annotation: object) -> tuple[object, ...] | None:
    """The members of ``X | Y`` or ``Union[X, Y]`` (``Optional[X]`` has ``NoneType``)."""
    origin = get_origin(annotation)
    return get_args(annotation) if origin is Union or origin is types.UnionType else None


def literal_values(annotation: object) -> tuple[object, ...] | None:
    """The values of ``Literal[...]``, or ``None`` for any other annotation."""
    return get_args(annotation) if get_origin(annotation) is Literal else None


def is_class(annotation: object) -> TypeGuard[type]:
    """Whether the annotation is a plain class: not ``Any``, not ``list[int]``."""
    return isinstance(annotation, type) and annotation is not Any


def is_model(annotation: object) -> TypeGuard[type[BaseModel]]:
    """Whether the annotation is a Pydantic model class (a ``TreeNode`` among them)."""
    return is_class(annotation) and issubclass(annotation, BaseModel)


def is_enum(annotation: object) -> TypeGuard[type[Enum]]:
    """Whether the annotation is an ``Enum`` class."""
    return is_class(annotation) and issubclass(annotation, Enum)


def sequence_kind(annotation: object) -> SequenceKind | None:
    """``"list"``, ``"tuple"``, ``"sequence"``, ``"set"`` or ``"frozenset"``, if a sequence.

    Bare classes count (``list`` is ``"list"``); ``str``, mappings and other collection
    classes such as ``deque`` do not.
    """
    origin = get_origin(annotation) or annotation
    return _SEQUENCE_KINDS.get(origin) if isinstance(origin, type) else None


def item_type(annotation: object) -> object:
    """The element type of a sequence annotation (a union for ``tuple[X, Y]``).

    Examples:
        >>> item_type(tuple[int, str]), item_type(list)
        (typing.Union[int, str], typing.Any)
    """
    items = _items(annotation)
    return Union[tuple(items)] if items else Any  # noqa: UP007 - built from a tuple


def uniform_item_type(annotation: object) -> object | None:
    """The one type that iterating a sequence yields (``Any`` for a bare one).

    ``list``, ``tuple``, ``Sequence`` and ``MutableSequence`` count, bare or parametrised
    (``typing.List`` too); a ``tuple`` only when its items share one type (``tuple[X,
    ...]``, ``tuple[X, X]``). Sets have no order and mappings are not iterated; nor are
    other sequence classes such as ``deque``, whose values a run does not iterate.

    Returns:
        The item type, or ``None`` for a set, a mapping, a ``tuple[X, Y]``, ``tuple[()]``
        and anything else that is not such a sequence.

    Examples:
        >>> uniform_item_type(tuple[int, int]), uniform_item_type(tuple[int, str])
        (<class 'int'>, None)
        >>> uniform_item_type(list), uniform_item_type(set[int])
        (typing.Any, None)
    """
    origin = get_origin(annotation) or annotation
    if not (isinstance(origin, type) and origin in _ITERABLES):
        return None
    if not hasattr(annotation, "__args__"):
        return Any
    items = _items(annotation)
    # Compared by ``repr``: annotations need not be hashable (``Annotated`` metadata),
    # and equal ones print alike.
    if origin is tuple and len(set(map(repr, items))) > 1:
        return None
    return items[0] if items else None


def fixed_tuple_types(annotation: object) -> tuple[object, ...] | None:
    """The item types of a fixed-length ``tuple[X, Y]``, or ``None`` for any other type."""
    args = get_args(annotation)
    fixed = sequence_kind(annotation) == "tuple" and args and Ellipsis not in args
    return args if fixed else None


def mapping_types(annotation: object) -> tuple[object, object] | None:
    """The key and value types of a ``dict``/``Mapping`` annotation (``Any`` when bare)."""
    origin = get_origin(annotation) or annotation
    if origin not in _MAPPINGS:
        return None
    args = get_args(annotation)
    return (args[0], args[1]) if len(args) == 2 else (Any, Any)


def _items(annotation: object) -> list[object]:
    return [arg for arg in get_args(annotation) if arg is not Ellipsis]


def render_type(annotation: object) -> str:
    """A readable name for an annotation: ``dict[str, int]``, ``Section | None``.

    Examples:
        >>> from typing import List, Optional
        >>> render_type(Optional[List[str]])
        'list[str] | None'
    """
    annotation = strip_annotated(annotation)
    if (members := union_members(annotation)) is not None:
        return " | ".join(render_type(member) for member in members)
    if (values := literal_values(annotation)) is not None:
        return f"Literal[{', '.join(_render_value(value) for value in values)}]"
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is not None:
        inner = ", ".join("..." if arg is Ellipsis else render_type(arg) for arg in args)
        return f"{render_type(origin)}[{inner}]" if args else render_type(origin)
    if annotation is NoneType or annotation is Any:
        return "None" if annotation is NoneType else "Any"
    return annotation.__name__ if isinstance(annotation, type) else str(annotation)


def _render_value(value: object) -> str:
    return f"{type(value).__name__}.{value.name}" if isinstance(value, Enum) else repr(value)
