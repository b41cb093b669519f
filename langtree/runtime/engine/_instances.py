"""The step instances of a run: which may start, which are running, which have finished.

The engine (`langtree.runtime.engine._engine`) opens a step once `CommandTracker` has
carried out the commands it waits for, starts an instance's task once `InstanceWaits`
lets it, keeps it in a `Schedule` while its calls are in flight, and handles each task
as it reports that it is done.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from langtree.prompts import Address, PromptSetup
from langtree.runtime.engine._commands import CommandTracker
from langtree.runtime.engine._waits import InstanceWaits
from langtree.runtime.observe._provenance import ProvenanceLog

__all__ = ["Schedule", "StepInstance"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StepInstance:
    """One instance of a plan step: the step's position in the plan, and the node
    instance it generates fields of."""

    position: int
    address: Address


@dataclass(frozen=True, slots=True, kw_only=True)
class Schedule:
    """Where the run's steps stand.

    The parts are fixed when the run is set up (`of_plan()`); what they hold changes as
    the run goes.

    Attributes:
        commands: The ``@each``/``@all`` commands still waiting, and which steps wait
            for them.
        waits: Which instances may start (per element).
        closed: The steps whose instances are not listed yet (their commands wait).
        running: The instances whose calls are in flight, by their task.
        done: The tasks that finished since the run last looked, in the order they did.
        wake: Set when ``done`` gets a task.
    """

    commands: CommandTracker
    waits: InstanceWaits
    closed: list[int]
    running: dict[asyncio.Task[None], StepInstance] = field(default_factory=dict)
    done: list[asyncio.Task[None]] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    @classmethod
    def of_plan(cls, prompts: PromptSetup, log: ProvenanceLog) -> Schedule:
        """A run's schedule before anything has run: every step closed (``log``: receives
        what the commands write)."""
        steps = prompts.plan.steps
        return cls(
            commands=CommandTracker(prompts.registry, prompts.analysis.flows, steps, log=log),
            waits=InstanceWaits(prompts.registry, steps),
            closed=list(range(len(steps))),
        )

    def start(self, task: asyncio.Task[None], instance: StepInstance) -> None:
        """Keep a started instance's task until it finishes."""
        self.running[task] = instance
        # The callback runs on the loop once the task is done, even when it was cancelled
        # or raised: every started task is handed back by `finished()` exactly once.
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self.done.append(task)
        self.wake.set()

    async def finished(self) -> list[tuple[asyncio.Task[None], StepInstance]]:
        """The tasks that have finished (at least one, waiting for it if need be), with
        their instances; they no longer count as running.

        Each task tells when it is done: ``asyncio.wait`` over every running task would
        register and remove a callback on each of them per wake-up, and a large run
        keeps thousands of tasks waiting for a place of ``max_concurrency``.
        """
        await self.wake.wait()
        # No await between clearing the event and taking the list: every task that finished
        # before is in ``done``, and one that finishes after sets the event again, so no
        # wake-up is lost and none is spurious.
        self.wake.clear()
        finished = [(task, self.running.pop(task)) for task in self.done]
        self.done.clear()
        return finished
