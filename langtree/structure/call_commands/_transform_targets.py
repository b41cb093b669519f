"""No ``value`` mapping writes a field that ``transform(...)`` computes.

A check over the whole tree's mappings, apart from `TRANSFORM` because it reads which
fields the mappings write (`langtree.structure.planning._known`), which itself asks the table of
commands which fields are inputs.
"""

from __future__ import annotations

from collections.abc import Iterable

from langtree.errors import Diagnostic
from langtree.structure.commands._flows import Flow
from langtree.structure.commands._transforms import Transform
from langtree.structure.planning._known import field_holder
from langtree.structure.tree._registry import FieldKey, NodeRegistry

__all__ = ["check_transform_targets"]


def check_transform_targets(
    registry: NodeRegistry, flows: Iterable[Flow], transforms: dict[FieldKey, Transform]
) -> list[Diagnostic]:
    """An error for each ``value`` mapping that writes a transform field."""
    problems: list[Diagnostic] = []
    for flow in flows:
        for mapping_flow in flow.mappings:
            target = mapping_flow.target
            if mapping_flow.scope != "value" or target is None or target.field is None:
                continue
            key = FieldKey(field_holder(registry, target).tag, target.field.name)
            transform = transforms.get(key)
            if transform is not None:
                problems.append(
                    flow.command.diagnostic(
                        f"This command writes {transform.location!r}, which its transform() "
                        "computes",
                        hint="remove the mapping, or remove transform() from "
                        f"{transform.location!r} to let the mapping write it",
                    )
                )
    return problems
