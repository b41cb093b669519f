"""``RetryPolicy``: how a step retries calls that failed for a transient reason.

Transient failures (timeouts, rate limits, server errors, dropped connections; see
`langtree.runtime.faults`) have their own budget, apart from ``max_retries``, which
counts answers that came back but could not be used. Each retry waits first: the
provider's ``Retry-After`` when it sent one, else an exponential backoff with jitter, so
that calls that failed together do not all come back at the same moment.

The wait before the n-th transient retry is drawn uniformly between half and all of
``min(max_delay, initial_delay * multiplier ** (n - 1))``; a ``Retry-After`` is honoured as
given (the provider knows when it will take calls again; the run's ``deadline`` bounds
the wait). The semaphore that caps calls in flight is not held while waiting.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass

from langtree.errors import Diagnostic, StructureError
from langtree.runtime.faults import ErrorClassifier

__all__ = ["RetryPolicy"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """How transient provider failures are retried.

    Attributes:
        max_retries: Retries of a call after transient failures (the first attempt
            not counted); ``0`` fails the step at the first one.
        initial_delay: Seconds before the first retry (before jitter).
        max_delay: The longest backoff before a retry (a provider's ``Retry-After`` is
            honoured as given).
        multiplier: How much the wait grows from one retry to the next.
        jitter: Whether each wait is drawn between half and all of its nominal value.
        transient_errors: Further exception classes to treat as transient: a list, a
            tuple or a set of them, kept as a tuple.
        classifier: A function that names the kind of an error it recognises
            (``"transient"``, ``"invalid_output"`` or ``"permanent"``) and returns
            ``None`` for the others; asked before LangTree's own rules.

    Raises:
        StructureError: ``transient_errors`` is not a collection of exception classes
            (naming the value at fault).

    Examples:
        >>> policy = RetryPolicy(initial_delay=1.0, multiplier=2.0, max_delay=5.0, jitter=False)
        >>> [policy.delay(n, retry_after=None, rng=random.Random(0)) for n in (1, 2, 3, 4)]
        [1.0, 2.0, 4.0, 5.0]
        >>> policy.delay(1, retry_after=7.5, rng=random.Random(0))
        7.5
    """

    max_retries: int = 5
    initial_delay: float = 0.5
    max_delay: float = 30.0
    multiplier: float = 2.0
    jitter: bool = True
    transient_errors: Collection[type[BaseException]] = ()
    classifier: ErrorClassifier | None = None

    def __post_init__(self) -> None:
        # The classes are checked here, not with the other settings: `isinstance()` takes
        # only a tuple of classes, and a wrong value would otherwise surface as a
        # TypeError at the first failed call, deep inside a run that has paid for calls.
        object.__setattr__(self, "transient_errors", _exception_classes(self.transient_errors))

    def delay(self, retry: int, *, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before transient retry number ``retry`` (1 for the first).

        Args:
            retry: Which retry this is.
            retry_after: What the provider asked for, when it did.
            rng: The source of the jitter.
        """
        if retry_after is not None:
            return max(retry_after, 0.0)
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
        for name in ("initial_delay", "max_delay"):
            value = getattr(self, name)
            if not _finite(value) or value < 0:
                yield f"{name} must be a number of seconds of at least 0, got {value!r}"
        if not _finite(self.multiplier) or self.multiplier < 1:
            yield f"multiplier must be at least 1, got {self.multiplier!r}"


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
