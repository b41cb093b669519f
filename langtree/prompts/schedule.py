"""When ``@each``/``@all`` commands are carried out: once nothing still to come produces
what they read.

A command reads the fields on its inclusion and source paths (a node source: the node's
whole subtree) and the fields that lead to its node; it waits for every later step that
generates one of them and for every other waiting command that writes one. The dry run
and the run share this schedule.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from langtree.prompts.dataflow import apply_flow
from langtree.prompts.state import RunState
from langtree.structure.flows import Flow, TargetScope
from langtree.structure.plan import PlanStep
from langtree.structure.registry import NodeRegistry
from langtree.structure.tree import Node, NodeField
from langtree.structure.type_config import TypeMappingConfig

__all__ = ["FieldKey", "FlowSchedule", "flow_reads", "flow_writes", "step_writes"]


FieldKey = tuple[str, str]
"""A field of a node: (node tag, field name)."""
_WRITES: tuple[TargetScope, ...] = ("value",)
_SENDS: tuple[TargetScope, ...] = ("prompt", "outputs", "external")


class FlowSchedule:
    """Runs each command once everything it reads is settled.

    A command reads the fields on its inclusion and source paths (a node source: the
    node's whole subtree) and the fields that lead to its node; it waits for every later
    step that generates one of them and for every other waiting command that writes one.
    Ready commands write their ``value`` targets first, then send ``prompt`` and
    ``outputs`` values, so that these reach the elements that the writes create.
    """

    def __init__(
        self, registry: NodeRegistry, flows: Sequence[Flow], steps: Sequence[PlanStep]
    ) -> None:
        self.flows = list(flows)
        self.waiting = set(range(len(self.flows)))
        self.reads = [flow_reads(registry, flow) for flow in self.flows]
        self.readers: dict[FieldKey, list[int]] = defaultdict(list)
        for index, keys in enumerate(self.reads):
            for key in keys:
                self.readers[key].append(index)
        self.blockers = self._blockers([flow_writes(registry, flow) for flow in self.flows])
        self.unblocks: dict[int, list[int]] = defaultdict(list)
        for index, blockers in self.blockers.items():
            for blocker in blockers:
                self.unblocks[blocker].append(index)
        self.step_writes = [step_writes(registry, step) for step in steps]
        self.later: Counter[FieldKey] = Counter(key for keys in self.step_writes for key in keys)
        self.done_steps = 0
        self.candidates = set(self.waiting)

    def _blockers(self, writes: list[set[FieldKey]]) -> dict[int, set[int]]:
        """For each command, the other commands that write something it reads."""
        writers: dict[FieldKey, set[int]] = defaultdict(set)
        for index, keys in enumerate(writes):
            for key in keys:
                writers[key].add(index)
        return {
            index: {other for key in keys for other in writers.get(key, ())} - {index}
            for index, keys in enumerate(self.reads)
        }

    def apply_ready(self, state: RunState, position: int, config: TypeMappingConfig) -> None:
        """Carry out every command ready before the step at ``position``."""
        while self.done_steps < position:
            for key in self.step_writes[self.done_steps]:
                self.later[key] -= 1
                if self.later[key] <= 0:
                    self.candidates.update(self.readers.get(key, ()))
            self.done_steps += 1
        while ready := self._ready():
            flows = [self.flows[index] for index in ready]
            for flow in flows:
                apply_flow(state, flow, config, scopes=_WRITES)
            for flow in flows:
                apply_flow(state, flow, config, scopes=_SENDS)
            self.waiting.difference_update(ready)
            for index in ready:
                self.candidates.update(self.unblocks.get(index, ()))

    def _ready(self) -> list[int]:
        """The waiting commands among the candidates whose reads are all settled."""
        ready = [
            index
            for index in sorted(self.candidates & self.waiting)
            if not any(self.later[key] > 0 for key in self.reads[index])
            and not self.blockers[index] & self.waiting
        ]
        self.candidates.clear()
        return ready


def flow_reads(registry: NodeRegistry, flow: Flow) -> set[FieldKey]:
    keys = {(node.parent, node.field_name) for node in registry.path(flow.node.tag)[1:]}
    reads: set[FieldKey] = {(parent, name) for parent, name in keys if parent and name}
    if flow.inclusion is not None:
        reads |= _path_keys(registry, flow.node, flow.inclusion.fields, whole=False)
    for mapping_flow in flow.mappings:
        source = mapping_flow.source
        if source is None:
            reads |= _subtree_keys(registry, flow.node)
        else:
            reads |= _path_keys(registry, flow.node, source.fields, whole=True)
    return reads


def flow_writes(registry: NodeRegistry, flow: Flow) -> set[FieldKey]:
    destination = flow.destination
    if destination is None:
        return set()
    absolute = str(getattr(flow.command.command, "destination_path", "")).startswith("task.")
    start = registry.path(destination.node.tag)[0] if absolute else flow.node
    writes: set[FieldKey] = set()
    for mapping_flow in flow.mappings:
        if mapping_flow.scope == "value" and mapping_flow.target is not None:
            fields = destination.fields + mapping_flow.target.fields
            writes |= _path_keys(registry, start, fields, whole=True)
    return writes


def step_writes(registry: NodeRegistry, step: PlanStep) -> set[FieldKey]:
    node = registry.get(step.node_tag)
    assert node is not None
    writes: set[FieldKey] = set()
    for name in step.fields:
        writes.add((node.tag, name))
        child = registry.child(node, name)
        if child is not None:
            writes |= _subtree_keys(registry, child)
    return writes


def _path_keys(
    registry: NodeRegistry, start: Node, fields: Iterable[NodeField], *, whole: bool
) -> set[FieldKey]:
    """The fields along a path from ``start``; ``whole``: a node at its end with its subtree."""
    keys: set[FieldKey] = set()
    node: Node | None = start
    for node_field in fields:
        if node is None:
            break
        keys.add((node.tag, node_field.name))
        node = registry.child(node, node_field.name)
    if whole and node is not None and node is not start:
        keys |= _subtree_keys(registry, node)
    return keys


def _subtree_keys(registry: NodeRegistry, node: Node) -> set[FieldKey]:
    keys = {(node.tag, node_field.name) for node_field in node.fields}
    for child in registry.children(node.tag):
        keys |= _subtree_keys(registry, child)
    return keys
