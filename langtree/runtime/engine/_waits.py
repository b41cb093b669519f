"""Which step instances may start: per element, not per whole plan step.

An instance of step S at ``Address(tag, indices)`` that depends on plan step P waits only
for P's instances in its own branch of the tree: those whose indices agree with its own
on the list levels of the deepest node the two steps' nodes share (their longest common
ancestor). When that ancestor is the root task, or the two nodes lie in different tasks,
it waits for every instance of P, unless an element-wise ``@each`` links the two steps
(``PlanStep.element_waits``): then element *i* waits for P's instances of iteration *i*.
A section's summary thus waits for its own paragraphs only, a paragraph's second step
for its first step on the same paragraph, and a step of another task (or of the root)
for all of them, or for its own element's.

The bookkeeping is event driven: each opened step keeps, for every number of shared list
levels its dependents need, a count of unfinished instances per index prefix; when a
count reaches zero the instances waiting on it are woken. A failed (or skipped) instance
is kept by the same prefixes, so the instances it holds back are found by branch; a step
that reads it only through ``.**.`` pluck paths (``PlanStep.partial_reads``) is not held
back, as the pluck leaves out what the instance never produced.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import NamedTuple

from langtree.prompts import Address
from langtree.structure import NodeRegistry, PlanStep

__all__ = ["InstanceWaits", "Need", "shared_levels"]

# An instance by its step's position and its address; a branch by the first indices of an
# address (an index of ``None`` stands for elements not known yet, as in `Address`).
_Instance = tuple[int, Address]
_Prefix = tuple[int | None, ...]


class Need(NamedTuple):
    """A plan step that a step's instances wait for, on how many index levels an
    instance of the one matches an instance of the other, and whether they go on without
    its failed instances (``partial``)."""

    step: int
    levels: int
    partial: bool = False


def shared_levels(registry: NodeRegistry, first: str, second: str) -> int:
    """The list levels above and at the deepest node that the nodes ``first`` and
    ``second`` both lie under (0 when they are in different tasks)."""
    levels = 0
    # Both paths start at a root task: the first node they differ on ends the shared
    # branch, and each shared node's list depth adds the indices the two instances share.
    for one, other in zip(registry.path(first), registry.path(second), strict=False):
        if one.tag != other.tag:
            break
        levels += one.list_depth
    return levels


def _levels(registry: NodeRegistry, step: PlanStep, prerequisite: PlanStep) -> int:
    """The index levels on which ``step``'s instances match ``prerequisite``'s: those of
    their shared branch, or more for an element-wise ``@each`` between them."""
    shared = shared_levels(registry, step.node_tag, prerequisite.node_tag)
    aligned = [wait.levels for wait in step.element_waits if wait.step_id == prerequisite.id]
    return max([shared, *aligned])


def _transitive_needs(registry: NodeRegistry, steps: Sequence[PlanStep]) -> list[list[Need]]:
    """For each step, every step it waits for, directly or through others.

    An instance waits for its prerequisites' prerequisites too, not only through the
    prerequisites' instances: a prerequisite with no instance in the instance's branch
    (an empty list) finishes at once, and the steps behind it must still be done first,
    as the plan's order says. Through a chain, an instance matches on the fewest index
    levels any link of the chain matches on, and goes on without the far step's failed
    instances when some link does (``partial``) on every chain to it.
    """
    position_of = {step.id: position for position, step in enumerate(steps)}
    # Built in plan order: a step depends only on earlier ones, so the closure of each of
    # its prerequisites is complete when the step is reached.
    closure: list[dict[int, Need]] = []
    for step in steps:
        found: dict[int, Need] = {}
        for dep in step.depends_on:
            if dep not in position_of:
                continue
            position = position_of[dep]
            direct = Need(
                position, _levels(registry, step, steps[position]), dep in step.partial_reads
            )
            for further in [direct, *closure[position].values()]:
                chained = Need(
                    further.step,
                    min(direct.levels, further.levels),
                    direct.partial or further.partial,
                )
                known = found.get(further.step)
                found[further.step] = chained if known is None else _both(known, chained)
        closure.append(found)
    # Sorted by position: `broken_dependency()` then names the earliest failed step in plan
    # order, the same in every run whichever order the chains were found in.
    return [[found[dep] for dep in sorted(found)] for found in closure]


def _both(one: Need, other: Need) -> Need:
    """What two chains to the same step ask together: the fewer levels, and going on
    without its failed instances only when both do."""
    return Need(one.step, min(one.levels, other.levels), one.partial and other.partial)


class InstanceWaits:
    """The instances of opened steps, and which of them may start.

    Args:
        registry: The nodes.
        steps: The plan's steps, in plan order (positions index them); a step depends
            only on steps before it.
    """

    def __init__(self, registry: NodeRegistry, steps: Sequence[PlanStep]) -> None:
        self.needs = _transitive_needs(registry, steps)
        # A split step's instances are listed once the step creating its node is done.
        position_of = {step.id: position for position, step in enumerate(steps)}
        self.creators = [
            None if step.creator is None else position_of[step.creator] for step in steps
        ]
        # For each step, the numbers of index levels its dependents match it on: its
        # unfinished instances are counted by prefix of each of these lengths, and only these.
        self.levels: dict[int, set[int]] = defaultdict(set)
        for needs in self.needs:
            for need in needs:
                self.levels[need.step].add(need.levels)
        self.opened: set[int] = set()
        self.finished: set[int] = set()
        # Per opened step, its instances not finished yet: at zero the step is finished.
        self._left: dict[int, int] = {}
        # Per (step, levels), the unfinished instances of each branch: a dependent in that
        # branch may start once its count is zero.
        self._unfinished: dict[tuple[int, int], Counter[_Prefix]] = {}
        # The instances to wake when the count of (step, levels, prefix) reaches zero.
        self._waiters: dict[tuple[int, int, _Prefix], list[_Instance]] = defaultdict(list)
        # Per step not opened yet, the instances (of steps opened before it) that wait for
        # it, and on how many levels: they wait on its counts once it opens.
        self._before_open: dict[int, list[tuple[_Instance, int]]] = defaultdict(list)
        # Per instance listed and not released, how many counts it still waits on (a step
        # not opened yet counts as one): at zero it is ready.
        self._blocked: dict[_Instance, int] = {}
        self._ready: list[_Instance] = []
        self._newly_finished: list[int] = []
        # The first failure recorded per (step, levels, prefix), for the branches a failed or
        # skipped instance holds back.
        self._broken: dict[tuple[int, int, _Prefix], str] = {}

    def open(self, position: int, addresses: Sequence[Address]) -> None:
        """Record the instances of a step; each starts once its own prerequisites are done."""
        assert position not in self.opened
        self.opened.add(position)
        self._left[position] = len(addresses)
        # The counts are in place before anything waits on them: below, the instances that
        # waited for this step to open look their branch up in them.
        for levels in self.levels[position]:
            self._unfinished[(position, levels)] = Counter(
                address.indices[:levels] for address in addresses
            )
        for address in addresses:
            instance = (position, address)
            self._blocked[instance] = 0
            for need in self.needs[position]:
                if need.step in self.opened:
                    self._wait(instance, need.step, need.levels)
                else:
                    self._blocked[instance] += 1
                    self._before_open[need.step].append((instance, need.levels))
            if not self._blocked[instance]:
                self._release(instance)
        # Instances of steps opened earlier that waited for this step to be listed: its
        # counts now say whether their branch holds unfinished instances of it.
        for instance, levels in self._before_open.pop(position, []):
            self._blocked[instance] -= 1
            self._wait(instance, position, levels)
            if not self._blocked[instance]:
                self._release(instance)
        # No instance will ever finish, so the step is finished as it opens: its dependents
        # and the commands that read it need not wait for it.
        if not addresses:
            self._finish_step(position)

    def _wait(self, instance: _Instance, dep: int, levels: int) -> None:
        prefix = instance[1].indices[:levels]
        # A branch whose instances of ``dep`` are done, or that has none (a Counter gives 0),
        # holds nothing back.
        if self._unfinished[(dep, levels)][prefix] > 0:
            self._blocked[instance] += 1
            self._waiters[(dep, levels, prefix)].append(instance)

    def _release(self, instance: _Instance) -> None:
        del self._blocked[instance]
        self._ready.append(instance)

    def finish(self, position: int, address: Address) -> None:
        """Record that an instance finished (or had nothing to do); wake what it held."""
        for levels in self.levels[position]:
            prefix = address.indices[:levels]
            counts = self._unfinished[(position, levels)]
            counts[prefix] -= 1
            if counts[prefix] == 0:
                for instance in self._waiters.pop((position, levels, prefix), []):
                    self._blocked[instance] -= 1
                    if not self._blocked[instance]:
                        self._release(instance)
        self._left[position] -= 1
        if not self._left[position]:
            self._finish_step(position)

    def _finish_step(self, position: int) -> None:
        self.finished.add(position)
        self._newly_finished.append(position)

    def take_ready(self) -> list[_Instance]:
        """The instances that may start now (each is returned once)."""
        ready, self._ready = self._ready, []
        return ready

    def take_finished(self) -> list[int]:
        """The steps whose instances have all finished since the last call."""
        finished, self._newly_finished = self._newly_finished, []
        return finished

    def mark_broken(self, position: int, address: Address, because: str) -> None:
        """Record that an instance failed or was skipped (``because`` says which instance
        failed); the first one recorded in a branch is the one its dependents name."""
        # Recorded on every prefix length a dependent looks it up by, as the counts are.
        for levels in self.levels[position]:
            key = (position, levels, address.indices[:levels])
            self._broken.setdefault(key, because)

    def broken_dependency(self, position: int, address: Address) -> str | None:
        """Why an instance must be skipped: what `mark_broken()` recorded for an
        instance it depends on, if any (looked up by branch, not by a scan of the
        failures), unless it goes on without that step's failed instances."""
        # The needs are transitive: a failure two steps back is found here directly, even
        # when the step between has no instance in the branch to be skipped.
        for need in self.needs[position]:
            prefix = address.indices[: need.levels]
            because = None if need.partial else self._broken.get((need.step, need.levels, prefix))
            if because is not None:
                return because
        return None

    def created(self, position: int) -> bool:
        """Whether the instances of the step at ``position`` exist to be listed: it is no
        split step, or the step that creates its node has finished for all instances
        (a split step opened earlier would find none of the nodes that step makes)."""
        creator = self.creators[position]
        return creator is None or creator in self.finished

    def deps_finished(self, position: int) -> bool:
        """Whether every step that ``position`` depends on has finished for all instances."""
        return all(need.step in self.finished for need in self.needs[position])
