"""``@each`` commands whose iterations and destination elements correspond one to one.

D7 lays an ``@each`` out so that element *i* of the destination receives iteration *i*'s
value. When that is all the command does, element *i* needs iteration *i* alone: its
steps may start as soon as the steps that produce iteration *i*'s sources have finished
for that element, while other elements are still being produced (D3, D4). Such a command
is *element-wise*:

- it stands in a node that lies in no list (a root task or a node field below one), so
  that an iteration's indices are the indices of the source elements it reads;
- every mapping writes a ``value`` into a field of the destination's elements, one list
  level per iteration level (no ``prompt``/``outputs`` target, which receives the list of
  every iteration's values, and no target that collects several iterations);
- no step generates the lists it iterates, so that the elements exist from the start.

Any other command is carried out once for all its iterations, after every step that
produces what it reads has finished.
"""

from __future__ import annotations

from collections.abc import Collection

from langtree.structure.commands._flows import Flow
from langtree.structure.planning._known import field_holder
from langtree.structure.tree._registry import FieldKey, NodeRegistry

__all__ = ["element_levels", "iteration_keys"]


def element_levels(registry: NodeRegistry, flow: Flow, produced: Collection[FieldKey]) -> int:
    """The list levels on which the command's iterations and its destination's elements
    correspond one to one (0: the command is not element-wise).

    Args:
        registry: The nodes.
        flow: The resolved command.
        produced: The fields that steps generate, by (node tag, field name).
    """
    if not flow.is_each or flow.destination is None or not flow.mappings:
        return 0
    depth = flow.depth
    if registry.list_levels(flow.node.tag) != 0:
        return 0
    for mapping_flow in flow.mappings:
        target = mapping_flow.target
        if mapping_flow.scope != "value" or target is None or target.field is None:
            return 0
        if mapping_flow.target_levels != depth:
            return 0
        if registry.list_levels(field_holder(registry, target).tag) != depth:
            return 0
    if any(key in produced for key in iteration_keys(registry, flow)):
        return 0
    return depth


def iteration_keys(registry: NodeRegistry, flow: Flow) -> list[FieldKey]:
    """The fields along the command's inclusion path, from its node."""
    keys: list[FieldKey] = []
    node = flow.node
    for node_field in flow.inclusion.fields if flow.inclusion else ():
        keys.append(FieldKey(node.tag, node_field.name))
        child = registry.child(node, node_field.name)
        if child is None:
            break
        node = child
    return keys
