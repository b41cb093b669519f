"""Element-wise ``@each`` commands in a run: laid out first, then written element by element.

An element-wise command (see ``langtree.structure.commands._element_flows``) is *laid out* when the
first instance of a step producing its data finishes, if nothing it waits for writes the
lists it iterates: every destination element is created, and the mappings whose sources
no step produces are written. The steps whose
instances wait for the command's producers element by element (``PlanStep.element_waits``)
may then open. Each time an instance of a producing step finishes, the mappings it feeds
are written for its own iterations, before the instances waiting on it may start. When
every producing step has finished, the command is carried out once more as a whole, as
any other command is, which changes nothing but lets the commands that read its targets
go ahead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from langtree.prompts import Address, step_writes
from langtree.structure import (
    FieldKey,
    Flow,
    MappingFlow,
    NodeRegistry,
    PlanStep,
    element_levels,
    field_holder,
    source_reads,
)

__all__ = ["Assign", "ElementFlows", "ElementWrite"]

_Indices = tuple[int | None, ...]

Assign = Callable[[MappingFlow, _Indices], bool]
"""Whether to write a mapping's value for an iteration (else only its element is made)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ElementWrite:
    """What a finished instance sends through one element-wise command.

    Attributes:
        index: The command, by its position among the run's commands.
        assign: Which mappings and iterations to write.
        instances: The destination instances the write changes (empty: not known).
    """

    index: int
    assign: Assign
    instances: tuple[Address, ...]


class ElementFlows:
    """The run's element-wise commands and where they stand.

    Args:
        registry: The nodes.
        flows: The commands, in the order the command tracker keeps them.
        steps: The plan's steps, in plan order.
        producers: For each command, the steps it waits for (also through the commands
            that block it).
        direct: For each command, the steps that generate what it reads itself.
    """

    def __init__(
        self,
        registry: NodeRegistry,
        flows: Sequence[Flow],
        steps: Sequence[PlanStep],
        producers: Sequence[set[int]],
        direct: Sequence[set[int]],
    ) -> None:
        self.registry = registry
        self.flows = flows
        self.writes = [step_writes(registry, step) for step in steps]
        produced = {key for keys in self.writes for key in keys}
        # Only the commands that are element-wise (some levels) are kept here; the others
        # wait for whole steps, as in the dry run.
        self.levels = {
            index: levels
            for index, flow in enumerate(flows)
            if (levels := element_levels(registry, flow, produced))
        }
        self.sources: dict[int, list[tuple[MappingFlow, set[FieldKey]]]] = {
            index: [(m, source_reads(registry, flows[index], m)) for m in flows[index].mappings]
            for index in self.levels
        }
        self.produced = produced
        self.laid_out: set[int] = set()
        self._early = [self._early_flows(step, steps, producers) for step in steps]
        # Per step, the element-wise commands that read what it generates itself: each of
        # its instances that finishes writes into them.
        self._fed: dict[int, list[int]] = {}
        for index in self.levels:
            for position in direct[index]:
                self._fed.setdefault(position, []).append(index)

    def _early_flows(
        self, step: PlanStep, steps: Sequence[PlanStep], producers: Sequence[set[int]]
    ) -> set[int]:
        """The element-wise commands ``step`` needs only element by element: every step
        they wait for is one the step's instances wait for per element."""
        per_element = {wait.step_id for wait in step.element_waits}
        # A command with no producing step has nothing to write element by element: it is
        # carried out whole before the step, as any other command.
        return {
            index
            for index in self.levels
            if producers[index] and all(steps[p].id in per_element for p in producers[index])
        }

    def early_for(self, position: int) -> set[int]:
        """The laid-out commands the step at ``position`` need not wait for to open."""
        return self._early[position] & self.laid_out

    def to_lay_out(
        self, waiting: set[int], blockers: Sequence[set[int]], *, fed_by: int
    ) -> list[int]:
        """The waiting element-wise commands that the step at ``fed_by`` feeds and that may
        be laid out now (marked laid out): no other waiting command writes what they
        read."""
        ready = [
            index
            for index in self._fed.get(fed_by, ())
            if index in waiting and index not in self.laid_out and not blockers[index] & waiting
        ]
        # Marked at once: each command is laid out once, by the first instance that feeds it.
        self.laid_out.update(ready)
        return ready

    def known_sources(self, index: int) -> Assign:
        """Writes the mappings whose sources no step produces, for every iteration."""
        # Mappings are told apart by identity: two mappings of one command may be equal.
        known = {
            id(mapping_flow)
            for mapping_flow, keys in self.sources[index]
            if not keys & self.produced
        }
        return lambda mapping_flow, indices: id(mapping_flow) in known

    def fed_by(self, position: int, address: Address, waiting: set[int]) -> Iterator[ElementWrite]:
        """For each laid-out, still waiting command that the finished instance feeds,
        what to write: the mappings whose sources the step writes, for the iterations
        under the instance."""
        for index in self._fed.get(position, ()):
            if index not in self.laid_out or index not in waiting:
                continue
            fed = {
                id(mapping_flow)
                for mapping_flow, keys in self.sources[index]
                if keys & self.writes[position]
            }
            # The instance's own iterations: those whose indices start with the instance's
            # on the command's element levels (all of them for an instance above those).
            if fed:
                prefix = address.indices[: self.levels[index]]
                yield ElementWrite(
                    index=index,
                    assign=_assign_under(fed, prefix),
                    instances=self._instances(index, fed, prefix),
                )

    def _instances(self, index: int, fed: set[int], prefix: _Indices) -> tuple[Address, ...]:
        """The destination instances a write for ``prefix`` changes (none: not told)."""
        # An instance above the element levels feeds many elements at once: the instances
        # that change are not told, and the provenance log compares the whole task.
        if len(prefix) < self.levels[index]:
            return ()
        return tuple(
            Address(field_holder(self.registry, mapping_flow.target).tag, prefix)
            for mapping_flow in self.flows[index].mappings
            if id(mapping_flow) in fed and mapping_flow.target is not None
        )


def _assign_under(fed: set[int], prefix: _Indices) -> Assign:
    def assign(mapping_flow: MappingFlow, indices: _Indices) -> bool:
        return id(mapping_flow) in fed and indices[: len(prefix)] == prefix

    return assign
