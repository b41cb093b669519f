"""``RetryPolicy``: how a step retries calls that failed for a transient reason.

Transient failures (timeouts, rate limits, server errors, dropped connections; see
`langtree.runtime.faults._faults`) have their own budget, apart from ``max_retries``, which
counts answers that came back but could not be used. Each retry waits first: the
provider's ``Retry-After`` when it sent one, else an exponential backoff with jitter, so
that calls that failed together do not all come back at the same moment.

The wait before the n-th transient retry is drawn uniformly between half and all of
``min(max_delay, initial_delay * multiplier ** (n - 1))``; a ``Retry-After`` is honoured
up to ``max_wait`` (five minutes by default). A provider that asks for longer (a day's
quota, a date in 2099, ``1e308``) is waited for ``max_wait``, then asked again: a wrong
or overcautious header costs minutes, not the run, and a provider that still refuses
fails the step as any transient failure does once its budget is spent. The semaphore
that caps calls in flight is not held while waiting.

The policy's ``clock`` and ``sleep`` time every wait of a retry: tests pass a fake clock
whose ``sleep`` moves it, so that no test waits and none reads the machine's clock.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field

from langtree.errors import Diagnostic, StructureError
from langtree.runtime.faults._faults import ErrorClassifier, retry_after

__all__ = ["RetryPolicy", "RetryWait"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryWait:
    """The wait before a transient retry.

    Attributes:
        seconds: How long it is.
        asked: What the provider's ``Retry-After`` asked for (``None``: it said nothing,
            and ``seconds`` is a backoff).

    Examples:
        >>> RetryWait(seconds=2.0, asked=2.0).note
        'waiting 2 s for the provider before the retry, as it asked (Retry-After)'
    """

    seconds: float
    asked: float | None = None

    @property
    def note(self) -> str | None:
        """What the trace says of a wait the provider asked for (``None``: a backoff)."""
        if self.asked is None:
            return None
        if self.asked > self.seconds:
            return (
                f"waiting {self.seconds:g} s for the provider before the retry: it asked for "
                f"{self.asked:g} s (Retry-After), more than RetryPolicy.max_wait"
            )
        return (
            f"waiting {self.seconds:g} s for the provider before the retry, as it asked "
            "(Retry-After)"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """How transient provider failures are retried.

    Attributes:
        max_retries: Retries of a call after transient failures (the first attempt
            not counted); ``0`` fails the step at the first one.
        initial_delay: Seconds before the first retry (before jitter).
        max_delay: The longest backoff before a retry (a provider's ``Retry-After`` is
            honoured up to ``max_wait`` instead).
        max_wait: The longest wait for a provider's ``Retry-After``, in seconds: a
            provider that asks for longer is waited for this long, then asked again.
        multiplier: How much the wait grows from one retry to the next.
        jitter: Whether each wait is drawn between half and all of its nominal value.
        transient_errors: Further exception classes to treat as transient: a list, a
            tuple or a set of them, kept as a tuple.
        classifier: A function that names the kind of an error it recognises
            (``"transient"``, ``"invalid_output"`` or ``"permanent"``) and returns
            ``None`` for the others; asked before LangTree's own rules.
        clock: Seconds since the epoch (default ``time.time``): counts down to a
            ``Retry-After`` date and times the model's pause.
        sleep: Waits that many seconds (default ``asyncio.sleep``); a fake ``clock``
            needs a ``sleep`` that moves it.

    Raises:
        StructureError: ``transient_errors`` is not a collection of exception classes
            (naming the value at fault).

    Examples:
        >>> policy = RetryPolicy(initial_delay=1.0, multiplier=2.0, max_delay=5.0, jitter=False)
        >>> [policy.delay(n, retry_after=None, rng=random.Random(0)) for n in (1, 2, 3, 4)]
        [1.0, 2.0, 4.0, 5.0]
        >>> policy.delay(1, retry_after=7.5, rng=random.Random(0))
        7.5
        >>> policy.delay(1, retry_after=100_000, rng=random.Random(0))
        300.0
    """

    max_retries: int = 5
    initial_delay: float = 0.5
    max_delay: float = 30.0
    max_wait: float = 300.0
    multiplier: float = 2.0
    jitter: bool = True
    transient_errors: Collection[type[BaseException]] = ()
    classifier: ErrorClassifier | None = None
    # Left out of the repr: the defaults' reprs hold memory addresses.
    clock: Callable[[], float] = field(default=time.time, repr=False)
    sleep: Callable[[float], Awaitable[object]] = field(default=asyncio.sleep, repr=False)

    def __post_init__(self) -> None:
        # The classes are checked here, not with the other settings: `isinstance()` takes
        # only a tuple of classes, and a wrong value would otherwise surface as a
        # TypeError at the first failed call, deep inside a run that has paid for calls.
        object.__setattr__(self, "transient_errors", _exception_classes(self.transient_errors))

    def wait(self, retry: int, error: BaseException | None, *, rng: random.Random) -> RetryWait:
        """The wait before transient retry number ``retry`` (1 for the first), after a call
        that raised ``error``: what its ``Retry-After`` asks for (read on ``clock``), up to
        ``max_wait``, else a backoff.

        Args:
            retry: Which retry this is.
            error: What the failed call raised, when it raised.
            rng: The source of the jitter.
        """
        asked = None if error is None else retry_after(error, now=self.clock())
        return RetryWait(seconds=self.delay(retry, retry_after=asked, rng=rng), asked=asked)

    def delay(self, retry: int, *, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before transient retry number ``retry`` (1 for the first).

        Args:
            retry: Which retry this is.
            retry_after: What the provider asked for, when it did (at most ``max_wait``
                of it is waited).
            rng: The source of the jitter.
        """
        if retry_after is not None:
            # No jitter on a wait the provider named: drawn below it, the retry would come
            # back before the provider said it may.
            return min(max(retry_after, 0.0), self.max_wait)
        # "Equal jitter": at least half the nominal wait, so a retry never comes back at
        # once, and spread over the other half, so calls that failed together come back
        # apart.
        nominal = min(self.max_delay, self.initial_delay * self.multiplier ** (retry - 1))
        return rng.uniform(nominal / 2, nominal) if self.jitter else nominal

    def problems(self) -> Iterator[str]:
        """What is wrong with the settings, one sentence each."""
        if (
            not isinstance(self.max_retries, int)
            or isinstance(self.max_retries, bool)
            or self.max_retries < 0
        ):
            yield f"max_retries must be a whole number of at least 0, got {self.max_retries!r}"
        for name in ("initial_delay", "max_delay", "max_wait"):
            value = getattr(self, name)
            if not _finite(value) or value < 0:
                yield f"{name} must be a number of seconds of at least 0, got {value!r}"
        if not _finite(self.multiplier) or self.multiplier < 1:
            yield f"multiplier must be at least 1, got {self.multiplier!r}"
        for name, what in (("clock", "seconds since the epoch"), ("sleep", "an awaitable")):
            value = getattr(self, name)
            if not callable(value):
                yield f"{name} must be a function returning {what}, got {value!r}"


def _exception_classes(value: object) -> tuple[type[BaseException], ...]:
    """``value`` as a tuple of exception classes.

    Raises:
        StructureError: It is not a collection, or an item is not an exception class.
    """
    if not isinstance(value, Collection) or isinstance(value, str | bytes | Mapping):
        raise _refused(
            f"transient_errors must be a list or tuple of exception classes, got {value!r}"
        )
    classes = tuple(value)
    for index, item in enumerate(classes):
        if not (isinstance(item, type) and issubclass(item, BaseException)):
            raise _refused(_item_problem(index, item))
    return classes


def _item_problem(index: int, item: object) -> str:
    if isinstance(item, str):
        return (
            f"transient_errors[{index}] must be an exception class, got the text {item!r} "
            "(a .json config cannot hold classes: give them in a Python dict)"
        )
    return f"transient_errors[{index}] must be an exception class, got {item!r}"


def _refused(problem: str) -> StructureError:
    hint = "give the classes themselves, e.g. RetryPolicy(transient_errors=[TimeoutError])"
    return StructureError([Diagnostic(severity="error", message=problem, hint=hint)])


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
