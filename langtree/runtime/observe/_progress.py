"""Progress of a run built with ``RunStructure.build()``, from LangChain callbacks.

Every model call of a step is a child run of the built runnable's run (see
`langtree.runtime.engine._runnable`); `RunProgress` counts those children as they
finish, and as failures the ones that raised or gave no parsable structured output. An
output that parses but then fails validation is not seen here: the run's trace
(``TraceRecord.error``) is the exact count. An answer replayed from the run's journal
makes no call: it is announced as the custom event ``REPLAYED_EVENT`` on the run, and
counted apart (``RunProgress.replayed``). A call that waits for its provider (a
``Retry-After``) is announced by ``WAITING_EVENT`` and, once the wait is over,
``WAITED_EVENT`` (``RunProgress.waiting``).
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables.config import ensure_config, get_async_callback_manager_for_config

__all__ = [
    "REPLAYED_EVENT",
    "WAITED_EVENT",
    "WAITING_EVENT",
    "RunProgress",
    "announce_replayed",
    "waiting_for_provider",
]

REPLAYED_EVENT = "langtree_replayed_answer"
"""The custom event of an answer replayed from the journal; its data holds the node path
and whether the answer was valid."""

WAITING_EVENT = "langtree_waiting_for_provider"
"""The custom event of a call that starts waiting for its provider (a ``Retry-After``);
its data holds the wait's id, the node path and the seconds of the wait."""

WAITED_EVENT = "langtree_waited_for_provider"
"""The custom event of a wait for the provider that is over (or was cancelled); its data
holds the wait's id and the node path."""


async def announce_replayed(node_path: str, *, valid: bool) -> None:
    """Tell the callbacks of the run in progress that an answer was replayed (nothing
    happens outside a run, e.g. with tracing switched on globally)."""
    manager = get_async_callback_manager_for_config(ensure_config())
    if manager.parent_run_id is not None:
        data = {"node_path": node_path, "valid": valid}
        await manager.on_custom_event(REPLAYED_EVENT, data, run_id=manager.parent_run_id)


@contextlib.asynccontextmanager
async def waiting_for_provider(node_path: str, seconds: float) -> AsyncIterator[None]:
    """Tell the callbacks of the run in progress that a call of ``node_path`` waits
    ``seconds`` for its provider, and when the wait is over (also when it is cancelled);
    nothing happens outside a run."""
    manager = get_async_callback_manager_for_config(ensure_config())
    run = manager.parent_run_id
    if run is None:
        yield
        return
    data: dict[str, object] = {"wait": uuid.uuid4().hex, "node_path": node_path}
    await manager.on_custom_event(WAITING_EVENT, {**data, "seconds": seconds}, run_id=run)
    try:
        yield
    finally:
        await manager.on_custom_event(WAITED_EVENT, data, run_id=run)


class RunProgress(BaseCallbackHandler):
    """Counts the finished and failed model calls of one run.

    Args:
        total: The calls expected (the prompts known before the run; may grow).
        on_change: Called after each finished call with ``(done, total, failed)``.
    """

    run_inline = True
    """Called on the run's own thread, in order."""

    def __init__(self, total: int, on_change: Callable[[int, int, int], None] | None = None):
        self.total = total
        self.done = 0
        self.failed = 0
        self.replayed = 0
        self._waits: dict[str, float] = {}
        self._on_change = on_change
        self._root: UUID | None = None
        self._calls: set[UUID] = set()
        self._lock = threading.Lock()

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Note the run (the outermost chain) and, below it, each model call as it starts."""
        with self._lock:
            if parent_run_id is None and self._root is None:
                self._root = run_id
            elif parent_run_id is not None and parent_run_id == self._root:
                self._calls.add(run_id)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Count a finished call: failed when its structured output did not parse."""
        accepted = not isinstance(outputs, Mapping) or (
            outputs.get("parsed") is not None and outputs.get("parsing_error") is None
        )
        self._finish(run_id, failed=not accepted)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Count a call that raised as failed."""
        self._finish(run_id, failed=True)

    @property
    def waiting(self) -> float | None:
        """The seconds of the longest wait for a provider in progress (``None``: no call
        is waiting for one)."""
        with self._lock:
            return max(self._waits.values(), default=None)

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Count a call replayed from a journal, and track the waits for a provider."""
        if run_id != self._root or not isinstance(data, Mapping):
            return
        with self._lock:
            if name == REPLAYED_EVENT:
                self.replayed += 1
                self.done += 1
                self.failed += not data.get("valid")
                self.total = max(self.total, self.done)
            elif name == WAITING_EVENT:
                self._waits[data["wait"]] = data["seconds"]
            elif name == WAITED_EVENT:
                self._waits.pop(data["wait"], None)
            else:
                return
            counts = (self.done, self.total, self.failed)
        if self._on_change is not None:
            self._on_change(*counts)

    def _finish(self, run_id: UUID, *, failed: bool) -> None:
        with self._lock:
            if run_id not in self._calls:
                return
            self._calls.discard(run_id)
            self.done += 1
            self.failed += failed
            self.total = max(self.total, self.done)
            counts = (self.done, self.total, self.failed)
        if self._on_change is not None:
            self._on_change(*counts)
