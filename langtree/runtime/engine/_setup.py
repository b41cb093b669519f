"""What a run starts from, and how synchronous code waits for it.

`RunSetup` is a validated structure planned for the caller's inputs, with the
run's settings: everything `execute()` needs. `RunBasis` is what the run then makes of
it before the first call: the values it starts from and how its prompts are built.
`run_interruptible()` runs it to completion from synchronous code on LangTree's own
event loop (`langtree.runtime.engine._loop`) and turns Ctrl-C into
`RunInterrupted` with what had finished.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from langtree.errors import ExecutionError
from langtree.prompts import PromptBuilder, PromptSetup, RunState
from langtree.runtime._settings import RunSettings
from langtree.runtime.calls._provider import LLMProvider
from langtree.runtime.engine._known_parts import KnownParts
from langtree.runtime.engine._loop import run_sync
from langtree.runtime.faults._failure import RunInterrupted
from langtree.runtime.observe._result import RunResult
from langtree.structure import PlanStep, TreeNode

__all__ = [
    "OnError",
    "RunBasis",
    "RunSetup",
    "RunWatch",
    "require_provider",
    "run_interruptible",
]

OnError = Literal["raise", "continue"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSetup:
    """A validated structure, planned for the caller's inputs, with the run's settings.

    Attributes:
        prompts: What the prompts are assembled from (the structure, the plan, the
            inputs and variables), as for a dry run.
        tasks: The root task classes by tag.
        settings: Concurrency, retries, timeouts and limits.
        on_error: What a failed step instance does (``RunStructure``'s ``on_error``).
    """

    prompts: PromptSetup
    tasks: Mapping[str, type[TreeNode]]
    settings: RunSettings
    on_error: OnError = "raise"


@dataclass(frozen=True, slots=True, kw_only=True)
class RunBasis:
    """What a run is given once its checks before the first call have passed.

    Attributes:
        setup: The validated, planned run.
        state: The run's values: the inputs and defaults, then what it writes.
        builder: Assembles each step instance's prompt from ``state``.
        parts: The fields left out of the nodes its steps generate whole (their classes
            and the values read from a model).
    """

    setup: RunSetup
    state: RunState
    builder: PromptBuilder
    parts: KnownParts

    @classmethod
    def start(cls, setup: RunSetup, state: RunState, builder: PromptBuilder) -> RunBasis:
        """The basis of a run from its set-up, its values and its prompt builder."""
        # The same known and split fields the builder's prompts leave out, so that the schema
        # a model is shown agrees with the prompt it is sent.
        parts = KnownParts(setup.prompts.registry, builder.known, builder.split)
        return cls(setup=setup, state=state, builder=builder, parts=parts)

    @property
    def prompts(self) -> PromptSetup:
        """What the prompts are assembled from."""
        return self.setup.prompts

    @property
    def steps(self) -> Sequence[PlanStep]:
        """The plan's steps, in plan order (a step's position indexes them)."""
        return self.setup.prompts.plan.steps


class RunWatch:
    """Receives what a run had done when it was cancelled (Ctrl-C), for its caller.

    Attributes:
        result: The partial result, once the run was cancelled.
    """

    def __init__(self) -> None:
        self.result: RunResult | None = None


def run_interruptible(start: Callable[[RunWatch], Awaitable[RunResult]]) -> RunResult:
    """Run ``start(watch)`` to completion from synchronous code (see ``runtime.loop``).

    Raises:
        RunInterrupted: Ctrl-C stopped the run; it carries what had finished.
    """
    watch = RunWatch()
    try:
        return run_sync(lambda: start(watch))
    except KeyboardInterrupt:
        # No partial result: the run had not started its steps when it was cancelled (or
        # had already ended), and the interrupt goes on as it is.
        if watch.result is None:
            raise
        raise RunInterrupted(watch.result) from None


def require_provider(provider: object) -> LLMProvider:
    """The run's provider.

    Raises:
        ExecutionError: There is none, or it is not an ``LLMProvider``.
    """
    if isinstance(provider, LLMProvider):
        return provider
    found = "no provider" if provider is None else f"{type(provider).__name__!r} is not a provider"
    raise ExecutionError(
        f"Cannot run: {found}\n"
        "  hint: pass the models when building the structure: "
        "RunStructure(provider=LLMProvider({...}))"
    )
