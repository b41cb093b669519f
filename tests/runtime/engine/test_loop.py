"""LangTree's own event loop: ``run_sync``, ``run_async``, interruption and shutdown."""

import _thread
import asyncio
import concurrent.futures
import contextvars
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from loop_bound import LoopBoundClient, running_loop, user_loop

from langtree.errors import ExecutionError
from langtree.runtime.engine import _loop as langtree_loop
from langtree.runtime.engine._loop import run_async, run_sync

REPOSITORY = Path(__file__).parent.parent.parent.parent

REQUEST = contextvars.ContextVar("REQUEST", default="unset")


def sigint_main_thread() -> None:
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)


# The problem: a bound client across loops.


def test_a_new_loop_per_call_breaks_a_client_bound_to_the_first() -> None:
    client = LoopBoundClient()
    asyncio.run(client.call())

    with pytest.raises(RuntimeError, match="Event loop is closed"):
        asyncio.run(client.call())


def test_awaiting_a_client_bound_to_langtree_loop_from_another_loop_fails() -> None:
    client = LoopBoundClient()

    async def cell() -> None:
        run_sync(client.call)
        await client.call()

    with pytest.raises(RuntimeError, match="attached to a different loop"):
        asyncio.run(cell())


# run_sync


def test_run_sync_calls_share_one_loop_so_a_bound_client_keeps_working() -> None:
    client = LoopBoundClient()

    def run(number: int) -> object:
        return run_sync(lambda: client.call(number))

    answers = [run(number) for number in range(3)]

    assert answers == [0, 1, 2]
    assert client.calls == 3


def test_run_sync_runs_on_a_daemon_thread_named_langtree_loop() -> None:
    async def current_thread() -> threading.Thread:
        return threading.current_thread()

    thread = run_sync(current_thread)

    assert thread.name == "langtree-loop"
    assert thread.daemon
    assert thread is not threading.current_thread()


def test_run_sync_works_inside_a_running_loop() -> None:
    async def cell() -> tuple[asyncio.AbstractEventLoop, asyncio.AbstractEventLoop]:
        return run_sync(running_loop), asyncio.get_running_loop()

    ran_on, cell_loop = asyncio.run(cell())

    assert ran_on is not cell_loop
    assert ran_on is run_sync(running_loop)


def test_run_sync_from_several_threads_at_once_shares_the_client() -> None:
    client = LoopBoundClient()

    def run(number: int) -> object:
        return run_sync(lambda: client.call(number))

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(run, range(32)))

    assert answers == list(range(32))
    assert client.calls == 32


async def read_request() -> str:
    return REQUEST.get()


async def cell_reading_request() -> str:
    return run_sync(read_request)


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda: run_sync(read_request), id="script"),
        pytest.param(lambda: asyncio.run(cell_reading_request()), id="notebook"),
    ],
)
def test_run_sync_copies_the_callers_context_variables(call: Callable[[], str]) -> None:
    def caller() -> str:
        REQUEST.set("the caller's")
        return call()

    assert contextvars.copy_context().run(caller) == "the caller's"


def test_run_sync_does_not_leak_the_tasks_context_changes_back() -> None:
    async def change() -> None:
        REQUEST.set("the task's")

    def caller() -> str:
        REQUEST.set("the caller's")
        run_sync(change)
        return REQUEST.get()

    assert contextvars.copy_context().run(caller) == "the caller's"


ERRORS = [
    pytest.param(ValueError("bad value"), id="value-error"),
    pytest.param(KeyError("key"), id="key-error"),
    pytest.param(ExecutionError("failed"), id="execution-error"),
    pytest.param(TimeoutError("the call timed out"), id="timeout-error"),
    pytest.param(KeyboardInterrupt(), id="keyboard-interrupt"),
    pytest.param(SystemExit(3), id="system-exit"),
]


@pytest.mark.parametrize("error", ERRORS)
def test_run_sync_raises_what_the_coroutine_raises(error: BaseException) -> None:
    async def fail() -> None:
        raise error

    with pytest.raises(type(error)) as raised:
        run_sync(fail)

    assert raised.value is error


@pytest.mark.parametrize("error", [KeyboardInterrupt(), SystemExit(3)], ids=["ctrl-c", "exit"])
def test_an_interrupt_raised_in_a_task_does_not_stop_langtree_loop(error: BaseException) -> None:
    before = run_sync(running_loop)

    async def fail() -> None:
        raise error

    with pytest.raises(type(error)):
        run_sync(fail)

    assert run_sync(running_loop) is before
    assert before.is_running()


