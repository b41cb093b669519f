"""Carry out ``@each``/``@all`` commands on a run's values (DESIGN D6–D8).

``value`` targets are written into the destination's values (converted to the field's
type, copied so that no two places share a value), creating partial nodes where an
``@each`` lays its iterations out; ``prompt`` targets become values for ``{name}``;
``outputs`` targets become context entries. A destination list that already holds a
different number of elements is an error, never a silent truncation.

Values not known yet travel as :class:`Pending` markers. An ``@each`` over a list that a
step will produce runs once, at index ``None``: it sends the marker, and a list of nodes
it writes into becomes a :class:`PendingList` whose element holds what every element
will receive.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterator

from langtree.errors import ConversionError, ExecutionError
from langtree.prompts.state import Address, Output, RunState, elements, to_plain
from langtree.prompts.values import Pending, PendingList, contains_pending, pending_list
from langtree.structure.annotations import item_type, strip_optional
from langtree.structure.compatibility import TypeMappingConfig
from langtree.structure.conversion import convert_value
from langtree.structure.flows import Flow, MappingFlow, TargetScope
from langtree.structure.tree import NodeField

__all__ = ["EXTERNAL", "apply_flow"]

EXTERNAL = Address("prompt.external")
"""Where ``@all->prompt.external`` sends its variables."""

_Indices = tuple[int | None, ...]
_Sent = list[tuple[_Indices, object]]


def apply_flow(
    state: RunState,
    flow: Flow,
    config: TypeMappingConfig,
    *,
    scopes: Collection[TargetScope] = ("value", "prompt", "outputs", "external"),
) -> None:
    """Carry out one command for every instance of the node that holds it.

    Args:
        state: The run's values; changed in place.
        flow: The resolved command.
        config: How values convert to their target fields' types.
        scopes: Which of the command's mappings to carry out (all by default).

    Raises:
        ExecutionError: A value does not fit its target, or a destination list has a
            different length than the iteration.
    """
    mappings = [m for m in flow.mappings if m.scope in scopes]
    for cwd in state.instances(flow.node.tag) if mappings else ():
        values = state.view(cwd)
        if values is not None:
            _apply_at(state, flow, mappings, cwd, values, config)


def _apply_at(
    state: RunState,
    flow: Flow,
    mappings: list[MappingFlow],
    cwd: Address,
    values: dict[str, object],
    config: TypeMappingConfig,
) -> None:
    iterations = _iterations(flow, values)
    for mapping_flow in mappings:
        sent = [
            (indices, _source_value(flow, mapping_flow, element, values))
            for indices, element in iterations
        ]
        if mapping_flow.scope == "value":
            _write(state, flow, mapping_flow, values, sent, config)
        else:
            _send(state, flow, mapping_flow, cwd, sent)


# -- reading ---------------------------------------------------------------------------


def _iterations(flow: Flow, values: dict[str, object]) -> _Sent:
    """One (indices, element) per iteration; an unknown list gives its marker at ``None``."""
    if flow.inclusion is None:
        return [((), values)]
    items: _Sent = [((), values)]
    for node_field in flow.inclusion.fields:
        depth = node_field.shape.list_depth
        items = [
            (indices + inner, element)
            for indices, item in items
            for inner, element in _iterate(_child(item, node_field.name), depth)
        ]
    return items


def _iterate(value: object, depth: int) -> Iterator[tuple[_Indices, object]]:
    """The elements ``depth`` list levels down; nothing for an absent list."""
    if depth == 0:
        yield (), value
    elif isinstance(value, Pending):
        yield (None,) * depth, Pending(value.step_id)
    elif isinstance(value, list):
        for index, element in enumerate(value):
            for inner, item in _iterate(element, depth - 1):
                yield (index, *inner), item


def _child(value: object, name: str) -> object:
    if isinstance(value, Pending):
        return Pending(value.step_id)
    return value.get(name) if isinstance(value, dict) else None


def _source_value(
    flow: Flow, mapping_flow: MappingFlow, element: object, values: dict[str, object]
) -> object:
    source = mapping_flow.source
    if source is None:
        return values
    consumed = len(flow.inclusion.fields) if flow.inclusion else 0
    start = element if flow.inclusion else values
    return _follow(start, source.fields[consumed:])


def _follow(value: object, fields: tuple[NodeField, ...]) -> object:
    """The value at the end of ``fields``; lists crossed on the way give lists."""
    if isinstance(value, Pending):
        return Pending(value.step_id)
    if not fields:
        return value
    node_field, rest = fields[0], fields[1:]
    return _map_levels(_child(value, node_field.name), node_field.shape.list_depth, rest)


def _map_levels(value: object, depth: int, rest: tuple[NodeField, ...]) -> object:
    if depth == 0 or not rest:
        return _follow(value, rest)
    if isinstance(value, Pending):
        return Pending(value.step_id)
    if not isinstance(value, list):
        return value
    return [_map_levels(item, depth - 1, rest) for item in value]


# -- writing value targets -------------------------------------------------------------


def _write(
    state: RunState,
    flow: Flow,
    mapping_flow: MappingFlow,
    values: dict[str, object],
    sent: _Sent,
    config: TypeMappingConfig,
) -> None:
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
        writer.store(start, fields, (), indices, value)


def _has_star(flow: Flow) -> bool:
    return bool(getattr(flow.command.command, "has_multiplicity", False))


def _is_absolute(flow: Flow) -> bool:
    return str(getattr(flow.command.command, "destination_path", "")).startswith("task.")


def _destination_start(state: RunState, flow: Flow, values: dict[str, object]) -> dict[str, object]:
    """The values a destination path starts from: a root task's, or the command's node's."""
    assert flow.destination is not None
    if _is_absolute(flow):
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
    ) -> None:
        """Write ``value`` at ``fields``; ``indices`` pick the elements of the lists crossed.

        Args:
            values: The node values the path starts from.
            fields: The fields from there to the target.
            prefix: The indices used above ``values`` (where the list counts apply).
            indices: The indices still to use, outermost first.
            value: The value to write.
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
            _assign(slot, key, self._convert(value, annotation, node_field, depth))
            return
        child = _get(slot, key)
        if child is None:
            child = {}
            _assign(slot, key, child)
        if isinstance(child, dict):
            self.store(child, rest, prefix, indices, value)

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
            return copy.deepcopy(value)
        try:
            return to_plain(copy.deepcopy(convert_value(value, annotation, self.config)))
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


# -- prompt and outputs targets --------------------------------------------------------


def _send(
    state: RunState, flow: Flow, mapping_flow: MappingFlow, cwd: Address, sent: _Sent
) -> None:
    """Send a ``prompt``/``outputs`` value: the list of per-iteration values for ``@each``."""
    value = _sent_value(flow, sent)
    leaf = _leaf_destination(flow)
    for address in _destination_addresses(state, flow, cwd):
        if mapping_flow.scope == "outputs":
            entry = Output(name=mapping_flow.name, value=value, field=leaf)
            state.outputs.setdefault(address, []).append(entry)
        else:
            sources = state.prompt_values.setdefault((address, mapping_flow.name), [])
            sources.append(value)


def _sent_value(flow: Flow, sent: _Sent) -> object:
    if not flow.is_each:
        return copy.deepcopy(sent[0][1])
    if len(sent) == 1 and None in sent[0][0]:
        return sent[0][1]
    return copy.deepcopy([value for _, value in sent])


def _leaf_destination(flow: Flow) -> str | None:
    """The destination's field when it is a leaf (its step alone sees the entries)."""
    destination = flow.destination
    if destination is None or destination.field is None:
        return None
    return destination.field.name if destination.field.shape.node_class is None else None


def _destination_addresses(state: RunState, flow: Flow, cwd: Address) -> list[Address]:
    """The destination's instances: all for an absolute path, else those under ``cwd``."""
    if flow.destination is None:
        return [EXTERNAL]
    addresses = state.instances(flow.destination.node.tag)
    if _is_absolute(flow):
        return addresses
    return [address for address in addresses if _same_branch(address.indices, cwd.indices)]


def _same_branch(first: _Indices, second: _Indices) -> bool:
    shared = min(len(first), len(second))
    return first[:shared] == second[:shared]
