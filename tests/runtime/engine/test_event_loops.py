"""Runs and event loops: clients bound to a loop keep working, and Ctrl-C stops a run.

``LoopBoundModel`` calls a client that, like httpx's pooled connections, binds to the
loop of its first call and fails on any other (or once that loop is closed).
"""

import _thread
import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from catalogue_tree import TaskCatalogue, catalogue, catalogue_inputs
from loop_bound import LoopBoundClient, running_loop
from pydantic import PrivateAttr

from langtree import RunInterrupted
from langtree.runtime import RunResult
from langtree.runtime.engine._loop import run_sync
from langtree.testing import FakeChatModel, FakeRequest

REPOSITORY = Path(__file__).parent.parent.parent.parent
RUNTIME_TESTS = Path(__file__).parent.parent


class LoopBoundModel(FakeChatModel):
    """A fake whose every async call goes through one loop-bound client."""

    _client: LoopBoundClient = PrivateAttr(default_factory=LoopBoundClient)

    async def _agenerate(self, *args: Any, **kwargs: Any) -> Any:
        await self._client.call()
        return await super()._agenerate(*args, **kwargs)


def blurbs(result: RunResult) -> list[str]:
    return [item.blurb for item in result[TaskCatalogue].items]


def test_repeated_runs_reuse_one_loop() -> None:
    structure = catalogue(LoopBoundModel())

    results = [structure.run(catalogue_inputs(2)) for _ in range(3)]

    assert [blurbs(result) for result in results] == [["blurb 1", "blurb 1"]] * 3


def test_repeated_invokes_of_the_built_runnable_reuse_one_loop() -> None:
    runnable = catalogue(LoopBoundModel()).build()

    results = [runnable.invoke(catalogue_inputs(2)) for _ in range(2)]

    assert [blurbs(result) for result in results] == [["blurb 1", "blurb 1"]] * 2


def test_a_batch_from_several_threads_shares_the_loop() -> None:
    runnable = catalogue(LoopBoundModel()).build()

    results = runnable.batch(
        [catalogue_inputs(1), catalogue_inputs(2), catalogue_inputs(3)], {"max_concurrency": 3}
    )

    assert [len(blurbs(result)) for result in results] == [1, 2, 3]


def test_run_then_arun_in_a_notebook_use_the_same_loop() -> None:
    structure = catalogue(LoopBoundModel())

    async def cell() -> tuple[RunResult, RunResult]:
        first = structure.run(catalogue_inputs(1))  # a blocking call inside the kernel's loop
        second = await structure.arun(catalogue_inputs(2))
        return first, second

    first, second = asyncio.run(cell())

    assert (blurbs(first), blurbs(second)) == (["blurb 1"], ["blurb 1", "blurb 1"])


def test_arun_in_a_script_then_run() -> None:
    structure = catalogue(LoopBoundModel())

    first = asyncio.run(structure.arun(catalogue_inputs(1)))  # closes its loop
    second = structure.run(catalogue_inputs(2))

    assert (blurbs(first), blurbs(second)) == (["blurb 1"], ["blurb 1", "blurb 1"])


def test_await_arun_then_run_in_a_notebook_use_the_same_loop() -> None:
    structure = catalogue(LoopBoundModel())

    async def cell() -> tuple[RunResult, RunResult]:
        first = await structure.arun(catalogue_inputs(1))
        second = structure.run(catalogue_inputs(2))  # a blocking call inside the kernel's loop
        return first, second

    first, second = asyncio.run(cell())

    assert (blurbs(first), blurbs(second)) == (["blurb 1"], ["blurb 1", "blurb 1"])


def test_arun_drives_the_models_from_langtree_loop() -> None:
    model = LoopBoundModel()

    async def main() -> asyncio.AbstractEventLoop:
        await catalogue(model).arun(catalogue_inputs(1))
        return asyncio.get_running_loop()

    callers = asyncio.run(main())

    assert model._client.loop is not callers
    assert model._client.loop is run_sync(running_loop)


def interrupt_once(finished: threading.Event, moments: list[float]) -> None:
    """Deliver Ctrl-C to the main thread once ``finished`` is set (at most 30 s later),
    noting the moment first."""

    def fire() -> None:
        finished.wait(timeout=30)
        moments.insert(0, time.monotonic())
        _thread.interrupt_main()

    threading.Thread(target=fire, daemon=True).start()