def test_run_sync_on_langtree_loop_raises_instead_of_waiting_for_itself() -> None:
    async def nested() -> asyncio.AbstractEventLoop:
        return run_sync(running_loop)

    with pytest.raises(ExecutionError) as raised:
        run_sync(nested)

    assert str(raised.value) == (
        "Cannot run synchronously from code running on LangTree's event loop: "
        "the run would wait for itself\n"
        "  hint: in async code, await structure.arun(...) (or runnable.ainvoke(...)) "
        "instead of calling run(...) or invoke(...)"
    )


# Ctrl-C while run_sync waits.


@pytest.mark.parametrize(
    "interrupt",
    [
        pytest.param(_thread.interrupt_main, id="interrupt-main"),
        pytest.param(
            sigint_main_thread,
            id="sigint",
            marks=pytest.mark.skipif(
                not hasattr(signal, "pthread_kill"), reason="no signal.pthread_kill"
            ),
        ),
    ],
)
@pytest.mark.usefixtures("python_sigint")
def test_ctrl_c_cancels_the_run_and_stops_its_calls(interrupt: Callable[[], None]) -> None:
    calls = 0
    cancelled = threading.Event()
    interrupted_at: list[float] = []

    async def call_forever() -> None:
        nonlocal calls
        try:
            while True:
                calls += 1
                if calls == 10:
                    interrupted_at.append(time.monotonic())
                    interrupt()
                await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(KeyboardInterrupt):
        run_sync(call_forever)
    surfaced = time.monotonic()
    calls_then = calls
    time.sleep(0.2)

    assert surfaced - interrupted_at[0] < 1.0
    assert cancelled.is_set()
    assert calls == calls_then


@pytest.mark.usefixtures("python_sigint")
def test_ctrl_c_waits_about_a_second_for_a_task_that_ignores_cancellation() -> None:
    release = threading.Event()
    interrupted_at: list[float] = []

    async def stubborn() -> None:
        await asyncio.sleep(0.1)
        interrupted_at.append(time.monotonic())
        _thread.interrupt_main()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            while not release.is_set():
                await asyncio.sleep(0.01)

    with pytest.raises(KeyboardInterrupt):
        run_sync(stubborn)
    waited = time.monotonic() - interrupted_at[0]
    release.set()

    assert 0.8 < waited < 5.0


# run_async


async def from_this_loop() -> asyncio.AbstractEventLoop:
    return await run_async(running_loop)


async def from_a_closed_loop() -> asyncio.AbstractEventLoop:
    return await asyncio.to_thread(asyncio.run, run_async(running_loop))


async def from_a_user_loop_in_another_thread() -> asyncio.AbstractEventLoop:
    with user_loop() as other:
        awaiting = asyncio.run_coroutine_threadsafe(run_async(running_loop), other)
        return await asyncio.wrap_future(awaiting)


async def from_langtree_loop() -> asyncio.AbstractEventLoop:
    return run_sync(lambda: run_async(running_loop))


@pytest.mark.parametrize(
    "awaited",
    [from_this_loop, from_a_closed_loop, from_a_user_loop_in_another_thread, from_langtree_loop],
)
def test_run_async_runs_on_langtree_loop_from_any_loop(
    awaited: Callable[[], Awaitable[asyncio.AbstractEventLoop]],
) -> None:
    assert asyncio.run(awaited()) is run_sync(running_loop)


def test_a_bound_client_serves_run_sync_and_run_async_in_either_order() -> None:
    client = LoopBoundClient()

    async def cell() -> tuple[object, ...]:
        awaited = await run_async(lambda: client.call("arun"))
        ran = run_sync(lambda: client.call("run"))
        return awaited, ran, await run_async(lambda: client.call("arun again"))

    assert asyncio.run(cell()) == ("arun", "run", "arun again")
    assert asyncio.run(cell()) == ("arun", "run", "arun again")
    assert client.calls == 6


def test_run_async_copies_the_callers_context_variables_to_langtree_loop() -> None:
    async def cell() -> str:
        REQUEST.set("the cell's")
        return await run_async(read_request)

    assert asyncio.run(cell()) == "the cell's"


def test_run_async_raises_what_the_coroutine_raises_on_langtree_loop() -> None:
    error = ValueError("bad value")

    async def fail() -> None:
        raise error

    with pytest.raises(ValueError, match="bad value") as raised:
        asyncio.run(run_async(fail))

    assert raised.value is error


