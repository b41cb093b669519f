"""A model's pause after its provider asked to wait (``Retry-After``).

The pause holds every call of the model, the retry of the call that was told to wait
included: a burst of calls would otherwise keep hitting the provider's limit. Each call
waits it out in `Cooldown.acquire()` before taking its place under ``max_concurrency``,
so that no place is held while waiting. The pause is timed on the retry policy's
``clock`` and waited with its ``sleep``, and never lasts longer than its ``max_wait``;
while a call waits, the run's callbacks are told (`waiting_for_provider`), so that a
progress line can say so.
"""

from __future__ import annotations

import asyncio
import math

from langtree.runtime.faults._retry import RetryPolicy
from langtree.runtime.observe._progress import waiting_for_provider

__all__ = ["Cooldown"]


class Cooldown:
    """A model's pause: its calls start only once it has passed."""

    __slots__ = ("until",)

    def __init__(self) -> None:
        self.until = -math.inf

    def hold(self, seconds: float, policy: RetryPolicy) -> None:
        """Pause the model's calls for ``seconds`` from now (a longer pause stays)."""
        self.until = max(self.until, policy.clock() + seconds)

    async def acquire(
        self, semaphore: asyncio.Semaphore, policy: RetryPolicy, node_path: str
    ) -> float:
        """Take a place under ``semaphore`` once no pause holds the model; returns the
        seconds waited for pauses.

        A pause that began while the call waited for its place (another call of the
        model was told to wait) is waited for without holding the place.

        Args:
            semaphore: The places of the calls in flight.
            policy: The model's retry policy, whose clock and sleep time the pause.
            node_path: The node instance the call is for, as the callbacks are told.
        """
        waited = 0.0
        while True:
            pause = self._left(policy)
            if pause > 0:
                async with waiting_for_provider(node_path, pause):
                    await policy.sleep(pause)
                waited += pause
            await semaphore.acquire()
            if self._left(policy) <= 0:
                return waited
            semaphore.release()

    def _left(self, policy: RetryPolicy) -> float:
        # At most max_wait: the clock is a wall clock, and one set back must not stretch
        # the pause past the longest the policy allows.
        return min(self.until - policy.clock(), policy.max_wait)
