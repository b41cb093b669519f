"""Pluck paths in mapping sources: ``items.*.id``, ``items.**.id``, ``items.***.id``.

A pluck reads one field of every element of a list of nodes; each pluck adds the list
levels of the list it reads, so ``sections.*.paragraphs.*.text`` is a list (one per
section) of lists (one text per paragraph): plucks nest, they never flatten. The checks
here run against the classes (a pluck needs a list of nodes that has the field, and
every list a pluck path crosses is marked); `path_type()` is the type a source path
sends, plucked or not, for the type checks of ``value`` mappings: one rule says where
``None`` can come from, whichever form the path takes.
"""

from __future__ import annotations

from difflib import get_close_matches

from langtree.dsl import PLUCK_OPERATORS, Pluck, PluckOperator
from langtree.structure.tree._registry import ResolvedPath
from langtree.structure.tree._tree import NodeField
from langtree.structure.tree._tree_node import display_name
from langtree.structure.types._annotations import item_type, render_type, strip_optional

__all__ = ["none_on_the_way", "path_type", "pluck_problem", "unplucked_list"]


def pluck_problem(
    base: ResolvedPath, pluck: Pluck, source: str, names: list[str], consumed: int
) -> tuple[str, str] | None:
    """Why the list before ``pluck`` cannot be plucked (message and hint), or ``None``.

    Args:
        base: The path up to the pluck, resolved (its last field is the list).
        pluck: The pluck operator and where it stands.
        source: The source path as written, for messages.
        names: The field names of the source path, without its pluck operators.
        consumed: How many fields of the path an ``@each`` iterates over.
    """
    list_field = base.fields[-1]
    written = _written_before(source, pluck.after)
    plucked = names[pluck.after]
    if pluck.after <= consumed:
        return (
            f"Cannot pluck from {written!r} in {source!r}: this @each iterates over it, so "
            "each iteration sees one element",
            f"write {_without(source, pluck.after)!r} to send each element's {plucked!r}, or pluck "
            "from a list inside the element",
        )
    if not list_field.shape.is_iterable:
        return _not_a_list(list_field, written, plucked, source)
    if list_field.shape.node_class is None:
        element = _element_type(list_field)
        return (
            f"Cannot pluck {plucked!r} from the elements of {written!r} in {source!r}: "
            f"they are {render_type(element)!r} values, not nodes",
            f"pluck from a list of nodes, or send the list itself: '{written}'",
        )
    node = base.node
    if node.field(plucked) is None:
        known = [node_field.name for node_field in node.fields]
        close = get_close_matches(plucked, known, n=1)
        listed = ", ".join(repr(name) for name in known) or "none"
        return (
            f"Cannot pluck {plucked!r} from the elements of {written!r} in {source!r}: "
            f"{display_name(node.node_class)!r} has no field {plucked!r}",
            (f"did you mean {close[0]!r}? Its" if close else "its") + f" fields are {listed}",
        )
    return None


def _not_a_list(list_field: NodeField, written: str, plucked: str, source: str) -> tuple[str, str]:
    what = render_type(list_field.annotation)
    hint = (
        f"{written!r} holds one node: write '{written}.{plucked}' to read its field"
        if list_field.shape.node_class is not None
        else "pluck from a list of nodes, e.g. 'items.*.id' where 'items' is a list"
    )
    return (
        f"Cannot pluck from {written!r} in {source!r}: it is {what!r}, not a list",
        hint,
    )


def _written_before(source: str, after: int) -> str:
    """``source`` up to its ``after``-th field name, as written (earlier plucks kept)."""
    parts, seen = [], 0
    for part in source.split("."):
        if seen == after:
            break
        seen += part not in PLUCK_OPERATORS
        parts.append(part)
    return ".".join(parts)


def _without(source: str, after: int) -> str:
    """``source`` without the pluck operator after its ``after``-th field name."""
    parts, seen = [], 0
    for part in source.split("."):
        if part in PLUCK_OPERATORS and seen == after:
            continue
        seen += part not in PLUCK_OPERATORS
        parts.append(part)
    return ".".join(parts)


def unplucked_list(
    resolved: ResolvedPath, plucks: tuple[Pluck, ...], source: str, consumed: int
) -> tuple[str, str] | None:
    """A list that a pluck path crosses without a pluck (message and hint), or ``None``."""
    marked = {pluck.after for pluck in plucks}
    for index, node_field in enumerate(resolved.fields[:-1]):
        if index + 1 > consumed and node_field.shape.is_iterable and index + 1 not in marked:
            fixed = _with_pluck(source, index + 1)
            return (
                f"Source {source!r} crosses the list {node_field.name!r} without a pluck",
                f"mark every list a pluck path crosses, e.g. {fixed!r}",
            )
    return None


