"""When ``@each``/``@all`` commands run during a run, with steps finishing in any order.

This is the run-time twin of the dry run's schedule (:mod:`langtree.prompts.schedule`),
built from the same read/write sets: a command is carried out once no unfinished step
generates what it reads and no waiting command writes it; ``value`` targets are written
before ``prompt``/``outputs`` values are sent.

It also tells the scheduler which commands a step must wait for: those whose destination
is the step's node, an ancestor or a descendant of it (or the external prompt), and whose
producing steps all come before the step in plan order. Those are exactly the commands
the dry run has carried out when it reaches the step, so the step's prompt holds the
same mapped values as the dry run's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from langtree.prompts.dataflow import apply_flow
from langtree.prompts.schedule import flow_reads, flow_writes, step_writes
from langtree.prompts.state import RunState
from langtree.runtime.provenance import ProvenanceLog
from langtree.structure.flows import Flow, TargetScope
from langtree.structure.plan import PlanStep
from langtree.structure.registry import NodeRegistry
from langtree.structure.type_config import TypeMappingConfig

__all__ = ["CommandTracker"]

_WRITES: tuple[TargetScope, ...] = ("value",)
_SENDS: tuple[TargetScope, ...] = ("prompt", "outputs", "external")


class CommandTracker:
    """The commands still waiting, and what each one waits for.

    Args:
        registry: The nodes.
        flows: The resolved commands.
        steps: The plan's steps, in plan order (positions index them).
        log: Receives what each command's ``value`` targets write (DESIGN D14).
    """

    def __init__(
        self,
        registry: NodeRegistry,
        flows: Sequence[Flow],
        steps: Sequence[PlanStep],
        *,
        log: ProvenanceLog | None = None,
    ) -> None:
        self.log = log
        self.flows = list(flows)
        self.waiting = set(range(len(self.flows)))
        self.reads = [flow_reads(registry, flow) for flow in self.flows]
        writes = [flow_writes(registry, flow) for flow in self.flows]
        self.blockers = [
            {other for other, keys in enumerate(writes) if other != index and keys & reads}
            for index, reads in enumerate(self.reads)
        ]
        writes_by_step = [step_writes(registry, step) for step in steps]
        self.step_writes = writes_by_step
        self.unsettled: Counter[tuple[str, str]] = Counter(
            key for keys in writes_by_step for key in keys
        )
        direct = [
            {position for position, keys in enumerate(writes_by_step) if keys & reads}
            for reads in self.reads
        ]
        self.producers = [self._closure(index, direct) for index in range(len(self.flows))]
        self.required = [self._required(position, step) for position, step in enumerate(steps)]

    def _closure(self, index: int, direct: list[set[int]]) -> set[int]:
        """The steps a command waits for, directly or through the commands blocking it."""
        seen, todo, steps = {index}, [index], set()
        while todo:
            current = todo.pop()
            steps |= direct[current]
            for blocker in self.blockers[current] - seen:
                seen.add(blocker)
                todo.append(blocker)
        return steps

    def _required(self, position: int, step: PlanStep) -> set[int]:
        """The commands the dry run carries out before the step at ``position`` that
        reach its node."""
        return {
            index
            for index, flow in enumerate(self.flows)
            if _reaches(flow, step.node_tag) and all(p < position for p in self.producers[index])
        }

    def ready_for(self, position: int) -> bool:
        """Whether every command the step at ``position`` waits for has been carried out."""
        return not self.required[position] & self.waiting

    def finish_step(self, position: int, state: RunState, config: TypeMappingConfig) -> None:
        """Record that a step finished for all its instances, and run what became ready.

        Raises:
            ExecutionError: A command's value does not fit its target (see
                :func:`~langtree.prompts.dataflow.apply_flow`).
        """
        self.unsettled.subtract(self.step_writes[position])
        self.apply_ready(state, config)

    def apply_ready(self, state: RunState, config: TypeMappingConfig) -> None:
        """Carry out every waiting command whose reads are all settled."""
        while ready := self._ready():
            for index in ready:
                before = self.log.snapshot(state) if self.log is not None else None
                apply_flow(state, self.flows[index], config, scopes=_WRITES)
                if self.log is not None and before is not None:
                    self.log.record_mapping(before, state, self.flows[index])
            for index in ready:
                apply_flow(state, self.flows[index], config, scopes=_SENDS)
            self.waiting.difference_update(ready)

    def _ready(self) -> list[int]:
        return [
            index
            for index in sorted(self.waiting)
            if not any(self.unsettled[key] > 0 for key in self.reads[index])
            and not self.blockers[index] & self.waiting
        ]


def _reaches(flow: Flow, tag: str) -> bool:
    """Whether a command's destination is the node at ``tag``, above it, or below it."""
    if flow.destination is None:
        return True
    destination = flow.destination.node.tag
    return (
        destination == tag
        or tag.startswith(destination + ".")
        or (destination.startswith(tag + "."))
    )
