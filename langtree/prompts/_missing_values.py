"""Values a mapping cannot give: a source never produced whose target has no default.

Such a *missing value* names both ends: where the source was read
(`source_text()`, ``task.research.documents[1].summary``) and the target (a field,
``'TaskDigest.summary'``; a list element; a ``{name}`` or an ``outputs`` entry of a
node). A run raises it as an `ExecutionError` at once, or, when
it continues after failures, keeps it in `RunState.missing` for the result to report.
"""

from __future__ import annotations

from langtree.errors import ExecutionError
from langtree.prompts._state import Address, Indices, MissingValue, RunState, instance_text
from langtree.prompts._values import Absent
from langtree.structure import Flow, MappingFlow

__all__ = ["iteration_path", "rendered", "report_missing", "report_unsent", "source_text"]


def rendered(flow: Flow, mapping_flow: MappingFlow, message: str, hint: str) -> str:
    """An error's text, with the command's line and a marker under the mapping."""
    diagnostic = flow.command.diagnostic(message, hint=hint, span=mapping_flow.mapping.span)
    return diagnostic.render().removeprefix("error: ")


def report_missing(
    state: RunState,
    flow: Flow,
    mapping_flow: MappingFlow,
    absent: Absent,
    target: str,
    reason: str,
    hint: str,
) -> None:
    """A target without a default whose source was never produced: raise, or keep it.

    Args:
        state: Whether to raise or keep (`RunState.on_missing`), and where to keep.
        flow: The command.
        mapping_flow: The mapping.
        absent: The source, with where it was read.
        target: The target as the message names it (quoted).
        reason: Why the target has no value of its own, e.g. ``"the field has no default"``.
        hint: How to fix it.

    Raises:
        ExecutionError: The missing value, unless the state keeps missing values.
    """
    message = (
        f"Missing value for {target}: its source {absent.source!r} was never produced, and {reason}"
    )
    if state.on_missing == "raise":
        raise ExecutionError(rendered(flow, mapping_flow, message, hint))
    task = state.registry.path(_destination_tag(flow, mapping_flow))[0].tag
    missing = MissingValue(
        task=task, source=absent.source, target=target, message=message, hint=hint
    )
    state.missing.append(missing)


def report_unsent(
    state: RunState, flow: Flow, mapping_flow: MappingFlow, absent: Absent, *, whole: bool
) -> None:
    """A ``prompt``/``outputs`` target whose source, or one element of it (``whole`` is
    ``False``), was never produced: such a target has no default, so it is a missing
    value (see `report_missing()`)."""
    destination = flow.destination.node.tag if flow.destination is not None else "prompt.external"
    mapped = "map the source into a field with a default ('value.<field>=...')"
    if mapping_flow.scope == "outputs":
        target, reason = f"'outputs.{mapping_flow.name}' in {destination!r}", "a context entry"
        hint = f"{mapped}: a known field appears in the context"
    else:
        target, reason = f"{{{mapping_flow.name}}} in {destination!r}", "a prompt variable"
        hint = f"{mapped} and write {{<field>}} in the text instead"
    if not whole:
        hint = "send the list with a '.**.' pluck path, which leaves absent values out"
    report_missing(state, flow, mapping_flow, absent, target, f"{reason} has no default", hint)


def _destination_tag(flow: Flow, mapping_flow: MappingFlow) -> str:
    """The tag of the node that receives the mapping's value."""
    key = mapping_flow.target.field_key if mapping_flow.target is not None else None
    if key is not None:
        return key.node_tag
    return flow.destination.node.tag if flow.destination is not None else flow.node.tag


def source_text(
    state: RunState, flow: Flow, mapping_flow: MappingFlow, cwd: Address, indices: Indices
) -> str:
    """Where one iteration reads a mapping's source: ``task.research.documents[1].summary``."""
    text = instance_text(state.registry, cwd)
    source = mapping_flow.source
    if source is None:
        return text
    consumed = len(flow.inclusion.fields) if flow.inclusion is not None else 0
    names = [node_field.name for node_field in source.fields[consumed:]]
    return f"{text}.{iteration_path(flow, indices)}{'.'.join(names)}".rstrip(".")


def iteration_path(flow: Flow, indices: Indices) -> str:
    """Where an iteration's element stands, for messages: ``'sections[2].'``."""
    if flow.inclusion is None:
        return ""
    parts, remaining = [], list(indices)
    for node_field in flow.inclusion.fields:
        levels = remaining[: node_field.shape.list_depth]
        del remaining[: node_field.shape.list_depth]
        parts.append(node_field.name + "".join(f"[{index}]" for index in levels))
    return ".".join(parts) + "."
