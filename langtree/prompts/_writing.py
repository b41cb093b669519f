"""Write ``value`` targets: the D7 layout of an ``@each``, the broadcast of ``@all ... *``.

Values are converted to the field's type and copied, so that no two places share one;
``@each`` creates the partial nodes its iterations lay out, and a destination list that
already holds a different number of elements is an error, never a silent truncation.

Null and absent differ (the path-expression specification's "Type Handling"). A source
that is ``None`` sends ``None``, and a target whose type does not accept it is an error.
A source that was never produced (`Absent`) gives the
target field its default (``default`` or ``default_factory``); a target without one (a
required field, a list element, a prompt variable or a context entry) is a missing value
(`report_missing()`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from langtree.errors import ConversionError, ExecutionError
from langtree.prompts._missing_values import rendered, report_missing, source_text
from langtree.prompts._state import (
    Address,
    Indices,
    RunState,
    Sent,
    copied,
    elements,
    in_field_order,
    instance_text,
)
from langtree.prompts._values import (
    Absent,
    Pending,
    PendingList,
    contains_pending,
    first_absent,
    pending_list,
)
from langtree.structure import (
    Flow,
    MappingFlow,
    Node,
    NodeField,
    TypeMappingConfig,
    accepts_none,
    convert_value,
    display_name,
    item_type,
    render_type,
    strip_optional,
)

__all__ = ["is_absolute", "write_values"]


def write_values(
    state: RunState,
    flow: Flow,
    mapping_flow: MappingFlow,
    values: dict[str, object],
    sent: Sent,
    config: TypeMappingConfig,
    *,
    cwd: Address,
    assign: Callable[[Indices], bool] | None = None,
) -> None:
    """Write one mapping's per-iteration values into the destination.

    Args:
        state: The run's values; changed in place.
        flow: The command.
        mapping_flow: The mapping, a ``value`` one.
        values: The values of ``cwd``.
        sent: The values, one per iteration (with its indices).
        config: How values convert to the target's type.
        cwd: The instance of the command's node that sends the values.
        assign: For an ``@each``, which iterations' values to write; the others only get
            their elements (``None``: all iterations are written).

    Raises:
        ExecutionError: A value does not fit its target (``None`` included), a source was
            never produced for a target without a default (unless the state keeps
            missing values), or a destination list has another length.
    """
    assert mapping_flow.target is not None
    assert flow.destination is not None
    fields = flow.destination.fields + mapping_flow.target.fields
    start = _destination_start(state, flow, values)
    writer = _Writer(state, flow, mapping_flow, config, cwd)
    if not flow.is_each:
        writer.broadcast(start, fields, sent[0][1], create=not _has_star(flow))
        return
    levels = min(sum(f.shape.list_depth for f in fields), flow.depth)
    laid_out = _lay_out(sent, levels)
    writer.counts = _counts([indices for indices, _ in laid_out])
    if not laid_out:
        writer.empty(start, fields)
    for indices, value in laid_out:
        writer.iteration = indices
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


def _lay_out(sent: Sent, levels: int) -> Sent:
    """Group per-iteration values by their first ``levels`` indices.

    A target with fewer list levels than the iteration receives, at each of its
    elements, nested lists of what the deeper iterations send.
    """
    grouped: dict[Indices, Sent] = {}
    for indices, value in sent:
        grouped.setdefault(indices[:levels], []).append((indices[levels:], value))
    return [(key, _nest(items)) for key, items in grouped.items()]


def _nest(items: Sent) -> object:
    """One value, or nested lists along the remaining indices (a marker for unknown ones)."""
    suffix, value = items[0]
    if not suffix or suffix[0] is None:
        return value
    groups: dict[int | None, Sent] = {}
    for indices, item in items:
        groups.setdefault(indices[0], []).append((indices[1:], item))
    return [_nest(group) for group in groups.values()]


def _counts(keys: list[Indices]) -> dict[Indices, int]:
    """For each index prefix, how many elements the list below it holds."""
    counts: dict[Indices, int] = {}
    for key in keys:
        for depth, index in enumerate(key):
            if index is None:
                break
            prefix = key[:depth]
            counts[prefix] = max(counts.get(prefix, 0), index + 1)
    return counts


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a value is written: the target field, the indices of the elements crossed
    from the destination's start down to the node that holds it, and the indices of the
    field's own list levels (``element``) when the value goes into an element."""

    node_field: NodeField
    holder: Indices
    element: Indices


class _Skip:
    """What `_Writer._convert()` gives for a missing value kept in the state: the
    target is left as it is."""


_SKIP = _Skip()


