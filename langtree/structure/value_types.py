"""Type compatibility of every ``value`` mapping, element by element.

An ``@each`` over N list levels sends one source element per iteration: the source's
type loses the list levels the iteration consumes, and a target with N list levels
receives one element at each. A target with fewer levels than the iteration receives, at
each of its elements, the list of what the deeper iterations produce. An ``@all`` writes
the whole source into its target field (an ``@all ... *`` into every element of the
lists on the way to it). A pluck path (``items.*.id``) sends one list level per pluck,
with ``None`` only where ``.*.`` meets an optional value (`plucked_type()`). Messages
mark the list levels a path's last field gives up with ``[*]``:
``task.report.sections[*] (Section)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from langtree.errors import Diagnostic
from langtree.structure.annotations import item_type, strip_optional
from langtree.structure.compatibility import check_mapping
from langtree.structure.flows import Flow, MappingFlow
from langtree.structure.plucks import plucked_type
from langtree.structure.registry import ResolvedPath
from langtree.structure.type_config import TypeMappingConfig

__all__ = ["check_value_types"]


def check_value_types(flows: list[Flow], config: TypeMappingConfig) -> Iterator[Diagnostic]:
    """A diagnostic for every ``value`` mapping whose types do not fit under ``config``."""
    if not config.enable_type_validation:
        return
    for flow in flows:
        for mapping_flow in flow.mappings:
            if mapping_flow.scope != "value" or mapping_flow.target is None:
                continue
            problem = _problem(flow, mapping_flow, config)
            if problem is not None:
                yield problem


def _problem(flow: Flow, mapping_flow: MappingFlow, config: TypeMappingConfig) -> Diagnostic | None:
    source_type, source_path = _source(flow, mapping_flow)
    target_type, target_path = _target(mapping_flow, whole=not flow.is_each)
    missing = flow.depth - mapping_flow.target_levels if flow.is_each else 0
    source_type = _wrap_levels(source_type, missing)
    problem = check_mapping(source_path, source_type, target_path, target_type, config)
    if problem is None:
        return None
    hint = problem.hint
    if _fits_without_none(flow, mapping_flow, target_type, config):
        hint = (
            "'.*.' sends None for a missing value: use '.**.' to leave such values out, "
            "or '.***.' to require every value"
        )
    return flow.command.diagnostic(
        problem.message,
        hint=hint,
        span=mapping_flow.mapping.span,
        warning=problem.is_warning,
    )


def _source(flow: Flow, mapping_flow: MappingFlow) -> tuple[object, str]:
    """The type one iteration sends (the whole value for ``@all``), and its path.

    The iteration consumes list levels along the path from its start; a list the path
    crosses beyond them makes the value a list (``sections.paragraphs.text`` iterated
    over ``sections`` sends the texts of one section's paragraphs).
    """
    source = mapping_flow.source
    if source is None or source.field is None:
        node = source.node if source is not None else flow.node
        return node.node_class, node.tag
    if mapping_flow.plucks:
        return _plucked(flow, mapping_flow, source)
    levels, crossed = flow.depth if flow.is_each else 0, 0
    for node_field in source.fields[:-1]:
        used = min(levels, node_field.shape.list_depth)
        levels, crossed = levels - used, crossed + node_field.shape.list_depth - used
    consumed = min(levels, source.field.shape.list_depth)
    source_type = _strip_levels(source.field.annotation, consumed)
    return _wrap_levels(source_type, crossed), _display(source, consumed)


def _plucked(flow: Flow, mapping_flow: MappingFlow, source: ResolvedPath) -> tuple[object, str]:
    """The type a pluck path sends (each pluck adds its list's levels), and its path."""
    consumed = len(flow.inclusion.fields) if flow.is_each and flow.inclusion else 0
    plucks = tuple(replace(pluck, after=pluck.after - consumed) for pluck in mapping_flow.plucks)
    written = mapping_flow.mapping.resolved_source_path
    return plucked_type(source.fields[consumed:], plucks), f"{flow.node.tag}.{written}"


def _fits_without_none(
    flow: Flow, mapping_flow: MappingFlow, target_type: object, config: TypeMappingConfig
) -> bool:
    """Whether a pluck path with ``.*.`` would fit its target with ``.**.`` instead."""
    if not any(pluck.operator == "*" for pluck in mapping_flow.plucks):
        return False
    dropping = replace(
        mapping_flow, plucks=tuple(replace(p, operator="**") for p in mapping_flow.plucks)
    )
    assert mapping_flow.source is not None
    source_type, path = _plucked(flow, dropping, mapping_flow.source)
    missing = flow.depth - mapping_flow.target_levels if flow.is_each else 0
    source_type = _wrap_levels(source_type, missing)
    return check_mapping(path, source_type, path, target_type, config) is None


def _target(mapping_flow: MappingFlow, *, whole: bool) -> tuple[object, str]:
    """The type each element of the target field receives, and its path.

    An ``@each`` fills a target's list levels element by element, one per iteration;
    ``@all`` writes the target field whole (an ``@all ... *`` into every element of the
    lists on the way to it).
    """
    target = mapping_flow.target
    assert target is not None
    assert target.field is not None
    levels = 0 if whole else target.field.shape.list_depth
    return _strip_levels(target.field.annotation, levels), _display(target, levels)


def _strip_levels(annotation: object, levels: int) -> object:
    """The element type ``levels`` list levels down (``Optional`` seen through)."""
    for _ in range(levels):
        annotation = item_type(strip_optional(annotation)[0])
    return annotation


def _wrap_levels(annotation: object, levels: int) -> object:
    """``annotation`` inside ``levels`` lists (none when ``levels`` is not positive)."""
    for _ in range(levels):
        annotation = list[annotation]  # type: ignore[valid-type]
    return annotation


def _display(resolved: ResolvedPath, consumed: int) -> str:
    """The field's path from its root task, ``[*]`` after each list level consumed."""
    assert resolved.field is not None
    holder = resolved.node
    suffix = "[*]" * consumed
    if resolved.field.shape.node_class is not None and holder.parent is not None:
        return f"{holder.parent}.{resolved.field.name}{suffix}"
    return f"{holder.tag}.{resolved.field.name}{suffix}"
