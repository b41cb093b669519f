"""Test stand-ins for what binds to an event loop: an httpx-like client, a user's loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class LoopBoundClient:
    """Stands in for an httpx client whose pooled connection is bound to a loop.

    The first call binds it to the running loop. A call from another loop fails, as an
    asyncio primitive bound to a different loop does; once that loop is closed, a call
    fails in asyncio itself, since every answer is scheduled through the bound loop.
    """

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.calls = 0

    async def call(self, value: object = None) -> object:
        """Answer ``value`` through the bound loop."""
        running = asyncio.get_running_loop()
        self.loop = self.loop or running
        if self.loop is not running and not self.loop.is_closed():
            raise RuntimeError(f"{self!r} is attached to a different loop")
        answer = running.create_future()
        self.loop.call_soon(answer.set_result, value)
        result = await answer
        self.calls += 1
        return result


async def running_loop() -> asyncio.AbstractEventLoop:
    """The loop this runs on."""
    return asyncio.get_running_loop()


@contextmanager
def user_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running in a thread of its own, closed afterwards."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
