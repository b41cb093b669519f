"""LangTree's own event loop: where every run drives its models.

Chat model clients built on httpx keep pooled connections bound to the event loop of their
first call (langchain-openai even shares its default async client among every
``ChatOpenAI`` with the same base URL and timeout). A client driven from one loop fails on
any other: with ``RuntimeError: Event loop is closed`` once the first loop is closed (a
script's ``asyncio.run``), or with a connection "bound to a different event loop" while it
is open (a notebook's loop, blocked while a synchronous ``run()`` waits). So a fresh loop
per synchronous run breaks the second run, and a run on the caller's loop breaks every
later run that cannot be on that loop.

So every run happens on one loop per process, in the daemon thread ``"langtree-loop"``,
started on first use and closed at exit: ``run_sync`` hands it a coroutine and waits, from
any thread, with or without a running loop of its own; ``run_async`` does the same for a
caller's coroutine (``arun()``), which awaits it from whatever loop it runs on. The
models' clients are then bound to a loop that outlives every caller's, whichever of
``run()`` and ``arun()`` comes first.

Ctrl-C while ``run_sync`` waits cancels the run's task, waits up to a second for it to stop
(so no further model call starts), and re-raises the interrupt. Inside ``asyncio.run``,
whose own SIGINT handler only cancels the main task (the very code blocked in the wait,
which would see the cancellation once the whole run is over), the main thread waits with
Python's handler put back, so that Ctrl-C interrupts it there too. Cancelling the task that
awaits ``run_async`` cancels the task on LangTree's loop likewise.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import contextvars
import functools
import queue
import signal
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from langtree.errors import ExecutionError

__all__ = ["iterate_async", "iterate_sync", "run_async", "run_sync"]

_THREAD_NAME = "langtree-loop"

_T = TypeVar("_T")

_POLL_SECONDS = 0.1
"""How often a waiting thread wakes up, so that Ctrl-C interrupts it on every platform."""

_STOP_SECONDS = 1.0
"""How long an interrupted run, or the loop at exit, gets to finish cancelling."""


@dataclass(frozen=True, slots=True)
class _LoopThread:
    loop: asyncio.AbstractEventLoop
    thread: threading.Thread


# Guards ``_current``: two threads that start their first run at once must share one loop.
_lock = threading.Lock()
_current: _LoopThread | None = None


def _langtree_loop() -> _LoopThread:
    """LangTree's loop and its thread, started on first use (and again if it stopped)."""
    global _current
    with _lock:
        if _current is None or not _current.thread.is_alive():
            _current = _start_loop()
        return _current


def _start_loop() -> _LoopThread:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=_serve, args=(loop,), name=_THREAD_NAME, daemon=True)
    thread.start()
    return _LoopThread(loop, thread)


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    """Run ``loop`` until it is stopped.

    A task that raises KeyboardInterrupt or SystemExit records it (for ``run_sync`` to
    re-raise in the waiting thread) before it escapes ``run_forever``; the loop then goes
    on serving every other run.
    """
    asyncio.set_event_loop(loop)
    # ``run_forever`` returns only when the loop is stopped (at exit); a KeyboardInterrupt or
    # SystemExit that a task raised escapes it instead, and the loop is run again.
    while True:
        with contextlib.suppress(KeyboardInterrupt, SystemExit):
            loop.run_forever()
            return


def _shutdown() -> None:
    """Cancel what still runs on LangTree's loop, then stop and close it (at exit).

    A loop still blocked after that is left to end with the process: its thread is a
    daemon, so exit never waits for it.
    """
    global _current
    # Taken out under the lock, then waited for without it: a run starting meanwhile gets
    # a loop of its own instead of the one being shut down.
    with _lock:
        current, _current = _current, None
    if current is None or not current.thread.is_alive():
        return
    cancelling = asyncio.run_coroutine_threadsafe(_cancel_all(), current.loop)
    with contextlib.suppress(TimeoutError):
        cancelling.result(timeout=_STOP_SECONDS + _POLL_SECONDS)
    current.loop.call_soon_threadsafe(current.loop.stop)
    current.thread.join(timeout=_STOP_SECONDS)
    # Closing a loop that still runs raises: a loop whose thread did not stop stays open.
    if not current.thread.is_alive():
        current.loop.close()


async def _cancel_all() -> None:
    tasks = asyncio.all_tasks() - {asyncio.current_task()}
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=_STOP_SECONDS)
    # Streams a caller left open run their ``finally`` blocks while the loop still runs.
    await asyncio.get_running_loop().shutdown_asyncgens()