@dataclass(slots=True)
class _Writer:
    """Writes one mapping's values along a field path, one list index per list level.

    Attributes:
        counts: For each index prefix, how many elements the list below it holds.
        iteration: The indices of the iteration whose value is being written.
        holder: The node that holds the mapping's target field.
    """

    state: RunState
    flow: Flow
    mapping_flow: MappingFlow
    config: TypeMappingConfig
    cwd: Address
    counts: dict[Indices, int] = field(default_factory=dict)
    iteration: Indices = ()
    holder: Node = field(init=False)

    def __post_init__(self) -> None:
        assert self.mapping_flow.target is not None
        key = self.mapping_flow.target.field_key
        assert key is not None
        holder = self.state.registry.get(key.node_tag)
        assert holder is not None
        self.holder = holder

    def store(
        self,
        values: dict[str, object],
        fields: tuple[NodeField, ...],
        prefix: Indices,
        indices: Indices,
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
        element: Indices = ()
        while depth and indices:
            if indices[0] is None:
                self._store_unknown(slot, key, node_field, depth, rest, value)
                return
            leaf = not rest or depth > 1
            container = self._list_at(slot, key, prefix, node_field, leaf=leaf)
            slot, key, prefix, indices = container, indices[0], (*prefix, indices[0]), indices[1:]
            element = (*element, prefix[-1])
            depth -= 1
            annotation = item_type(strip_optional(annotation)[0])
        if not rest:
            if assign:
                place = _Place(node_field, prefix[: len(prefix) - len(element)], element)
                converted = self._convert(value, annotation, place, depth)
                if converted is not _SKIP:
                    _assign(slot, key, converted)
                    if isinstance(slot, dict):
                        in_field_order(slot, self.holder)
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
        prefix: Indices,
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
        prefix: Indices = (),
    ) -> None:
        """Write ``value`` through every element of the lists on the way (``@all``).

        Args:
            create: Whether to create the nodes on the way (``@all`` without ``*``);
                otherwise only the elements that exist or will be generated are filled.
            prefix: The indices of the elements above ``values``.
        """
        node_field, rest = fields[0], fields[1:]
        if not rest:
            place = _Place(node_field, prefix, ())
            converted = self._convert(value, node_field.annotation, place, 0)
            if converted is not _SKIP:
                values[node_field.name] = converted
                in_field_order(values, self.holder)
            return
        current = values.get(node_field.name)
        if current is None and create and not node_field.shape.list_depth:
            current = values[node_field.name] = {}
        for indices, element in elements(current, node_field.shape.list_depth):
            if isinstance(element, dict):
                self.broadcast(element, rest, value, create=create, prefix=(*prefix, *indices))

    def _convert(self, value: object, annotation: object, place: _Place, depth: int) -> object:
        """``value`` converted to ``annotation`` (``depth``: list levels still in it)."""
        if isinstance(value, Pending):
            return _marker(value, place.node_field, depth)
        absent = first_absent(value)
        if absent is not None:
            return self._absent(absent, place, whole=absent is value)
        if value is None:
            self._check_none(annotation, place)
            return None
        if contains_pending(value):
            return copied(value)
        try:
            return copied(convert_value(value, annotation, self.config))
        except ConversionError as error:
            raise self._error(
                f"{self.mapping_flow.mapping.target_path!r} cannot take the value sent: {error}",
                f"check the value of the source, or the type of {place.node_field.name!r}",
            ) from error

    def _target(self, place: _Place) -> tuple[str, str]:
        """The target as messages name it, ``'Row.summary'`` or ``'TaskAnswer.findings[1]'``,
        and where its node stands when that is not a root task (`` in 'task.table.rows[1]'``).
        """
        indices = "".join(f"[{'*' if index is None else index}]" for index in place.element)
        name = repr(f"{display_name(self.holder.node_class)}.{place.node_field.name}{indices}")
        if self.holder.parent is None:
            return name, ""
        above = () if is_absolute(self.flow) else self.cwd.indices
        address = Address(self.holder.tag, (*above, *place.holder))
        return name, f" in {instance_text(self.state.registry, address)!r}"

    def _absent(self, absent: Absent, place: _Place, *, whole: bool) -> object:
        """The target field's default for a source never produced, else a missing value.

        Only a field has a default: an element of a list field, or a value with an
        absent item inside (``whole`` is ``False``), has none.
        """
        info = self.holder.node_class.model_fields[place.node_field.name]
        if whole and not place.element and not info.is_required():
            if info.default_factory_takes_validated_data:
                return _SKIP  # it needs the other fields: pydantic makes it at the end
            return copied(info.get_default(call_default_factory=True))
        name, where = self._target(place)
        if place.element or not whole:
            reason = "a list element has no default"
            hint = (
                "map into a field of the list's nodes, which can have a default, or send the"
                " list with '@all' and a '.**.' pluck path, which leaves absent values out"
            )
        else:
            reason = "the field has no default"
            hint = (
                f"give {name} a default (Field(default=...) or default_factory=...) for"
                " when its source is absent"
            )
        target = name + where
        report_missing(self.state, self.flow, self.mapping_flow, absent, target, reason, hint)
        return _SKIP

    def _check_none(self, annotation: object, place: _Place) -> None:
        """Refuse a ``None`` for a target that does not accept it.

        Raises:
            ExecutionError: Naming the source, the target and its type.
        """
        if accepts_none(annotation):
            return
        source = source_text(self.state, self.flow, self.mapping_flow, self.cwd, self.iteration)
        (name, where), shown = self._target(place), render_type(annotation)
        raise self._error(
            f"{source!r} is None, and {name} ({shown}){where} does not accept None",
            f"declare {name} as {shown} | None, or make sure the source has a value",
        )

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
        return ExecutionError(rendered(self.flow, self.mapping_flow, message, hint))


def _levels(fields: tuple[NodeField, ...]) -> int:
    return sum(node_field.shape.list_depth for node_field in fields)


def _marker(value: Pending, node_field: NodeField, depth: int) -> Pending:
    """A fresh marker; a `PendingList` where a list of nodes is still to come."""
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
