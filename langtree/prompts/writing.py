"""Write ``value`` targets: the D7 layout of an ``@each``, the broadcast of ``@all ... *``.

Values are converted to the field's type and copied, so that no two places share one;
``@each`` creates the partial nodes its iterations lay out, and a destination list that
already holds a different number of elements is an error, never a silent truncation.
"""

from __future__ import annotations

from collections.abc import Callable

from langtree.errors import ConversionError, ExecutionError
from langtree.prompts.state import RunState, copied, elements
from langtree.prompts.values import Pending, PendingList, contains_pending, pending_list
from langtree.structure.annotations import item_type, strip_optional
from langtree.structure.conversion import convert_value
from langtree.structure.flows import Flow, MappingFlow
from langtree.structure.tree import NodeField
from langtree.structure.type_config import TypeMappingConfig

__all__ = ["is_absolute", "write_values"]

_Indices = tuple[int | None, ...]
_Sent = list[tuple[_Indices, object]]


def write_values(
    state: RunState,
    flow: Flow,
    mapping_flow: MappingFlow,
    values: dict[str, object],
    sent: _Sent,
    config: TypeMappingConfig,
    *,
    assign: Callable[[_Indices], bool] | None = None,
) -> None:
    """Write one mapping's per-iteration values into the destination.

    Args:
        assign: For an ``@each``, which iterations' values to write; the others only get
            their elements (``None``: all iterations are written).
    """
    assert mapping_flow.target is not None
    assert flow.destination is not None
    fields = flow.destination.fields + mapping_flow.target.fields
    start = _destination_start(state, flow, values)
    writer = _Writer(flow, mapping_flow, config)
    if not flow.is_each:
        writer.broadcast(start, fields, sent[0][1], create=not _has_star(flow))
        return
    levels = min(sum(f.shape.list_depth for f in fields), flow.depth)
    laid_out = _lay_out(sent, levels)
    writer.counts = _counts([indices for indices, _ in laid_out])
    if not laid_out:
        writer.empty(start, fields)
    for indices, value in laid_out:
        writer.store(start, fields, (), indices, value, assign=assign is None or assign(indices))


def _has_star(flow: Flow) -> bool:
    return bool(getattr(flow.command.command, "has_multiplicity", False))


def is_absolute(flow: Flow) -> bool:
    return str(getattr(flow.command.command, "destination_path", "")).startswith("task.")


def _destination_start(state: RunState, flow: Flow, values: dict[str, object]) -> dict[str, object]:
    """The values a destination path starts from: a root task's, or the command's node's."""
    assert flow.destination is not None
    if is_absolute(flow):
        return state.roots[state.registry.path(flow.destination.node.tag)[0].tag]
    return values


def _lay_out(sent: _Sent, levels: int) -> _Sent:
    """Group per-iteration values by their first ``levels`` indices.

    A target with fewer list levels than the iteration receives, at each of its
    elements, nested lists of what the deeper iterations send.
    """
    grouped: dict[_Indices, _Sent] = {}
    for indices, value in sent:
        grouped.setdefault(indices[:levels], []).append((indices[levels:], value))
    return [(key, _nest(items)) for key, items in grouped.items()]


def _nest(items: _Sent) -> object:
    """One value, or nested lists along the remaining indices (a marker for unknown ones)."""
    suffix, value = items[0]
    if not suffix or suffix[0] is None:
        return value
    groups: dict[int | None, _Sent] = {}
    for indices, item in items:
        groups.setdefault(indices[0], []).append((indices[1:], item))
    return [_nest(group) for group in groups.values()]


def _counts(keys: list[_Indices]) -> dict[_Indices, int]:
    """For each index prefix, how many elements the list below it holds."""
    counts: dict[_Indices, int] = {}
    for key in keys:
        for depth, index in enumerate(key):
            if index is None:
                break
            prefix = key[:depth]
            counts[prefix] = max(counts.get(prefix, 0), index + 1)
    return counts