atexit.register(_shutdown)


def run_sync(start: Callable[[], Awaitable[_T]]) -> _T:
    """Run the coroutine ``start()`` makes on LangTree's loop and wait for its result.

    Works from any thread, whether or not it runs an event loop of its own (a script, a
    notebook cell, a ``Runnable.batch`` worker). The task sees a copy of the caller's
    context variables (LangChain's callbacks and parent config travel in them).

    Args:
        start: Makes the awaitable; it is called on LangTree's loop.

    Returns:
        What the awaitable returns; what it raises propagates unchanged.

    Raises:
        ExecutionError: Called from code running on LangTree's loop, which would wait
            for itself.
        KeyboardInterrupt: The wait was interrupted (any exception raised in the waiting
            thread is re-raised likewise), after the task was cancelled and given up to
            a second to stop.
    """
    home = _langtree_loop()
    if threading.current_thread() is home.thread:
        raise ExecutionError(
            "Cannot run synchronously from code running on LangTree's event loop: "
            "the run would wait for itself\n"
            "  hint: in async code, await structure.arun(...) (or runnable.ainvoke(...)) "
            "instead of calling run(...) or invoke(...)"
        )
    with _ctrl_c_interrupts():
        remote = _Remote(home.loop, start)
        try:
            while not remote.wait(_POLL_SECONDS):
                continue
        # Left with the task unfinished only when the wait was interrupted: the task is
        # cancelled so that no further model call starts, and given a moment to stop.
        finally:
            if not remote.finished:
                remote.cancel()
                remote.wait(_STOP_SECONDS)
    return remote.future.result()


@contextlib.contextmanager
def _ctrl_c_interrupts() -> Iterator[None]:
    """While the main thread waits, Ctrl-C raises ``KeyboardInterrupt`` there, also when
    ``asyncio.run`` drives the caller.

    ``asyncio.run`` replaces Python's handler (``signal.default_int_handler``, the only one
    it replaces) with one that cancels its main task; but that task is blocked in this
    wait, and would see the cancellation only once the run is over. Python's handler is
    put back for the wait and asyncio's restored after it. Any other handler (a program's
    own, or Ctrl-C ignored) is left as it is, and other threads get no signals.
    """
    handler = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not _cancels_a_task(handler):
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)


def _cancels_a_task(handler: object) -> bool:
    """Whether ``handler`` is the SIGINT handler an ``asyncio.Runner`` (``asyncio.run``)
    installs: its ``_on_sigint`` method, bound to the runner, in a ``functools.partial``."""
    method = handler.func if isinstance(handler, functools.partial) else None
    return isinstance(getattr(method, "__self__", None), asyncio.Runner)


async def run_async(start: Callable[[], Awaitable[_T]]) -> _T:
    """Await ``start()`` on LangTree's loop, from code running on any loop.

    The task sees a copy of the caller's context variables. Called on LangTree's loop
    itself (a run inside a run), it awaits ``start()`` there directly.

    Args:
        start: Makes the awaitable; it is called on LangTree's loop.

    Returns:
        What the awaitable returns; what it raises propagates unchanged.

    Raises:
        asyncio.CancelledError: The caller was cancelled; the task on LangTree's loop
            was cancelled first and given up to a second to stop, and the notes it
            added to its cancellation are added to the caller's.
    """
    home = _langtree_loop()
    if asyncio.get_running_loop() is home.loop:
        return await start()
    remote = _Remote(home.loop, start)
    waiting = asyncio.wrap_future(remote.future)
    # Shielded: cancelling the wrapped future would not reach the task on LangTree's loop.
    # The caller's cancellation cancels that task through its own loop instead, and waits
    # for it, so that the notes it adds can be passed on.
    try:
        return await asyncio.shield(waiting)
    except asyncio.CancelledError as error:
        if not waiting.done():
            remote.cancel()
            await asyncio.wait((waiting,), timeout=_STOP_SECONDS)
        for note in remote.notes:
            error.add_note(note)
        raise


_END = object()
"""What ``anext`` gives at the end of an iterator (``StopAsyncIteration`` may not cross a
task's result)."""


async def iterate_async(items: AsyncGenerator[_T, None]) -> AsyncGenerator[_T, None]:
    """``items`` from async code, each advanced by `run_async()` on LangTree's loop;
    closing this closes ``items`` there too."""
    try:
        while True:
            item = await run_async(lambda: anext(items, _END))
            if item is _END:
                return
            yield cast(_T, item)
    finally:
        await run_async(items.aclose)


