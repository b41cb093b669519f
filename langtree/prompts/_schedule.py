"""When ``@each``/``@all`` commands are carried out: once nothing still to come produces
what they read.

A command reads the fields on its inclusion and source paths (a node source: the node's
whole subtree) and the fields that lead to its node; it waits for every later step that
generates one of them and for every other waiting command that writes one. The dry run
and the run share this schedule.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence

from langtree.prompts._dataflow import apply_flow
from langtree.prompts._state import Address, RunState
from langtree.prompts._values import Pending
from langtree.structure import (
    FieldKey,
    Flow,
    NodeRegistry,
    PlanStep,
    TargetScope,
    TypeMappingConfig,
    command_blockers,
    flow_reads,
    flow_writes,
    index_keys,
)

__all__ = [
    "CommandReadiness",
    "FlowSchedule",
    "dry_run",
    "step_writes",
]


_WRITES: tuple[TargetScope, ...] = ("value",)
_SENDS: tuple[TargetScope, ...] = ("prompt", "outputs", "external")


class CommandReadiness:
    """The commands still waiting, and which of them are ready as step writes settle.

    Steps may settle in any order (`settle()`). A command is ready once no unsettled
    step generates a field it reads and no other waiting command writes one (but a later
    command that writes the same field: such commands go in definition order); readiness is
    checked only for the commands a settled field or a carried-out command concerns.
    Ready commands write their ``value`` targets first (`_write()`), then send
    ``prompt`` and ``outputs`` values, so that these reach the elements the writes create.
    """

    def __init__(
        self, registry: NodeRegistry, flows: Sequence[Flow], steps: Sequence[PlanStep]
    ) -> None:
        self.flows = list(flows)
        self.waiting = set(range(len(self.flows)))
        self.reads = [flow_reads(registry, flow) for flow in self.flows]
        self.readers = index_keys(self.reads)
        writes = [flow_writes(registry, flow) for flow in self.flows]
        self.blockers = command_blockers(self.reads, writes)
        self.unblocks: dict[int, list[int]] = defaultdict(list)
        for index, blockers in enumerate(self.blockers):
            for blocker in blockers:
                self.unblocks[blocker].append(index)
        self.step_writes = [step_writes(registry, step) for step in steps]
        self.unsettled: Counter[FieldKey] = Counter(
            key for keys in self.step_writes for key in keys
        )
        self.candidates = set(self.waiting)

    def settle(self, position: int) -> None:
        """Record that the step at ``position`` has written everything it generates."""
        for key in self.step_writes[position]:
            self.unsettled[key] -= 1
            if self.unsettled[key] <= 0:
                self.candidates.update(self.readers.get(key, ()))

    def carry_out_ready(self, state: RunState, config: TypeMappingConfig) -> None:
        """Carry out every waiting command whose reads are all settled.

        Raises:
            ExecutionError: A command's value does not fit its target (see
                `apply_flow()`).
        """
        while ready := self._ready():
            for index in ready:
                self._write(state, self.flows[index], config)
            for index in ready:
                apply_flow(state, self.flows[index], config, scopes=_SENDS)
            self.waiting.difference_update(ready)
            for index in ready:
                self.candidates.update(self.unblocks.get(index, ()))

    def _write(self, state: RunState, flow: Flow, config: TypeMappingConfig) -> None:
        """Write a ready command's ``value`` targets."""
        apply_flow(state, flow, config, scopes=_WRITES)

    def _ready(self) -> list[int]:
        """The waiting candidates whose reads are all settled; they stay candidates until
        carried out, so that a failed batch is checked again."""
        ready = [
            index
            for index in sorted(self.candidates & self.waiting)
            if not any(self.unsettled[key] > 0 for key in self.reads[index])
            and not self.blockers[index] & self.waiting
        ]
        self.candidates = set(ready)
        return ready


def dry_run(
    registry: NodeRegistry,
    flows: Sequence[Flow],
    steps: Sequence[PlanStep],
    state: RunState,
    config: TypeMappingConfig,
) -> Iterator[tuple[PlanStep, Address]]:
    """Each step instance a run would call for, in plan order, as the dry run sees it.

    Steps finish in plan order: before each step, the commands that are ready by then are
    carried out on ``state``; each instance that lacks some of the step's fields is
    yielded, and once the caller is done with it, those fields are marked as pending on
    that step (`Pending`). A transform's instances are
    not yielded (they call no model); their fields are marked pending all the same.

    Raises:
        ExecutionError: A command's data does not fit (see
            `apply_flow()`).
    """
    schedule = FlowSchedule(registry, flows, steps)
    for position, step in enumerate(steps):
        schedule.carry_out_before(position, state, config)
        for address in state.instances(step.node_tag):
            values = state.view(address)
            if values is not None and all(_known(values, name) for name in step.fields):
                continue
            if step.transform is None:
                yield step, address
            state.write_generated(address, {name: Pending(step.id) for name in step.fields})


def _known(values: Mapping[str, object], name: str) -> bool:
    return name in values and not isinstance(values[name], Pending)


class FlowSchedule(CommandReadiness):
    """The dry run's schedule: plan steps finish in plan order."""

    def __init__(
        self, registry: NodeRegistry, flows: Sequence[Flow], steps: Sequence[PlanStep]
    ) -> None:
        super().__init__(registry, flows, steps)
        self.done_steps = 0

    def carry_out_before(self, position: int, state: RunState, config: TypeMappingConfig) -> None:
        """Settle the steps before ``position`` (they finished, in plan order) and carry out
        every command that makes ready.

        Raises:
            ExecutionError: A command's value does not fit its target (see
                `apply_flow()`).
        """
        while self.done_steps < position:
            self.settle(self.done_steps)
            self.done_steps += 1
        self.carry_out_ready(state, config)


def step_writes(registry: NodeRegistry, step: PlanStep) -> set[FieldKey]:
    node = registry.get(step.node_tag)
    assert node is not None
    writes: set[FieldKey] = set()
    for name in step.fields:
        writes.add(FieldKey(node.tag, name))
        child = registry.child(node, name)
        if child is not None:
            writes |= set(registry.subtree_fields(child))
    return writes