@dataclass(frozen=True)
class CallForever:
    """A call that runs until it is cancelled; `started` is set when it runs and
    `cancelled` once it has wound down.

    Attributes:
        wind_down: Seconds the call takes to wind down once cancelled (none if 0).
        note: Added to the cancellation as what the call had done, if given.
    """

    wind_down: float = 0.0
    note: str | None = None
    started: threading.Event = field(default_factory=threading.Event)
    cancelled: threading.Event = field(default_factory=threading.Event)

    async def __call__(self) -> None:
        self.started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError as error:
            if self.wind_down:
                await asyncio.sleep(self.wind_down)
            self.cancelled.set()
            if self.note is not None:
                error.add_note(self.note)
            raise


def test_cancelling_an_await_cancels_the_task_on_langtree_loop_first() -> None:
    call_forever = CallForever(wind_down=0.05, note="what the task had done")

    async def cell() -> tuple[bool, list[str]]:
        waiting = asyncio.create_task(run_async(call_forever))
        await asyncio.to_thread(call_forever.started.wait, 10)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError) as caught:
            await waiting
        return call_forever.cancelled.is_set(), caught.value.__notes__

    assert asyncio.run(cell()) == (True, ["what the task had done"])


# Shutdown at exit.


def test_shutdown_cancels_what_runs_and_the_next_run_starts_a_new_loop() -> None:
    before = run_sync(running_loop)
    call_forever = CallForever()

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        waiting = pool.submit(run_sync, call_forever)
        call_forever.started.wait(10)
        langtree_loop._shutdown()
        with pytest.raises(concurrent.futures.CancelledError):
            waiting.result(timeout=10)

    assert call_forever.cancelled.is_set()
    assert before.is_closed()
    assert run_sync(running_loop) is not before


def test_shutdown_gives_up_on_a_blocked_loop_without_hanging() -> None:
    release = threading.Event()
    blocked = threading.Event()
    loop: list[asyncio.AbstractEventLoop] = []
    thread: list[threading.Thread] = []

    async def block() -> None:
        loop.append(asyncio.get_running_loop())
        thread.append(threading.current_thread())
        blocked.set()
        release.wait(30)

    waiter = threading.Thread(target=run_sync, args=(block,))
    waiter.start()
    blocked.wait(10)
    started = time.monotonic()
    langtree_loop._shutdown()
    took = time.monotonic() - started
    release.set()
    waiter.join(10)
    thread[0].join(10)
    loop[0].call_soon(loop[0].stop)
    loop[0].run_forever()  # one round: the cancelling that shutdown gave up waiting for
    loop[0].close()

    assert took < 10
    assert not thread[0].is_alive()


def run_program(program: str) -> subprocess.CompletedProcess[str]:
    """Runs `program` in a new interpreter from the repository, its output captured."""
    return subprocess.run(
        [sys.executable, "-c", program],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


EXIT_SCRIPTS = [
    pytest.param(
        """
async def background():
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        print("cancelled", flush=True)
        raise

async def start():
    TASKS.append(asyncio.get_running_loop().create_task(background()))
    await asyncio.sleep(0)
""",
        "cancelled\n",
        id="task-running",
    ),
    pytest.param(
        """
async def start():
    asyncio.get_running_loop().call_later(0.1, time.sleep, 3600)
""",
        "",
        id="loop-blocked",
    ),
]


@pytest.mark.parametrize(("script", "output"), EXIT_SCRIPTS)
def test_the_interpreter_exits_with_langtree_loop_busy(script: str, output: str) -> None:
    program = (
        "import asyncio, time\nfrom langtree.runtime.engine._loop import run_sync\nTASKS = []\n"
        + script
        + "run_sync(start)\ntime.sleep(0.5)\n"
    )

    finished = run_program(program)

    assert (finished.returncode, finished.stdout, finished.stderr) == (0, output, "")


def test_the_interpreter_exits_with_an_iteration_left_open() -> None:
    # The iteration is closed when the interpreter clears the module, after LangTree's
    # loop stopped at exit (an uncaught exception's traceback holds it that long too).
    program = (
        "from langtree.runtime.engine._loop import iterate_sync\n"
        "async def numbers():\n"
        "    try:\n"
        "        for number in range(3):\n"
        "            yield number\n"
        "    finally:\n"
        "        print('closed')\n"
        "ITEMS = iterate_sync(numbers())\n"
        "print(next(ITEMS))\n"
    )

    finished = run_program(program)

    assert (finished.returncode, finished.stdout, finished.stderr) == (0, "0\nclosed\n", "")