def iterate_sync(items: AsyncGenerator[_T, None]) -> Generator[_T, None, None]:
    """``items`` from synchronous code, each advanced by `run_sync()` on LangTree's
    loop; Ctrl-C cancels the iteration (its ``finally`` blocks run) and re-raises."""
    advancing = _Advancing(items)
    try:
        while True:
            item = run_sync(advancing.next)
            if item is _END:
                return
            yield cast(_T, item)
    finally:
        if advancing.is_open():
            run_sync(advancing.close)


class _Advancing(Generic[_T]):
    """An async generator advanced from another thread, one item at a time.

    Ctrl-C can interrupt ``run_sync`` after it scheduled a step but before it could
    cancel it; ``close`` then finds that step by its task, cancels it and waits for it,
    so that the generator is never closed while it runs.
    """

    def __init__(self, items: AsyncGenerator[_T, None]) -> None:
        self.items = items
        self.task: asyncio.Task[object] | None = None

    def is_open(self) -> bool:
        """Whether the generator has run and its loop still serves, so it needs closing.

        An iteration left open (kept by a variable, or by the traceback of an uncaught
        exception) is closed only when the interpreter clears it, after ``_shutdown``
        stopped the loop at exit; the shutdown has closed the generator already, and
        ``run_sync`` would start a new loop whose thread cannot start while the
        interpreter finalises (Python 3.11 waits for it forever).
        """
        return self.task is not None and _is_langtree_loop(self.task.get_loop())

    async def next(self) -> object:
        # Kept before the generator is advanced: ``close`` must find the step even when
        # Ctrl-C interrupts ``run_sync`` while it runs.
        self.task = asyncio.current_task()
        return await anext(self.items, _END)

    async def close(self) -> None:
        step = self.task
        if step is not None and step is not asyncio.current_task() and not step.done():
            step.cancel()
            await asyncio.wait((step,))
        await self.items.aclose()


def _is_langtree_loop(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether ``loop`` is LangTree's loop, running."""
    home = _current
    return home is not None and loop is home.loop and loop.is_running()


class _Remote(Generic[_T]):
    """``start()`` as a task on another thread's loop, seen from the thread that asked.

    Its outcome arrives in ``future`` (cancelled if the task was, with the notes of its
    cancellation in ``notes``), then ``finished`` turns true. Only the loop's thread
    touches the task, and callbacks run in order, so ``cancel`` always finds it.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, start: Callable[[], Awaitable[_T]]) -> None:
        self.future: concurrent.futures.Future[_T] = concurrent.futures.Future()
        self.finished = False
        self.notes: tuple[str, ...] = ()
        self._woken: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._loop = loop
        self._task: asyncio.Task[_T] | None = None
        # The context is copied here, on the caller's thread: LangChain's callbacks and the
        # provider's ``override()`` blocks travel in it to the task on LangTree's loop.
        loop.call_soon_threadsafe(self._begin, start, contextvars.copy_context())

    def wait(self, timeout: float) -> bool:
        """Whether the task has finished, waiting up to ``timeout`` seconds for it.

        Ctrl-C interrupts the wait, which holds no lock the loop's thread needs (an
        interrupted ``Future.result()`` might leave its lock held, and the loop stuck).
        """
        if not self.finished:
            with contextlib.suppress(queue.Empty):
                self._woken.get(timeout=timeout)
        return self.finished

    def cancel(self) -> None:
        """Ask the task to stop; ``finished`` turns true once it has."""
        self._loop.call_soon_threadsafe(self._cancel)

    def _begin(self, start: Callable[[], Awaitable[_T]], context: contextvars.Context) -> None:
        self._task = self._loop.create_task(self._awaited(start), context=context)
        self._task.add_done_callback(self._finish)

    async def _awaited(self, start: Callable[[], Awaitable[_T]]) -> _T:
        try:
            return await start()
        except asyncio.CancelledError as error:
            self.notes = tuple(getattr(error, "__notes__", ()))
            raise

    def _cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def _finish(self, task: asyncio.Task[_T]) -> None:
        if task.cancelled():
            self.future.cancel()
        elif (error := task.exception()) is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(task.result())
        # In this order: a thread that sees ``finished`` (or is woken) finds the outcome set.
        self.finished = True
        self._woken.put(None)
