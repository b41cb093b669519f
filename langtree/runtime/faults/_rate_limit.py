"""A pace for model calls: requests and tokens per minute, and a pause after a 429.

``rate_limit=RateLimit(requests_per_minute=500, tokens_per_minute=200_000)`` keeps a
run's calls under a provider's limits instead of running into them and backing off. The
limits hold for each model key on its own, as providers set them per model: two keys
get their own pace, even when they name the same model.

Each limit is a token bucket that refills at its rate per minute and holds one second's
worth (at least one call), so calls start at an even pace with no burst a provider would
reject: with ``requests_per_minute=600``, one call every 0.1 s once the first ten have
gone. A call's tokens are the prompt's tokens as LangTree counts them (the answer's are
not known before it arrives); a call with more tokens than one second's worth waits for a
full bucket and leaves the bucket in debt, so the pace over a minute stays the limit.
Calls start in the order they asked.

A limiter is handed each prompt's tokens uncounted (`PromptTokens`: the count is made when
``tokens.count`` is first read) and reads them only if it paces tokens. Counting loads a
tiktoken encoding, so a run whose ``RateLimit`` has no ``tokens_per_minute`` never counts
for it.

A provider's ``Retry-After`` also pauses every call to the model (`RateLimit.hold()`),
across every run that shares the ``RateLimit`` object: the rows of a dataset, or the
workers of `langtree.ray`, whose shared limit implements the same
`RateLimiter` protocol. Answers replayed from a journal or a cache are not calls
and do not wait.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from langtree.prompts import PromptTokens

__all__ = ["RateBuckets", "RateLimit", "RateLimiter"]


@runtime_checkable
class RateLimiter(Protocol):
    """What the engine asks of a rate limit (``rate_limit=``): `RateLimit`, or
    one shared by several processes."""

    async def acquire(self, model: str, tokens: PromptTokens) -> float:
        """Wait until a call of ``model`` with a prompt of ``tokens`` may start.

        Args:
            model: The model key the call is for.
            tokens: The prompt's tokens, counted when ``tokens.count`` is first read: a
                limiter that does not pace tokens should leave it unread, so that the run
                never counts for it.

        Returns:
            The seconds waited.
        """
        ...

    def hold(self, model: str, seconds: float) -> None:
        """Pause every call of ``model`` for ``seconds`` from now (a provider said wait)."""
        ...


@dataclass(slots=True, kw_only=True)
class _Bucket:
    """One limit of one model: ``level`` units at time ``updated`` (negative: in debt)."""

    per_minute: float
    level: float
    updated: float

    @property
    def capacity(self) -> float:
        return max(self.per_minute / 60, 1.0)

    def ready(self, amount: float, now: float) -> float:
        """The earliest time ``amount`` may be taken, after every earlier taking."""
        start = max(now, self.updated)
        level = self._level(start)
        missing = min(amount, self.capacity) - level
        # A call larger than the bucket waits only for a full one (``min``) and takes the
        # rest as debt: it would otherwise never start.
        return start + max(missing, 0.0) * 60 / self.per_minute

    def take(self, amount: float, at: float) -> None:
        # Booked at ``at``, which may lie in the future: the next caller's ``start`` is no
        # earlier (``max(now, updated)``), so calls start in the order they asked.
        self.level = self._level(at) - amount
        self.updated = at

    def _level(self, at: float) -> float:
        return min(self.capacity, self.level + (at - self.updated) * self.per_minute / 60)


@dataclass(slots=True, kw_only=True)
class _Pace:
    """A model's buckets (``None``: not limited) and the end of its pause."""

    requests: _Bucket | None
    tokens: _Bucket | None
    held_until: float = -math.inf


