"""Carry out ``@each``/``@all`` commands on a run's values (DESIGN D6–D8).

``value`` targets are written into the destination's values (converted to the field's
type), creating partial nodes where an ``@each`` lays its iterations out; ``prompt``
targets become values for ``{name}``; ``outputs`` targets become context entries. A
destination list that already holds a different number of elements is an error, never a
silent truncation. Values not known yet travel as :class:`Pending` markers.
"""

from __future__ import annotations

from langtree.errors import ConversionError, ExecutionError
from langtree.prompts.state import Address, RunState, elements
from langtree.prompts.values import Pending, contains_pending
from langtree.structure.annotations import item_type, strip_optional
from langtree.structure.compatibility import TypeMappingConfig
from langtree.structure.conversion import convert_value
from langtree.structure.flows import Flow, MappingFlow
from langtree.structure.tree import NodeField

__all__ = ["EXTERNAL", "apply_flow"]

EXTERNAL = Address("prompt.external")
"""Where ``@all->prompt.external`` sends its variables."""

_Iteration = tuple[tuple[int, ...], object]


def apply_flow(state: RunState, flow: Flow, config: TypeMappingConfig) -> None:
    """Carry out one command for every known instance of the node that holds it.

    Raises:
        ExecutionError: A value does not fit its target, or a destination list has a
            different length than the iteration.
    """
    for cwd in state.instances(flow.node.tag):
        values = state.instance(cwd)
        if values is not None and None not in cwd.indices:
            _apply_at(state, flow, cwd, values, config)


def _apply_at(
    state: RunState, flow: Flow, cwd: Address, values: dict[str, object], config: TypeMappingConfig
) -> None:
    iterations = _iterations(flow, values)
    if iterations is None:
        return
    for mapping_flow in flow.mappings:
        sent = [
            (indices, _source_value(flow, mapping_flow, element, values))
            for indices, element in iterations
        ]
        if mapping_flow.scope == "value":
            _write(state, flow, mapping_flow, cwd, sent, config)
        else:
            _send(state, flow, mapping_flow, cwd, [value for _, value in sent])


# -- reading ---------------------------------------------------------------------------


def _iterations(flow: Flow, values: dict[str, object]) -> list[_Iteration] | None:
    """One (indices, element) per iteration; ``None`` while the list is not known yet."""
    if flow.inclusion is None:
        return [((), values)]
    items: list[_Iteration] = [((), values)]
    for node_field in flow.inclusion.fields:
        expanded: list[_Iteration] = []
        for indices, item in items:
            value = item.get(node_field.name) if isinstance(item, dict) else None
            for inner, element in elements(value, node_field.shape.list_depth):
                if None in inner:
                    return None
                expanded.append((indices + tuple(i for i in inner if i is not None), element))
        items = expanded
    return items


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
    if not fields:
        return value
    if isinstance(value, Pending):
        return value
    node_field, rest = fields[0], fields[1:]
    inner = value.get(node_field.name) if isinstance(value, dict) else None
    return _map_levels(inner, node_field.shape.list_depth if rest else 0, rest)


def _map_levels(value: object, depth: int, rest: tuple[NodeField, ...]) -> object:
    if depth == 0:
        return _follow(value, rest)
    if not isinstance(value, list):
        return value
    return [_map_levels(item, depth - 1, rest) for item in value]


# -- writing value targets -------------------------------------------------------------


def _write(
    state: RunState,
    flow: Flow,
    mapping_flow: MappingFlow,
    cwd: Address,
    sent: list[tuple[tuple[int, ...], object]],
    config: TypeMappingConfig,
) -> None:
    target = mapping_flow.target
    assert target is not None
    assert flow.destination is not None
    fields = flow.destination.fields + target.fields
    start = _destination_start(state, flow, cwd)
    writer = _Writer(mapping_flow.mapping.target_path, config)
    if not flow.is_each:
        writer.broadcast(start, fields, sent[0][1])
        return
    levels = min(sum(f.shape.list_depth for f in fields), flow.depth)
    laid_out = _lay_out(sent, levels)
    writer.counts = _counts([indices for indices, _ in laid_out])
    for indices, value in laid_out:
        writer.store(start, fields, indices, value)


def _destination_start(state: RunState, flow: Flow, cwd: Address) -> dict[str, object]:
    assert flow.destination is not None
    command = flow.command.command
    if getattr(command, "destination_path", "").startswith("task."):
        return state.roots[state.registry.path(flow.destination.node.tag)[0].tag]
    values = state.instance(cwd)
    assert values is not None
    return values


def _lay_out(
    sent: list[tuple[tuple[int, ...], object]], levels: int
) -> list[tuple[tuple[int, ...], object]]:
    """Group per-iteration values by their first ``levels`` indices; deeper ones as lists."""
    grouped: dict[tuple[int, ...], list[object]] = {}
    for indices, value in sent:
        grouped.setdefault(indices[:levels], []).append(value)
    deeper = bool(sent) and len(sent[0][0]) > levels
    return [(key, values if deeper else values[0]) for key, values in grouped.items()]


