"""Type compatibility of every ``value`` mapping, element by element.

An ``@each`` over N list levels sends one source element per iteration: the source's
type loses the list levels the iteration consumes, and a target with N list levels
receives one element at each. A target with fewer levels than the iteration receives, at
each of its elements, the list of what the deeper iterations produce. An ``@all`` writes
the whole source into its target field (an ``@all ... *`` into every element of the
lists on the way to it). A pluck path (``items.*.id``) sends one list level per pluck,
with ``None`` only where ``.*.`` meets an optional value; a path without plucks reads
the lists it crosses as ``.*.`` does, so a node that may be ``None`` on its way makes it
send ``None`` too (`path_type()`, one rule for both forms). Messages
mark the list levels a path's last field gives up with ``[*]``:
``task.report.sections[*] (Section)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from langtree.dsl import PluckOperator
from langtree.errors import Diagnostic
from langtree.structure.commands._flows import Flow, MappingFlow
from langtree.structure.commands._plucks import none_on_the_way, path_type
from langtree.structure.tree._registry import ResolvedPath
from langtree.structure.tree._tree import NodeField
from langtree.structure.types._annotations import item_type, strip_optional
from langtree.structure.types._compatibility import check_mapping
from langtree.structure.types._literals import literal_problem
from langtree.structure.types._type_config import TypeMappingConfig

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
    if mapping_flow.mapping.literal is not None:
        return _literal_problem(flow, mapping_flow)
    source_type, source_path = _source(flow, mapping_flow)
    target_type, target_path = _target(mapping_flow, whole=not flow.is_each)
    problem = check_mapping(source_path, source_type, target_path, target_type, config)
    if problem is None:
        return None
    hint = problem.hint
    if _fits_without_none(flow, mapping_flow, target_type, config):
        hint = _none_hint(flow, mapping_flow)
    return flow.command.diagnostic(
        problem.message,
        hint=hint,
        span=mapping_flow.mapping.span,
        warning=problem.is_warning,
    )


def _literal_problem(flow: Flow, mapping_flow: MappingFlow) -> Diagnostic | None:
    """A literal fits each write of its target (`literal_problem()`); an ``@each`` target
    with fewer list levels than the iteration receives a list of it per level it lacks."""
    literal = mapping_flow.mapping.literal
    assert literal is not None
    target_type, target_path = _target(mapping_flow, whole=not flow.is_each)
    missing = flow.depth - mapping_flow.target_levels if flow.is_each else 0
    problem = literal_problem(literal, target_path, _strip_levels(target_type, max(missing, 0)))
    if problem is None:
        return None
    message, hint = problem
    return flow.command.diagnostic(message, hint=hint, span=mapping_flow.mapping.span)


def _source(
    flow: Flow, mapping_flow: MappingFlow, *, unmarked: PluckOperator = "*"
) -> tuple[object, str]:
    """The type one iteration sends (the whole value for ``@all``), in the target's list
    levels, and its path.

    The iteration consumes the inclusion path's list levels; a list the path crosses
    beyond them makes the value a list (``sections.paragraphs.text`` iterated over
    ``sections`` sends the texts of one section's paragraphs), and a node that may be
    ``None`` on the way makes it ``None`` where it is (`path_type()`, as for a pluck
    path). ``unmarked="**"`` gives the type with those ``None`` values left out.
    """
    source = mapping_flow.source
    if source is None or source.field is None:
        node = source.node if source is not None else flow.node
        return node.node_class, node.tag
    consumed = _consumed(flow)
    # A target with fewer list levels than the iteration receives, at each of its
    # elements, the list of what the deeper iterations send: one list per level it lacks.
    missing = flow.depth - mapping_flow.target_levels if flow.is_each else 0
    if consumed == len(source.fields):  # the iterated list itself: one element each time
        levels = source.field.shape.list_depth
        return _wrap_levels(_strip_levels(source.field.annotation, levels), missing), _display(
            source, levels
        )
    plucks = tuple(replace(pluck, after=pluck.after - consumed) for pluck in mapping_flow.plucks)
    sent = path_type(
        source.fields[consumed:],
        plucks,
        iterated=_iterated(flow),
        unmarked=unmarked,
    )
    path = (
        f"{flow.node.tag}.{mapping_flow.mapping.resolved_source_path}"
        if plucks
        else _display(source, 0)
    )
    return _wrap_levels(sent, missing), path


def _fits_without_none(
    flow: Flow, mapping_flow: MappingFlow, target_type: object, config: TypeMappingConfig
) -> bool:
    """Whether the path would fit its target if it left its ``None`` values out (with
    ``.**.`` for each ``.*.``, and for each list it crosses unmarked)."""
    if mapping_flow.plucks:
        keeps_none = any(pluck.operator == "*" for pluck in mapping_flow.plucks)
    else:
        keeps_none = _none_source(flow, mapping_flow) is not None
    if not keeps_none:
        return False
    dropping = replace(
        mapping_flow, plucks=tuple(replace(p, operator="**") for p in mapping_flow.plucks)
    )
    source_type, path = _source(flow, dropping, unmarked="**")
    return check_mapping(path, source_type, path, target_type, config) is None


def _none_hint(flow: Flow, mapping_flow: MappingFlow) -> str:
    """How to keep ``None`` out of a path: a pluck's operator, else the optional node."""
    if mapping_flow.plucks:
        return (
            "'.*.' sends None for a missing value: use '.**.' to leave such values out, "
            "or '.***.' to require every value"
        )
    what = _none_source(flow, mapping_flow)
    return (
        f"{what} may be None, and the path then sends None: make the target's type accept "
        f"None, or declare {what} without None"
    )


def _none_source(flow: Flow, mapping_flow: MappingFlow) -> str | None:
    """What may be ``None`` on an unplucked path beyond the iteration (see
    `none_on_the_way()`)."""
    source = mapping_flow.source
    if source is None or source.field is None:
        return None
    consumed = _consumed(flow)
    if consumed == len(source.fields):
        return None
    return none_on_the_way(source.fields[consumed:], iterated=_iterated(flow))


def _consumed(flow: Flow) -> int:
    """How many fields of its sources' paths an ``@each`` iterates over (0 for ``@all``)."""
    return len(flow.inclusion.fields) if flow.is_each and flow.inclusion else 0


def _iterated(flow: Flow) -> NodeField | None:
    """The list whose elements an ``@each``'s paths start from."""
    return flow.inclusion.fields[-1] if flow.is_each and flow.inclusion else None


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
    # A node field resolves to the node it holds: its path is named from the parent.
    if resolved.field.shape.node_class is not None and holder.parent is not None:
        return f"{holder.parent}.{resolved.field.name}{suffix}"
    return f"{holder.tag}.{resolved.field.name}{suffix}"
