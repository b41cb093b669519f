"""When ``@each``/``@all`` commands run during a run, with steps finishing in any order.

This builds on the dry run's schedule (`CommandReadiness`),
which steps may settle in any order: a command is carried out once no unfinished step
generates what it reads and no waiting command writes it; ``value`` targets are written
before ``prompt``/``outputs`` values are sent.

It also tells the scheduler which commands a step must wait for: those whose destination
is the step's node, an ancestor or a descendant of it (or the external prompt), and whose
producing steps all come before the step in plan order. Those are exactly the commands
the dry run has carried out when it reaches the step, so the step's prompt holds the
same mapped values as the dry run's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from langtree.prompts import Address, CommandReadiness, RunState, write_iterations
from langtree.runtime.engine._element_flows import Assign, ElementFlows
from langtree.runtime.observe._provenance import ProvenanceLog
from langtree.structure import FieldKey, Flow, NodeRegistry, PlanStep, TypeMappingConfig

__all__ = ["CommandTracker"]


class CommandTracker(CommandReadiness):
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
        log: ProvenanceLog,
    ) -> None:
        super().__init__(registry, flows, steps)
        self.log = log
        # Which steps generate each field, to find the steps each command reads from.
        generators: dict[FieldKey, set[int]] = defaultdict(set)
        for position, keys in enumerate(self.step_writes):
            for key in keys:
                generators[key].add(position)
        direct = [
            {position for key in reads for position in generators.get(key, ())}
            for reads in self.reads
        ]
        # A command waits for its blockers, and they for their producing steps: a command is
        # only as ready as the commands that write what it reads.
        self.producers = [self._closure(index, direct) for index in range(len(self.flows))]
        self.required = [self._required(position, step) for position, step in enumerate(steps)]
        self.elements = ElementFlows(registry, self.flows, steps, self.producers, direct)

    def _closure(self, index: int, direct: list[set[int]]) -> set[int]:
        """The steps a command waits for, directly or through the commands blocking it."""
        # A walk with a stack and a seen set: blockers may wait for each other in a cycle.
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
        """Whether every command the step at ``position`` waits for has been carried out,
        or laid out element by element for a step whose instances wait per element."""
        waiting = self.required[position] & self.waiting
        # A laid-out element-wise command holds the step back no longer: each of its
        # instances waits for its own elements' producers instead (`InstanceWaits`).
        return not waiting - self.elements.early_for(position)

    def finish_step(self, position: int, state: RunState, config: TypeMappingConfig) -> None:
        """Record that a step finished for all its instances, and run what became ready.

        Raises:
            ExecutionError: A command's value does not fit its target (see
                `apply_flow()`).
        """
        # Settled first: what the step generates may be all that a command still waited for.
        self.settle(position)
        self.carry_out_ready(state, config)

    def finish_instance(
        self, position: int, address: Address, state: RunState, config: TypeMappingConfig
    ) -> None:
        """Write what an instance's output sends to its own elements, element by element,
        laying out the element-wise commands it is the first to feed.

        An element-wise command is laid out (its destination elements made, the values no
        step produces written) only once one of its producing instances has finished, not
        when the run starts: every step its producers wait for has then finished, and a
        step that shows the destination without waiting for the command (one its
        producers wait for) saw it as it stood before the command, in every run.

        Raises:
            ExecutionError: A value does not fit its target.
        """
        for index in self.elements.to_lay_out(self.waiting, self.blockers, fed_by=position):
            self._write_elements(state, index, config, self.elements.known_sources(index))
        # After the lay-out: the destination elements exist before this instance's own
        # values are written into them.
        for write in self.elements.fed_by(position, address, self.waiting):
            self._write_elements(state, write.index, config, write.assign, write.instances)

    def _write_elements(
        self,
        state: RunState,
        index: int,
        config: TypeMappingConfig,
        assign: Assign,
        instances: tuple[Address, ...] = (),
    ) -> None:
        flow = self.flows[index]
        # The provenance log records what this write changed by comparing before and after:
        # only the destination instances when they are known, else the whole task written.
        before = self.log.snapshot(state, flow, instances)
        write_iterations(state, flow, config, assign)
        self.log.record_mapping(before, state, flow, instances)

    def _write(self, state: RunState, flow: Flow, config: TypeMappingConfig) -> None:
        """Write a command's ``value`` targets, and log what they wrote."""
        before = self.log.snapshot(state, flow)
        super()._write(state, flow, config)
        self.log.record_mapping(before, state, flow)


def _reaches(flow: Flow, tag: str) -> bool:
    """Whether a command's destination is the node at ``tag``, above it, or below it."""
    # A command to the external prompt (no destination node) may change any prompt.
    if flow.destination is None:
        return True
    destination = flow.destination.node.tag
    # Above the node, a command may make its instances (an ``@each`` creating list
    # elements) or change what its prompt shows.
    return (
        destination == tag
        or tag.startswith(destination + ".")
        or (destination.startswith(tag + "."))
    )
