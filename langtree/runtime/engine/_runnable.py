"""A whole run as one LangChain ``Runnable`` (what ``RunStructure.build()`` returns).

The runnable's input is the inputs mapping, exactly what ``run(inputs)`` takes: task
classes (or their tags) to dicts or instances of the values the caller supplies (``None``
for a run without inputs). External prompt variables and the run's settings are fixed when
it is built. Its output is the `RunResult`.

``invoke``, ``ainvoke``, ``batch`` and ``abatch`` work as for any runnable; a batch runs
its inputs concurrently, at most ``config["max_concurrency"]`` at a time. The run appears
in LangChain tracing under the runnable's name, and every model call of a step appears as
a child run named ``"<node path>: <fields>"``: the runnable's config (callbacks, tags) is
made the parent config of the run's model calls.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import var_child_runnable_config

from langtree.runtime.engine._setup import RunWatch, run_interruptible
from langtree.runtime.observe._result import RunResult

__all__ = ["DEFAULT_NAME", "RunInputs", "StartRun", "run_runnable"]

RunInputs = Mapping[object, object] | None
"""The runnable's input: task classes or tags to the caller's values (or ``None``)."""

StartRun = Callable[[object, RunWatch | None], Awaitable[RunResult]]
"""Starts one run for the given inputs (``RunStructure.arun`` with its settings bound),
reporting to the watch, when given, what had finished if it is cancelled; it checks the
inputs as ``run()`` does, so that both report the same errors."""

DEFAULT_NAME = "LangTree run"
"""The run's name in LangChain callbacks and traces when the caller gives none."""


def run_runnable(start: StartRun, *, name: str = DEFAULT_NAME) -> Runnable[RunInputs, RunResult]:
    """The run behind ``start`` as a runnable from the inputs mapping to a ``RunResult``.

    Args:
        start: Runs the tree for one inputs mapping, e.g.
            ``lambda inputs, watch: structure.arun(inputs, variables)``.
        name: The run's name in LangChain tracing.
    """

    async def traced(
        inputs: object, config: RunnableConfig, watch: RunWatch | None = None
    ) -> RunResult:
        # The runnable's child config (its callbacks) becomes the parent of the model
        # calls, also when the run happens on LangTree's own loop thread.
        var_child_runnable_config.set(config)
        return await start(inputs, watch)

    # Synchronous callers get `RunInterrupted` with the partial result on Ctrl-C, through
    # a watch; an awaiting caller is cancelled instead, and needs none.
    def invoke(inputs: object, config: RunnableConfig) -> RunResult:
        return run_interruptible(lambda watch: traced(inputs, config, watch))

    async def ainvoke(inputs: object, config: RunnableConfig) -> RunResult:
        return await traced(inputs, config)

    runnable: Runnable[Any, RunResult] = RunnableLambda(invoke, afunc=ainvoke, name=name)
    return runnable