def _counts(keys: list[tuple[int, ...]]) -> dict[tuple[int, ...], int]:
    """For each index prefix, how many elements the list below it holds."""
    counts: dict[tuple[int, ...], int] = {}
    for key in keys:
        for depth in range(len(key)):
            prefix = key[:depth]
            counts[prefix] = max(counts.get(prefix, 0), key[depth] + 1)
    return counts


class _Writer:
    """Writes one mapping's values along a field path, one list index per list level."""

    def __init__(self, target_path: str, config: TypeMappingConfig) -> None:
        self.target_path = target_path
        self.config = config
        self.counts: dict[tuple[int, ...], int] = {}

    def store(
        self,
        values: dict[str, object],
        fields: tuple[NodeField, ...],
        indices: tuple[int, ...],
        value: object,
    ) -> None:
        consumed: tuple[int, ...] = ()
        for position, node_field in enumerate(fields):
            last = position == len(fields) - 1
            slot: object = values
            name: object = node_field.name
            annotation = node_field.annotation
            for _ in range(node_field.shape.list_depth):
                if len(consumed) == len(indices):
                    break
                container = self._list_at(slot, name, consumed, node_field, leaf=last)
                if container is None:
                    return
                slot, name = container, indices[len(consumed)]
                consumed += (indices[len(consumed)],)
                annotation = item_type(strip_optional(annotation)[0])
            if last:
                _assign(slot, name, self._convert(value, annotation, node_field))
                return
            child = _get(slot, name)
            if child is None:
                child = {}
                _assign(slot, name, child)
            if not isinstance(child, dict):
                return
            values = child

    def _list_at(
        self,
        slot: object,
        name: object,
        consumed: tuple[int, ...],
        node_field: NodeField,
        *,
        leaf: bool,
    ) -> list[object] | None:
        current = _get(slot, name)
        if current is None:
            current = []
            _assign(slot, name, current)
        if not isinstance(current, list):
            return None
        expected = self.counts.get(consumed, 0)
        if not current:
            current.extend(None if leaf else {} for _ in range(expected))
        elif len(current) != expected:
            raise ExecutionError(
                f"Length mismatch writing {self.target_path!r}: {node_field.name!r} holds "
                f"{len(current)} element(s), the iteration sends {expected}"
            )
        return current

    def broadcast(
        self, values: dict[str, object], fields: tuple[NodeField, ...], value: object
    ) -> None:
        """Write ``value`` through every element of the lists on the way (``@all``)."""
        node_field, rest = fields[0], fields[1:]
        if not rest:
            values[node_field.name] = self._convert(value, node_field.annotation, node_field)
            return
        current = values.setdefault(node_field.name, [] if node_field.shape.list_depth else {})
        for _, element in elements(current, node_field.shape.list_depth):
            if isinstance(element, dict):
                self.broadcast(element, rest, value)

    def _convert(self, value: object, annotation: object, node_field: NodeField) -> object:
        if value is None or isinstance(value, Pending) or contains_pending(value):
            return value
        try:
            return convert_value(value, annotation, self.config)
        except ConversionError as error:
            raise ExecutionError(
                f"Cannot write {self.target_path!r} (field {node_field.name!r}): {error}"
            ) from error


def _get(slot: object, name: object) -> object:
    if isinstance(slot, dict):
        return slot.get(str(name))
    if isinstance(slot, list) and isinstance(name, int) and name < len(slot):
        return slot[name]
    return None


def _assign(slot: object, name: object, value: object) -> None:
    if isinstance(slot, dict):
        slot[str(name)] = value
    elif isinstance(slot, list) and isinstance(name, int):
        slot[name] = value


# -- prompt and outputs targets --------------------------------------------------------


def _send(
    state: RunState, flow: Flow, mapping_flow: MappingFlow, cwd: Address, values: list[object]
) -> None:
    value: object = values if flow.is_each else values[0]
    for address in _destination_addresses(state, flow, cwd):
        if mapping_flow.scope == "outputs":
            state.outputs.setdefault(address, []).append((mapping_flow.name, value))
        else:
            sources = state.prompt_values.setdefault((address, mapping_flow.name), [])
            sources.append(value)


def _destination_addresses(state: RunState, flow: Flow, cwd: Address) -> list[Address]:
    if flow.destination is None:
        return [EXTERNAL]
    tag = flow.destination.node.tag
    if flow.destination.field is not None and flow.destination.field.shape.node_class is None:
        tag = flow.destination.node.tag
    return [
        address
        for address in state.instances(tag)
        if address.indices[: len(cwd.indices)] == cwd.indices or not _shares_root(state, tag, cwd)
    ]


def _shares_root(state: RunState, tag: str, cwd: Address) -> bool:
    return state.registry.path(tag)[0].tag == state.registry.path(cwd.tag)[0].tag