class _Writer:
    """Writes one mapping's values along a field path, one list index per list level."""

    def __init__(self, flow: Flow, mapping_flow: MappingFlow, config: TypeMappingConfig) -> None:
        self.flow = flow
        self.mapping_flow = mapping_flow
        self.config = config
        self.counts: dict[_Indices, int] = {}

    def store(
        self,
        values: dict[str, object],
        fields: tuple[NodeField, ...],
        prefix: _Indices,
        indices: _Indices,
        value: object,
        *,
        assign: bool = True,
    ) -> None:
        """Write ``value`` at ``fields``; ``indices`` pick the elements of the lists crossed.

        Args:
            values: The node values the path starts from.
            fields: The fields from there to the target.
            prefix: The indices used above ``values`` (where the list counts apply).
            indices: The indices still to use, outermost first.
            value: The value to write.
            assign: Whether to write the value, or only to make the elements on the way.
        """
        node_field, rest = fields[0], fields[1:]
        slot: object = values
        key: object = node_field.name
        depth = node_field.shape.list_depth
        annotation = node_field.annotation
        while depth and indices:
            if indices[0] is None:
                self._store_unknown(slot, key, node_field, depth, rest, value)
                return
            leaf = not rest or depth > 1
            container = self._list_at(slot, key, prefix, node_field, leaf=leaf)
            slot, key, prefix, indices = container, indices[0], (*prefix, indices[0]), indices[1:]
            depth -= 1
            annotation = item_type(strip_optional(annotation)[0])
        if not rest:
            if assign:
                _assign(slot, key, self._convert(value, annotation, node_field, depth))
            return
        child = _get(slot, key)
        if child is None:
            child = {}
            _assign(slot, key, child)
        if isinstance(child, dict):
            self.store(child, rest, prefix, indices, value, assign=assign)

    def _store_unknown(
        self,
        slot: object,
        key: object,
        node_field: NodeField,
        depth: int,
        rest: tuple[NodeField, ...],
        value: object,
    ) -> None:
        """Write into every element of a list whose length is not known yet."""
        if not isinstance(value, Pending):
            return
        if not rest:
            _assign(slot, key, _marker(value, node_field, depth))
            return
        current = _get(slot, key)
        if not (isinstance(current, list) and current) and not isinstance(current, PendingList):
            current = pending_list(value.step_id, depth)
            _assign(slot, key, current)
        for _, element in elements(current, depth):
            if isinstance(element, dict):
                self.store(element, rest, (None,), (None,) * _levels(rest), value)

    def _list_at(
        self,
        slot: object,
        key: object,
        prefix: _Indices,
        node_field: NodeField,
        *,
        leaf: bool,
    ) -> list[object]:
        """The list at ``slot[key]``, made to hold one element per iteration."""
        current = _get(slot, key)
        expected = self.counts.get(prefix, 0)
        if current is None or current == [] or isinstance(current, Pending):
            current = [None if leaf else {} for _ in range(expected)]
            _assign(slot, key, current)
        if not isinstance(current, list):
            raise self._error(
                f"{self.mapping_flow.mapping.target_path!r} cannot be written: "
                f"{node_field.name!r} holds {type(current).__name__!r}, not a list",
                f"supply a list for {node_field.name!r}, or leave it unset",
            )
        if len(current) != expected:
            raise self._mismatch(node_field, len(current), expected)
        return current

    def empty(self, values: dict[str, object], fields: tuple[NodeField, ...]) -> None:
        """Make the first list on the path an empty list when it is unset (no iteration)."""
        for node_field in fields:
            if node_field.shape.list_depth:
                current = values.setdefault(node_field.name, [])
                if isinstance(current, list) and current:
                    raise self._mismatch(node_field, len(current), 0)
                return
            child = values.setdefault(node_field.name, {})
            if not isinstance(child, dict):
                return
            values = child

    def broadcast(
        self,
        values: dict[str, object],
        fields: tuple[NodeField, ...],
        value: object,
        *,
        create: bool,
    ) -> None:
        """Write ``value`` through every element of the lists on the way (``@all``).

        Args:
            create: Whether to create the nodes on the way (``@all`` without ``*``);
                otherwise only the elements that exist or will be generated are filled.
        """
        node_field, rest = fields[0], fields[1:]
        if not rest:
            values[node_field.name] = self._convert(value, node_field.annotation, node_field, 0)
            return
        current = values.get(node_field.name)
        if current is None and create and not node_field.shape.list_depth:
            current = values[node_field.name] = {}
        for _, element in elements(current, node_field.shape.list_depth):
            if isinstance(element, dict):
                self.broadcast(element, rest, value, create=create)

    def _convert(
        self, value: object, annotation: object, node_field: NodeField, depth: int
    ) -> object:
        """``value`` converted to ``annotation`` (``depth``: list levels still in it)."""
        if isinstance(value, Pending):
            return _marker(value, node_field, depth)
        if value is None or contains_pending(value):
            return copied(value)
        try:
            return copied(convert_value(value, annotation, self.config))
        except ConversionError as error:
            raise self._error(
                f"{self.mapping_flow.mapping.target_path!r} cannot take the value sent: {error}",
                f"check the value of the source, or the type of {node_field.name!r}",
            ) from error

    def _mismatch(self, node_field: NodeField, length: int, expected: int) -> ExecutionError:
        inclusion = getattr(self.flow.command.command, "inclusion_path", "") or node_field.name
        return self._error(
            f"Length mismatch: the @each over {inclusion!r} sends {expected} value(s) to "
            f"{self.mapping_flow.mapping.target_path!r}, but {node_field.name!r} already "
            f"holds {length} element(s)",
            f"leave {node_field.name!r} empty for the command to fill, or give it one "
            "element per iteration",
        )

    def _error(self, message: str, hint: str) -> ExecutionError:
        diagnostic = self.flow.command.diagnostic(
            message, hint=hint, span=self.mapping_flow.mapping.span
        )
        return ExecutionError(diagnostic.render().removeprefix("error: "))


def _levels(fields: tuple[NodeField, ...]) -> int:
    return sum(node_field.shape.list_depth for node_field in fields)


def _marker(value: Pending, node_field: NodeField, depth: int) -> Pending:
    """A fresh marker; a :class:`PendingList` where a list of nodes is still to come."""
    if depth and node_field.shape.node_class is not None:
        return pending_list(value.step_id, depth)
    return Pending(value.step_id)


def _get(slot: object, key: object) -> object:
    if isinstance(slot, dict):
        return slot.get(str(key))
    if isinstance(slot, list) and isinstance(key, int) and key < len(slot):
        return slot[key]
    return None


def _assign(slot: object, key: object, value: object) -> None:
    if isinstance(slot, dict):
        slot[str(key)] = value
    elif isinstance(slot, list) and isinstance(key, int):
        slot[key] = value
