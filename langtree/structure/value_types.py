"""Type compatibility of every ``value`` mapping, element by element.

An ``@each`` over N list levels sends one source element per iteration: the source's
type loses the list levels the iteration consumes, and a target with N list levels
receives one element at each. A target with fewer levels than the iteration receives, at
each of its elements, the list of what the deeper iterations produce.
"""

from __future__ import annotations

from collections.abc import Iterator

from langtree.errors import Diagnostic
from langtree.structure.annotations import item_type, strip_optional
from langtree.structure.compatibility import TypeMappingConfig, check_mapping
from langtree.structure.flows import Flow, MappingFlow
from langtree.structure.registry import ResolvedPath

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
    target = mapping_flow.target
    assert target is not None
    assert target.field is not None
    source_type, source_path = _source(flow, mapping_flow)
    target_type = _strip_levels(target.field.annotation, target.field.shape.list_depth)
    missing = flow.depth - mapping_flow.target_levels if flow.is_each else 0
    for _ in range(max(0, missing)):
        source_type = list[source_type]  # type: ignore[valid-type]
    problem = check_mapping(source_path, source_type, _display(target), target_type, config)
    if problem is None:
        return None
    return flow.command.diagnostic(
        problem.message,
        hint=problem.hint,
        span=mapping_flow.mapping.span,
        warning=problem.is_warning,
    )


def _source(flow: Flow, mapping_flow: MappingFlow) -> tuple[object, str]:
    source = mapping_flow.source
    if source is None or source.field is None:
        node = source.node if source is not None else flow.node
        return node.node_class, node.tag
    consumed = (
        flow.depth - sum(f.shape.list_depth for f in source.fields[:-1]) if flow.is_each else 0
    )
    depth = min(max(consumed, 0), source.field.shape.list_depth)
    return _strip_levels(source.field.annotation, depth), _display(source)


def _strip_levels(annotation: object, levels: int) -> object:
    """The element type ``levels`` list levels down (``Optional`` seen through)."""
    for _ in range(levels):
        annotation = item_type(strip_optional(annotation)[0])
    return annotation


def _display(resolved: ResolvedPath) -> str:
    assert resolved.field is not None
    holder = resolved.node
    if resolved.field.shape.node_class is not None and holder.parent is not None:
        return f"{holder.parent}.{resolved.field.name}"
    return f"{holder.tag}.{resolved.field.name}"