@dataclass(slots=True)
class RateBuckets:
    """The bookkeeping of a rate limit, on a clock its caller reads: each model's
    buckets and pause. Safe to share between threads.

    Attributes:
        requests_per_minute: The most calls a model may start in a minute.
        tokens_per_minute: The most prompt tokens a model's calls may send in a minute.
    """

    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    _paces: dict[str, _Pace] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def reserve(self, model: str, tokens: int, now: float) -> float:
        """Book the next start of a call of ``model``; returns the seconds from ``now``
        until it may start (0: at once)."""
        with self._lock:
            pace = self._pace(model, now)
            taken = ((pace.requests, 1.0), (pace.tokens, float(max(tokens, 0))))
            start = max(
                now,
                pace.held_until,
                *(bucket.ready(amount, now) for bucket, amount in taken if bucket),
            )
            for bucket, amount in taken:
                if bucket is not None:
                    bucket.take(amount, start)
            return start - now

    def hold(self, model: str, seconds: float, now: float) -> None:
        """Pause ``model``'s calls until ``now + seconds`` (a longer pause stays)."""
        with self._lock:
            pace = self._pace(model, now)
            pace.held_until = max(pace.held_until, now + seconds)

    def held(self, model: str, now: float) -> float:
        """The seconds left of ``model``'s pause (0: none)."""
        with self._lock:
            pace = self._paces.get(model)
            return max(pace.held_until - now, 0.0) if pace else 0.0

    def _pace(self, model: str, now: float) -> _Pace:
        pace = self._paces.get(model)
        if pace is None:
            pace = self._paces[model] = _Pace(
                requests=_full(self.requests_per_minute, now),
                tokens=_full(self.tokens_per_minute, now),
            )
        return pace


def _full(per_minute: float | None, now: float) -> _Bucket | None:
    if per_minute is None:
        return None
    return _Bucket(per_minute=per_minute, level=max(per_minute / 60, 1.0), updated=now)


class RateLimit:
    """Requests and tokens per minute for each model key, and a shared pause after a
    provider's ``Retry-After``: pass it as ``rate_limit=`` to a run, or to every run
    that should share it.

    Args:
        requests_per_minute: The most calls each model key may start in a minute
            (``None``: no limit).
        tokens_per_minute: The most prompt tokens each model key's calls may send in a
            minute (``None``: no limit). With neither limit, the object only shares
            the pauses.
        clock: Seconds on a monotonic clock (tests pass a fake one).
        sleep: Waits that many seconds (tests pass one that moves the fake clock).

    Examples:
        >>> import asyncio
        >>> now = [0.0]
        >>> async def sleep(seconds: float) -> None:
        ...     now[0] += seconds
        >>> limit = RateLimit(requests_per_minute=60, clock=lambda: now[0], sleep=sleep)
        >>> async def three_calls() -> list[float]:
        ...     prompt = PromptTokens("Describe a lamp.")
        ...     return [await limit.acquire("default", prompt) for _ in range(3)]
        >>> asyncio.run(three_calls())
        [0.0, 1.0, 1.0]
    """

    def __init__(
        self,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self.buckets = RateBuckets(requests_per_minute, tokens_per_minute)
        self._clock = clock
        self._sleep = sleep

    @property
    def requests_per_minute(self) -> float | None:
        """The most calls each model key may start in a minute."""
        return self.buckets.requests_per_minute

    @property
    def tokens_per_minute(self) -> float | None:
        """The most prompt tokens each model key's calls may send in a minute."""
        return self.buckets.tokens_per_minute

    async def acquire(self, model: str, tokens: PromptTokens) -> float:
        """Wait until a call of ``model`` with a prompt of ``tokens`` may start, and
        through any pause that began meanwhile.

        ``tokens.count`` is read (and the prompt counted) only with ``tokens_per_minute``.

        Returns:
            The seconds waited.
        """
        waited = 0.0
        count = tokens.count if self.tokens_per_minute is not None else 0
        delay = self.buckets.reserve(model, count, self._clock())
        while delay > 0:
            await self._sleep(delay)
            waited += delay
            # The start is booked, but a provider may have asked for a pause meanwhile
            # (another call's ``Retry-After``): it is waited for too, without booking again.
            delay = self.buckets.held(model, self._clock())
        return waited

    def hold(self, model: str, seconds: float) -> None:
        """Pause every call of ``model`` for ``seconds`` from now (a longer pause stays)."""
        self.buckets.hold(model, seconds, self._clock())

    def problems(self) -> Iterator[str]:
        """What is wrong with the limits, one sentence each."""
        for name in ("requests_per_minute", "tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and not (_number(value) and value > 0):
                yield f"{name} must be a number above 0 or None, got {value!r}"

    def __repr__(self) -> str:
        given = [
            f"{name}={getattr(self, name)!r}"
            for name in ("requests_per_minute", "tokens_per_minute")
            if getattr(self, name) is not None
        ]
        return f"RateLimit({', '.join(given)})"


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
