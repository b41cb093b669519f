"""Type compatibility of every ``value`` mapping, element by element.

An ``@each`` over N list levels sends one source element per iteration: the source's
type loses the list levels the iteration consumes, and a target with N list levels
receives one element at each. A target with fewer levels than the iteration receives, at
each of its elements, the list of what the deeper iterations produce. An ``@all ... *``
sends the whole source to every element of a list target. Messages mark the list levels
a path's last field gives up with ``[*]``: ``task.report.sections[*] (Section)``.
"""

from __future__ import annotations

from collections.abc import Iterator

from langtree.errors import Diagnostic
from langtree.structure.annotations import item_type, strip_optional
from langtree.structure.compatibility import check_mapping
from langtree.structure.flows import Flow, MappingFlow
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
    target_type, target_path = _target(mapping_flow)
    missing = flow.depth - mapping_flow.target_levels if flow.is_each else 0
    source_type = _wrap_levels(source_type, missing)
    problem = check_mapping(source_path, source_type, target_path, target_type, config)
    if problem is None:
        return None
    return flow.command.diagnostic(
        problem.message,
        hint=problem.hint,
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
    levels, crossed = flow.depth if flow.is_each else 0, 0
    for node_field in source.fields[:-1]:
        used = min(levels, node_field.shape.list_depth)
        levels, crossed = levels - used, crossed + node_field.shape.list_depth - used
    consumed = min(levels, source.field.shape.list_depth)
    source_type = _strip_levels(source.field.annotation, consumed)
    return _wrap_levels(source_type, crossed), _display(source, consumed)


def _target(mapping_flow: MappingFlow) -> tuple[object, str]:
    """The type each element of the target field receives, and its path.

    A target's list levels are filled element by element: by the iterations of an
    ``@each``, by the broadcast of an ``@all ... *``.
    """
    target = mapping_flow.target
    assert target is not None
    assert target.field is not None
    levels = target.field.shape.list_depth
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
