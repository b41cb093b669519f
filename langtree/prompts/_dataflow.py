"""Carry out ``@each``/``@all`` commands on a run's values (DESIGN D6–D8).

``value`` targets are written into the destination's values (converted to the field's
type, copied so that no two places share a value), creating partial nodes where an
``@each`` lays its iterations out; ``prompt`` targets become values for ``{name}``;
``outputs`` targets, and ``prompt`` targets that no text names, become context entries.
A destination list that already holds a different number of elements is an error, never
a silent truncation.

A source that was never produced travels as `Absent` (not ``None``), located by
where it was read. A path that crosses a list without a pluck keeps ``None`` for an
element whose value is ``None``, and `Absent` for one whose value was never produced,
as ``.*.`` does.

Values not known yet travel as `Pending` markers. An ``@each`` over a list that a
step will produce runs once, at index ``None``: it sends the marker, and a list of nodes
it writes into becomes a `PendingList` whose element holds what every element
will receive.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterator
from dataclasses import replace

from langtree.errors import ExecutionError
from langtree.prompts._missing_values import iteration_path, report_unsent
from langtree.prompts._plucking import pluck_values
from langtree.prompts._state import Address, Indices, Output, RunState, Sent, copied, instance_text
from langtree.prompts._values import Absent, Pending, first_absent
from langtree.prompts._writing import is_absolute, write_values
from langtree.structure import (
    Flow,
    MappingFlow,
    NodeField,
    TargetScope,
    TypeMappingConfig,
    in_context,
    input_only,
    leaf_destination,
)

__all__ = ["EXTERNAL", "apply_flow", "write_iterations"]

EXTERNAL = Address("prompt.external")
"""Where ``@all->prompt.external`` sends its variables."""


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


def write_iterations(
    state: RunState,
    flow: Flow,
    config: TypeMappingConfig,
    assign: Callable[[MappingFlow, Indices], bool],
) -> None:
    """Carry out an element-wise ``@each``'s ``value`` mappings for some iterations.

    Every iteration gets its destination element; ``assign`` picks, per mapping, the
    iterations whose values are written (their sources are known).

    Raises:
        ExecutionError: As `apply_flow()`.
    """
    mappings = [m for m in flow.mappings if m.scope == "value"]
    for cwd in state.instances(flow.node.tag):
        values = state.view(cwd)
        if values is not None:
            _apply_at(state, flow, mappings, cwd, values, config, assign=assign)


def _apply_at(
    state: RunState,
    flow: Flow,
    mappings: list[MappingFlow],
    cwd: Address,
    values: dict[str, object],
    config: TypeMappingConfig,
    *,
    assign: Callable[[MappingFlow, Indices], bool] | None = None,
) -> None:
    iterations = _iterations(flow, values)
    origin = f"{instance_text(state.registry, cwd)}."
    for mapping_flow in mappings:
        sent: Sent = [
            (indices, _source_value(flow, mapping_flow, element, values, indices, origin))
            for indices, element in iterations
        ]
        if mapping_flow.scope != "value":
            _send(state, flow, mapping_flow, cwd, sent)
        elif assign is None:
            write_values(state, flow, mapping_flow, values, sent, config, cwd=cwd)
        else:
            picked = functools.partial(assign, mapping_flow)
            write_values(state, flow, mapping_flow, values, sent, config, cwd=cwd, assign=picked)


# -- reading ---------------------------------------------------------------------------


def _iterations(flow: Flow, values: dict[str, object]) -> Sent:
    """One (indices, element) per iteration; an unknown list gives its marker at ``None``."""
    if flow.inclusion is None:
        return [((), values)]
    items: Sent = [((), values)]
    for node_field in flow.inclusion.fields:
        depth = node_field.shape.list_depth
        items = [
            (indices + inner, element)
            for indices, item in items
            for inner, element in _iterate(_child(item, node_field), depth)
        ]
    return items


def _iterate(value: object, depth: int) -> Iterator[tuple[Indices, object]]:
    """The elements ``depth`` list levels down; nothing for an absent list."""
    if depth == 0:
        yield (), value
    elif isinstance(value, Pending):
        yield (None,) * depth, Pending(value.step_id)
    elif isinstance(value, list):
        for index, element in enumerate(value):
            for inner, item in _iterate(element, depth - 1):
                yield (index, *inner), item


def _child(value: object, node_field: NodeField) -> object:
    """A node's field: `Absent` when the node lacks it (or is absent itself), except a
    field only the caller gives, which may be left out: then ``None``, its default."""
    if isinstance(value, Pending):
        return Pending(value.step_id)
    if isinstance(value, Absent):
        return value
    if not isinstance(value, dict):
        return None
    if node_field.name in value:
        return value[node_field.name]
    return None if input_only(node_field) else Absent()


def _source_value(
    flow: Flow,
    mapping_flow: MappingFlow,
    element: object,
    values: dict[str, object],
    indices: Indices,
    origin: str,
) -> object:
    """The value a mapping reads for one iteration; a value never produced is `Absent`,
    located from ``origin``, the command's instance (``'task.book.'``)."""
    source = mapping_flow.source
    if mapping_flow.mapping.literal is not None:
        return mapping_flow.mapping.literal
    if source is None:
        return values
    consumed = len(flow.inclusion.fields) if flow.inclusion else 0
    start = element if flow.inclusion else values
    where = iteration_path(flow, indices)
    if not mapping_flow.plucks:
        return _follow(start, source.fields[consumed:], origin + where)
    plucks = tuple(replace(pluck, after=pluck.after - consumed) for pluck in mapping_flow.plucks)
    return pluck_values(
        start,
        source.fields[consumed:],
        plucks,
        where=where,
        fail=functools.partial(_pluck_error, flow, mapping_flow),
        absent=functools.partial(_absent_at, origin),
    )