def _with_pluck(source: str, after: int) -> str:
    """``source`` with ``*`` added after its ``after``-th field name."""
    parts, seen = [], 0
    for part in source.split("."):
        parts.append(part)
        seen += part not in PLUCK_OPERATORS
        if seen == after and part not in PLUCK_OPERATORS:
            parts.append("*")
    return ".".join(parts)


def path_type(
    fields: tuple[NodeField, ...],
    plucks: tuple[Pluck, ...],
    *,
    iterated: NodeField | None = None,
    unmarked: PluckOperator = "*",
) -> object:
    """The type a source path sends, from the first field after what an ``@each`` consumes.

    Each pluck wraps the values it reads in the list levels of its list; a list the path
    crosses without an operator is read as ``.*.`` reads it, as the run does. ``.*.``
    sends ``None`` where the types allow one on the way (an optional node, field or
    element: a missing value, or an inner ``.*.`` over a missing list), and so does a path
    that walks through an optional node before any list; ``.**.`` and ``.***.`` never do.

    Args:
        fields: The source's fields, starting where the value is read.
        plucks: The pluck operators, ``after`` counted from the first of ``fields``.
        iterated: The list an ``@each`` iterates, when the path starts at its elements
            (optional elements make the path send ``None``).
        unmarked: How lists crossed without an operator, and the nodes before the first
            list, are read: ``"**"`` gives the type the path would send with its ``None``
            values left out.
    """
    marked = {pluck.after for pluck in plucks}
    crossed = tuple(
        Pluck(after=index, operator=unmarked)
        for index, node_field in enumerate(fields[:-1], start=1)
        if node_field.shape.is_iterable and index not in marked
    )
    every = tuple(sorted((*plucks, *crossed), key=lambda pluck: pluck.after))
    first = every[0] if every else Pluck(after=len(fields) - 1, operator=unmarked)
    value = _plucked(fields, every) if every else fields[-1].annotation
    optional_start = iterated is not None and _optional_element(iterated)
    if first.operator == "*" and (optional_start or any(map(_optional, fields[: first.after]))):
        return value | None  # type: ignore[operator]
    return value


def none_on_the_way(
    fields: tuple[NodeField, ...], *, iterated: NodeField | None = None
) -> str | None:
    """What may be ``None`` on the way to the path's last field, said for a hint (the first
    such node or elements), or ``None`` when nothing may be.

    Args:
        fields: The source's fields, starting where the value is read.
        iterated: The list an ``@each`` iterates, when the path starts at its elements.
    """
    if iterated is not None and _optional_element(iterated):
        return f"the elements of {iterated.name!r}"
    for node_field in fields[:-1]:
        if _optional(node_field):
            return repr(node_field.name)
        if node_field.shape.is_iterable and _optional_element(node_field):
            return f"the elements of {node_field.name!r}"
    return None


def _plucked(fields: tuple[NodeField, ...], plucks: tuple[Pluck, ...]) -> object:
    """The values the plucks read, in their lists' levels (``None`` where ``.*.`` finds
    an optional value after its list)."""
    value: object = fields[-1].annotation
    for index in reversed(range(len(plucks))):
        pluck = plucks[index]
        following = plucks[index + 1] if index + 1 < len(plucks) else None
        list_field = fields[pluck.after - 1]
        walked = fields[pluck.after : following.after if following else len(fields)]
        can_be_none = _optional_element(list_field) or any(map(_optional, walked))
        if following is not None and following.operator != "*":
            can_be_none = False
        value = strip_optional(value)[0]
        if pluck.operator == "*" and can_be_none:
            value = value | None  # type: ignore[operator]
        for _ in range(list_field.shape.list_depth):
            value = list[value]  # type: ignore[valid-type]
    return value


def _optional(node_field: NodeField) -> bool:
    return strip_optional(node_field.annotation)[1]


def _element_type(list_field: NodeField) -> object:
    annotation = list_field.annotation
    for _ in range(list_field.shape.list_depth):
        annotation = item_type(strip_optional(annotation)[0])
    return annotation


def _optional_element(list_field: NodeField) -> bool:
    return strip_optional(_element_type(list_field))[1]
