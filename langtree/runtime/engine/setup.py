"""What a run starts from, and how synchronous code waits for it.

`RunSetup` is a validated structure planned for the caller's inputs, with the
run's settings: everything `execute()` needs.
`run_interruptible()` runs it to completion from synchronous code on LangTree's own
event loop (`langtree.runtime.engine.loop`) and turns Ctrl-C into
`RunInterrupted` with what had finished.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from langtree.errors import ExecutionError
from langtree.prompts.preview import PromptSetup
from langtree.runtime.calls.provider import LLMProvider
from langtree.runtime.engine.loop import run_sync
from langtree.runtime.faults.failure import RunInterrupted
from langtree.runtime.observe.result import RunResult
from langtree.runtime.settings import RunSettings
from langtree.structure.tree.tree_node import TreeNode

__all__ = ["OnError", "RunSetup", "RunWatch", "require_provider", "run_interruptible"]

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