def _absent_at(origin: str, path: str) -> Absent:
    """A value never produced, read at ``path`` from the instance ``origin``."""
    return Absent(origin + path)


def _pluck_error(flow: Flow, mapping_flow: MappingFlow, message: str, hint: str) -> ExecutionError:
    source = mapping_flow.mapping.resolved_source_path
    diagnostic = flow.command.diagnostic(
        f"Pluck {source!r} {message}", hint=hint, span=mapping_flow.mapping.span
    )
    return ExecutionError(diagnostic.render().removeprefix("error: "))


def _follow(value: object, fields: tuple[NodeField, ...], where: str) -> object:
    """The value at the end of ``fields``; lists crossed on the way give lists. A value
    never produced is `Absent` at its full path: ``where`` (how ``value`` reads,
    ``'task.book.'``) and the names of ``fields``."""
    if isinstance(value, Pending):
        return Pending(value.step_id)
    if not fields:
        return value
    node_field, rest = fields[0], fields[1:]
    child = _child(value, node_field)
    if isinstance(child, Absent) and not child.source:
        child = Absent(where + ".".join(f.name for f in fields))
    return _map_levels(child, node_field.shape.list_depth, rest, where + node_field.name)


def _map_levels(value: object, depth: int, rest: tuple[NodeField, ...], where: str) -> object:
    if depth == 0 or not rest:
        return _follow(value, rest, where + ".")
    if isinstance(value, Pending):
        return Pending(value.step_id)
    if not isinstance(value, list):
        return value
    return [
        _map_levels(item, depth - 1, rest, f"{where}[{index}]") for index, item in enumerate(value)
    ]


# -- prompt and outputs targets --------------------------------------------------------


def _send(state: RunState, flow: Flow, mapping_flow: MappingFlow, cwd: Address, sent: Sent) -> None:
    """Send a ``prompt``/``outputs`` value: the list of per-iteration values for ``@each``.

    A context entry (``outputs``, or a ``prompt`` value no text names, see `in_context()`)
    joins the destination's entries; any other ``prompt`` value fills its ``{name}``.
    Such a target has no default: a source never produced is a missing value.
    """
    absent = first_absent([value for _, value in sent])
    if absent is not None:
        whole = any(value is absent for _, value in sent)
        report_unsent(state, flow, mapping_flow, absent, whole=whole)
        return
    value = _sent_value(flow, sent)
    leaf = leaf_destination(flow)
    entry = in_context(flow, mapping_flow)
    # Values that several commands (or instances) send to one place keep their definition
    # order, whichever was carried out first.
    order = (flow.position, *(-1 if index is None else index for index in cwd.indices))
    for address in _destination_addresses(state, flow, cwd):
        if entry:
            output = Output(name=mapping_flow.name, value=value, field=leaf)
            state.send_output(address, output, order)
        else:
            state.send_prompt_value(address, mapping_flow.name, value, order)


def _sent_value(flow: Flow, sent: Sent) -> object:
    if not flow.is_each:
        return copied(sent[0][1])
    if len(sent) == 1 and None in sent[0][0]:
        return sent[0][1]
    return copied([value for _, value in sent])


def _destination_addresses(state: RunState, flow: Flow, cwd: Address) -> list[Address]:
    """The destination's instances: all for an absolute path, else those under ``cwd``."""
    if flow.destination is None:
        return [EXTERNAL]
    addresses = state.instances(flow.destination.node.tag)
    if is_absolute(flow):
        return addresses
    return [address for address in addresses if _same_branch(address.indices, cwd.indices)]


def _same_branch(first: Indices, second: Indices) -> bool:
    shared = min(len(first), len(second))
    return first[:shared] == second[:shared]