def started_after(model: FakeChatModel, calls_then: int) -> int:
    time.sleep(0.5)
    return len(model.calls) - calls_then


@pytest.mark.parametrize("in_a_running_loop", [False, True], ids=["script", "notebook"])
@pytest.mark.usefixtures("python_sigint")
def test_ctrl_c_stops_the_run_within_a_second(in_a_running_loop: bool) -> None:
    # Ctrl-C once a few calls have answered (not after a fixed time, which a loaded
    # machine may spend before the first call ends).
    answered = threading.Event()

    def answer(request: FakeRequest) -> dict[str, object]:
        if len(model.calls) > 3 * 8:  # the first calls of max_concurrency=8 are done
            answered.set()
        return {name: f"{name} ok" for name in request.fields}

    model = FakeChatModel(answer, latency=0.2)
    structure = catalogue(model)
    caught: list[RunInterrupted] = []
    moments: list[float] = []

    def run() -> None:
        interrupt_once(answered, moments)
        try:
            structure.run(catalogue_inputs(250), max_concurrency=8)
        except RunInterrupted as error:
            caught.append(error)
            moments.append(time.monotonic())

    if in_a_running_loop:

        async def cell() -> None:
            run()

        # A kernel runs its loop without asyncio.run's own Ctrl-C handling.
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(cell())
        finally:
            loop.close()
    else:
        run()

    error = caught[0]
    assert isinstance(error, KeyboardInterrupt)
    fired, stopped = moments
    assert stopped - fired < 1.0
    calls_then = len(model.calls)
    assert started_after(model, calls_then) == 0
    assert error.result is not None
    finished = [record for record in error.result.trace if record.error is None]
    assert 0 < len(finished) < 250
    assert str(error) == (
        f"The run was interrupted after {len(error.result.trace)} model call(s), "
        f"{len(finished)} of them with a usable answer; error.result holds what had finished"
    )


CTRL_C_SCRIPT = """
import asyncio
import os
import signal

from catalogue_tree import catalogue, catalogue_inputs

from langtree import RunInterrupted
from langtree.testing import FakeChatModel


async def respond(request):
    # The fifth call presses Ctrl-C, then takes half a minute: only stopping the run
    # ends it sooner, and no other call is in flight (max_concurrency=1).
    if len(model.calls) == 5:
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(30)
    return {"blurb": "A fine thing."}


model = FakeChatModel(respond)
structure = catalogue(model)


def run():
    try:
        structure.run(catalogue_inputs(40), max_concurrency=1)
    except RunInterrupted as error:
        print(error)
        raise
    finally:
        print(f"calls started after Ctrl-C: {len(model.calls) - 5}")


async def main():
    run()
"""

CTRL_C_CALLERS = [
    pytest.param("run()\n", id="script"),
    # A kernel runs its loop without asyncio.run's own Ctrl-C handling.
    pytest.param("asyncio.new_event_loop().run_until_complete(main())\n", id="notebook"),
    # asyncio.run's handler cancels the main task, which is blocked in run().
    pytest.param("asyncio.run(main())\n", id="asyncio-run"),
]


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("caller", CTRL_C_CALLERS)
def test_ctrl_c_stops_a_run_that_a_script_an_event_loop_or_asyncio_run_waits_for(
    caller: str, tmp_path: Path
) -> None:
    script = tmp_path / "interrupted.py"
    script.write_text(CTRL_C_SCRIPT + caller)

    finished = subprocess.run(
        [sys.executable, str(script)],
        cwd=REPOSITORY,
        # The script imports LangTree and the catalogue beside these tests.
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPOSITORY), str(RUNTIME_TESTS)])},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        # A shell without job control starts background jobs with SIGINT ignored, and a
        # child inherits that: give the script the Ctrl-C a terminal would.
        preexec_fn=_default_sigint,
    )

    # The uncaught RunInterrupted ends each caller alike: with status 1 (Python ends a
    # process with SIGINT's status only for a KeyboardInterrupt of that exact class).
    assert (finished.returncode, finished.stdout) == (
        1,
        "The run was interrupted after 4 model call(s), 4 of them with a usable answer; "
        "error.result holds what had finished\n"
        "calls started after Ctrl-C: 0\n",
    ), finished.stderr
