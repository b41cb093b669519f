"""What each ``@each``/``@all`` command reads and writes, and which commands wait for which.

A command is carried out once nothing still to come produces what it reads: no step
that generates one of those fields has still to finish, and no other command that writes
one is still waiting, but for a command that writes the same field and is defined later:
commands that write one field go in definition order, each seeing what the earlier ones
wrote, the last one's values staying (`command_blockers()`). The dry run and the run
schedule commands by these sets (`langtree.prompts._schedule`); `validate()` refuses
commands that wait for each other (`check_command_cycles()`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from langtree.dsl import AllCommand
from langtree.errors import Diagnostic
from langtree.structure.commands._flows import Flow, MappingFlow
from langtree.structure.planning._ordering import topological_order
from langtree.structure.tree._registry import FieldKey, NodeRegistry
from langtree.structure.tree._tree import Node, NodeField
from langtree.structure.tree._tree_node import display_name

__all__ = [
    "check_command_cycles",
    "command_blockers",
    "flow_reads",
    "flow_writes",
    "index_keys",
    "source_reads",
]


def command_blockers(
    reads: Sequence[set[FieldKey]], writes: Sequence[set[FieldKey]]
) -> list[set[int]]:
    """For each command (by position in definition order), the commands it waits for:
    those that write a field it reads, but a later one that writes that field too.

    Examples:
        >>> a, b = FieldKey("task.t", "a"), FieldKey("task.t", "b")
        >>> command_blockers([{a}, {a}, {b}], [{a}, {a, b}, set()])
        [set(), {0}, {1}]
    """
    writers = index_keys(writes)
    return [
        {
            other
            for key in keys
            for other in writers.get(key, ())
            if other != index and not (other > index and key in writes[index])
        }
        for index, keys in enumerate(reads)
    ]


def check_command_cycles(registry: NodeRegistry, flows: Sequence[Flow]) -> list[Diagnostic]:
    """An error for each group of commands that wait for each other, so that none can be
    carried out first (an ``@each`` from one task's list into another's, and another
    back), at the first command of the group."""
    reads = [flow_reads(registry, flow) for flow in flows]
    writes = [flow_writes(registry, flow) for flow in flows]
    blockers = command_blockers(reads, writes)
    _, cycles = topological_order(range(len(flows)), dict(enumerate(blockers)))
    return [_cycle_diagnostic([flows[index] for index in cycle]) for cycle in cycles]


def _cycle_diagnostic(cycle: list[Flow]) -> Diagnostic:
    names = [_command_name(flow) for flow in [*cycle, cycle[0]]]
    message = "Dependency cycle between commands: " + " -> ".join(names)
    hint = (
        "each command reads a field that the next one writes, so none can be carried out "
        "first: remove one of them, or have one read a field no command writes"
    )
    return cycle[0].command.diagnostic(message, hint=hint)


def _command_name(flow: Flow) -> str:
    """``@each in 'TaskReport.sections'``: the command's kind and where it stands."""
    kind = "@each" if flow.is_each else "@all"
    field = flow.command.field_name
    place = display_name(flow.node.node_class) + (f".{field}" if field else "")
    return f"{kind} in {place!r}"


def flow_reads(registry: NodeRegistry, flow: Flow) -> set[FieldKey]:
    """The fields a command reads: those that lead to its node (its instances), its
    inclusion path, its sources with what lies below them, and, for a broadcast, the
    fields that lead to the elements it fills."""
    keys = {(node.parent, node.field_name) for node in registry.path(flow.node.tag)[1:]}
    reads = {FieldKey(parent, name) for parent, name in keys if parent and name}
    if flow.inclusion is not None:
        reads |= _path_keys(registry, flow.node, flow.inclusion.fields, whole=False)
    for mapping_flow in flow.mappings:
        reads |= source_reads(registry, flow, mapping_flow)
    if _broadcasts(flow):
        # A broadcast fills the elements on its way: it waits until they exist, so that
        # elements a model generates receive it too (D8).
        reads |= _target_keys(registry, flow, to_target=False)
    return reads


def source_reads(registry: NodeRegistry, flow: Flow, mapping_flow: MappingFlow) -> set[FieldKey]:
    """The fields a mapping's source reads (``*``: the command's whole node)."""
    source = mapping_flow.source
    if mapping_flow.is_literal:
        return set()
    if source is None:
        return set(registry.subtree_fields(flow.node))
    return _path_keys(registry, flow.node, source.fields, whole=True)


def flow_writes(registry: NodeRegistry, flow: Flow) -> set[FieldKey]:
    """The fields a command's ``value`` targets write, with the fields that lead to them
    from the destination's start (the elements it creates); a broadcast creates none, it
    fills the elements that exist (it reads the fields that lead there)."""
    written = _target_keys(registry, flow, to_target=True)
    if _broadcasts(flow):
        written -= _target_keys(registry, flow, to_target=False)
    return written


def _broadcasts(flow: Flow) -> bool:
    """Whether the command is ``@all ... *``, which fills every element on its way (D8)."""
    return isinstance(flow.command.command, AllCommand) and flow.command.command.has_multiplicity


def _target_keys(registry: NodeRegistry, flow: Flow, *, to_target: bool) -> set[FieldKey]:
    """The fields along each ``value`` target's path from its start: up to the target
    with its subtree (``to_target``), or only those that lead to its holder."""
    destination = flow.destination
    if destination is None:
        return set()
    absolute = str(getattr(flow.command.command, "destination_path", "")).startswith("task.")
    start = registry.path(destination.node.tag)[0] if absolute else flow.node
    keys: set[FieldKey] = set()
    for mapping_flow in flow.mappings:
        if mapping_flow.scope == "value" and mapping_flow.target is not None:
            fields = destination.fields + mapping_flow.target.fields
            keys |= _path_keys(
                registry, start, fields if to_target else fields[:-1], whole=to_target
            )
    return keys


def _path_keys(
    registry: NodeRegistry, start: Node, fields: Iterable[NodeField], *, whole: bool
) -> set[FieldKey]:
    """The fields along a path from ``start``; ``whole``: a node at its end with its subtree."""
    keys: set[FieldKey] = set()
    node: Node | None = start
    for node_field in fields:
        if node is None:
            break
        keys.add(FieldKey(node.tag, node_field.name))
        node = registry.child(node, node_field.name)
    if whole and node is not None and node is not start:
        keys |= set(registry.subtree_fields(node))
    return keys


def index_keys(keysets: Iterable[set[FieldKey]]) -> dict[FieldKey, list[int]]:
    """For each field, the positions of the sets that hold it."""
    index: dict[FieldKey, list[int]] = defaultdict(list)
    for position, keys in enumerate(keysets):
        for key in keys:
            index[key].append(position)
    return index
