"""Computing a transform field for one node instance, with no model call.

The expression (see `langtree.structure.commands._transforms`) is evaluated over the values it
reads, each from the instance or the nearest instance above it that holds the field, as
``RunResult.dump()`` shows them (`langtree.runtime.engine._json_view`): nodes are dicts, Enum
members their values, dates ISO text, assets the dicts of their fields. Lists and other
iterables that Jinja2's filters return lazily (``map``, ``select``) are made lists; the
value is then converted to the field's annotation exactly as a ``value`` mapping
converts what it writes (`convert_value()`, which takes a value's JSON form back to its
type: ``"blocker"`` to the member, ``"2024-05-01"`` to the date), never by parsing
rendered text. Anything that goes wrong is an
`ExecutionError` that names the field, the instance and the
expression.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TypeGuard

from jinja2 import Undefined

from langtree.errors import ConversionError, ExecutionError
from langtree.prompts import Address, RunState, instance_text, to_plain
from langtree.runtime.engine._json_view import ResampledValues, json_view
from langtree.structure import Transform, TypeMappingConfig, compiled, convert_value

__all__ = ["Computed", "compute"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Computed:
    """A transform's value for one instance, ready to be written.

    Attributes:
        field_name: The field computed.
        value: Its value as plain data, converted to the field's annotation.
    """

    field_name: str
    value: object


def compute(
    transform: Transform,
    field_name: str,
    address: Address,
    state: RunState,
    config: TypeMappingConfig,
    resampled: ResampledValues,
) -> Computed:
    """Evaluate ``transform`` for the instance at ``address``.

    Args:
        transform: The field's transform.
        field_name: The field it computes.
        address: The instance.
        state: The run's values.
        config: How the value converts to the field's type.
        resampled: The numbers behind numerically aggregated fields, which the values
            read show beside their fields.

    Raises:
        ExecutionError: A value it reads is missing, the expression fails, or its value
            does not convert to the field's type.
    """
    node = state.registry.get(address.tag)
    assert node is not None
    node_field = node.field(field_name)
    assert node_field is not None
    where = instance_text(state.registry, address)
    names = _values(transform, address, state, where, resampled)
    try:
        value = compiled(transform.expression)(**names)
        # Made a list inside the ``try``: a lazy filter runs the expression as it is
        # consumed, and may raise only then.
        if _lazy(value):
            value = list(value)
    # The expression is the user's code: whatever it raises (a missing key, a division by
    # zero, a sandbox refusal) is reported as this field's failure.
    except Exception as error:
        raise _error(transform, where, f"{type(error).__name__}: {error}") from error
    # Jinja2 gives ``Undefined`` for a missing name or key instead of raising: left in, it
    # would pass as an empty value, far from the expression that made it.
    undefined = _undefined_at(value)
    if undefined is not None:
        what = f"item {undefined} of its value" if undefined else "its value"
        raise _error(transform, where, f"{what} is undefined (a name or key it reads has none)")
    try:
        converted = convert_value(value, node_field.annotation, config)
    except ConversionError as error:
        raise _error(transform, where, str(error)) from error
    return Computed(field_name=field_name, value=to_plain(converted))


def _values(
    transform: Transform,
    address: Address,
    state: RunState,
    where: str,
    resampled: ResampledValues,
) -> dict[str, object]:
    """The value of each field the expression reads, as `json_view()` shows it (Jinja2's
    globals are its own)."""
    node = state.registry.get(address.tag)
    assert node is not None
    values: dict[str, object] = {}
    for name in transform.names:
        key = state.registry.field_above(node, name)
        if key is None:
            continue
        # The node holding the field is the instance's own or an ancestor: walking up the
        # instances finds the one in this instance's branch.
        holder: Address | None = address
        while holder is not None and holder.tag != key.node_tag:
            holder = state.parent(holder)
        found = state.instance(holder) if holder is not None else None
        if holder is None or found is None or name not in found:
            raise _error(transform, where, f"{name!r} has no value")
        path = f"{instance_text(state.registry, holder)}.{name}"
        values[name] = json_view(found[name], path, resampled)
    return values


def _undefined_at(value: object) -> str | None:
    """Where ``value`` holds a Jinja2 ``Undefined`` (``""``: it is one; ``"[1]['id']"``: an
    item of it), e.g. ``map(attribute='id')`` over elements that lack it; ``None``: nowhere.
    The lists and dicts are walked with a stack, as values may nest deeply."""
    pending: list[tuple[str, object]] = [("", value)]
    while pending:
        place, current = pending.pop()
        if isinstance(current, Undefined):
            return place
        if isinstance(current, list):
            pending += [(f"{place}[{i}]", item) for i, item in reversed(list(enumerate(current)))]
        elif isinstance(current, dict):
            pending += [(f"{place}[{key!r}]", item) for key, item in reversed(current.items())]
    return None


def _lazy(value: object) -> TypeGuard[Iterable[object]]:
    """Whether ``value`` is an iterable that is no container of its own (a generator)."""
    return isinstance(value, Iterable) and not isinstance(
        value, str | bytes | Mapping | list | tuple | set | frozenset
    )


def _error(transform: Transform, where: str, why: str) -> ExecutionError:
    diagnostic = transform.command.diagnostic(
        f"transform() of {transform.location!r} failed at {where}: {why}",
        hint=f"check the expression {transform.expression!r} against the values at {where}",
    )
    # An ExecutionError's text carries no severity; the rendered diagnostic starts with one.
    return ExecutionError(diagnostic.render().removeprefix("error: "))
