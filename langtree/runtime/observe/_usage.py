"""What a run's model calls cost, and the limits a run may not pass.

`Usage` adds up the calls of a run as the trace records them: every attempt counts,
retries and failed calls included, with the tokens the provider reported
(``AIMessage.usage_metadata``). `RunUsage` is the run's total with one
`Usage` per model key (``RunResult.usage``).

`UsageLimits` caps a run's calls and tokens. They are checked before each call
(compare pydantic-ai's ``UsageLimits``), counting the calls in flight: a call starts only
if one more call stays within ``calls``, and if the tokens used so far, the estimated
input of the calls in flight and this call's prompt stay within ``input_tokens`` and
``total_tokens``; ``output_tokens`` can only be known afterwards, so a call starts while
the output so far is under the limit. A call whose provider reports no usage counts its
prompt's estimated tokens (the prompt stage's count) instead. A prompt's tokens are
counted only for these two needs: without a limit on input or total tokens, a call whose
provider reports its usage counts nothing.

Tokens are counted only for what a provider received or reported (`run_tokens()`, which
the summaries of a run show, and `UsageMeter`, which the limits read): a call the model
answered counts the tokens the provider reported, else its prompt's estimate; a call that
got no answer (a connection refused, a timeout, an error the provider returned instead of
an answer) counts only the tokens its error reports, none when it reports none. A wrong
port or a provider that is down thus costs calls, never tokens.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from langtree.prompts import PromptTokens
    from langtree.runtime.observe._result import TraceRecord

__all__ = [
    "CallTokens",
    "LimitCheck",
    "RunUsage",
    "Usage",
    "UsageFigure",
    "UsageLimits",
    "UsageMeter",
    "call_tokens",
    "reported_tokens",
    "run_tokens",
    "usage_of_error",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Calls and tokens.

    Attributes:
        calls: Model calls made, every attempt included.
        retries: Calls that repeated an earlier attempt of the same step instance (or
            sample).
        failed_calls: Calls whose answer was not used: the call raised, timed out, or
            its output was invalid or cut off.
        input_tokens: Prompt tokens the provider reported.
        output_tokens: Completion tokens the provider reported.
        total_tokens: Both, as the provider reported them.
        failed_tokens: The total tokens of the failed calls (what failures cost).
    """

    calls: int = 0
    retries: int = 0
    failed_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    failed_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            **{
                item.name: getattr(self, item.name) + getattr(other, item.name)
                for item in fields(Usage)
            }
        )

    @classmethod
    def of_record(cls, record: TraceRecord) -> Usage:
        """One call's usage, from its trace record."""
        tokens = _reported(record.usage)
        failed = record.error is not None
        return cls(
            calls=1,
            retries=int(record.attempt > 1),
            failed_calls=int(failed),
            input_tokens=tokens[0],
            output_tokens=tokens[1],
            total_tokens=tokens[2],
            failed_tokens=tokens[2] if failed else 0,
        )

    def to_dict(self) -> dict[str, int]:
        """The counts as JSON-ready data."""
        return {item.name: getattr(self, item.name) for item in fields(Usage)}


@dataclass(frozen=True, slots=True, kw_only=True)
class RunUsage(Usage):
    """A run's usage: the totals, and the same per model key.

    Attributes:
        by_model: The usage of each model key the run called.
    """

    by_model: Mapping[str, Usage] = field(default_factory=dict)

    @classmethod
    def of_trace(cls, trace: Iterable[TraceRecord]) -> RunUsage:
        """Add up every call of a trace, overall and per model."""
        by_model: dict[str, Usage] = {}
        for record in trace:
            if record.replayed:  # taken from the journal: not paid in this run
                continue
            by_model[record.model] = by_model.get(record.model, Usage()) + Usage.of_record(record)
        total = sum(by_model.values(), Usage())
        return cls(**total.to_dict(), by_model=by_model)

    def to_dict(self) -> dict[str, int]:
        """The totals as JSON-ready data (see `to_json_dict()` for the models too)."""
        return Usage.to_dict(self)

    def to_json_dict(self) -> dict[str, object]:
        """The totals and each model's usage as JSON-ready data."""
        return {**self.to_dict(), "by_model": {k: v.to_dict() for k, v in self.by_model.items()}}


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageLimits:
    """The most a run may spend; ``None`` leaves a figure unlimited.

    Attributes:
        calls: The most model calls the run may make, retries included.
        input_tokens: The most prompt tokens the run may use.
        output_tokens: The most completion tokens the run may use.
        total_tokens: The most tokens (prompt and completion) the run may use.

    Examples:
        >>> UsageLimits(calls=100, total_tokens=50_000)
        UsageLimits(calls=100, input_tokens=None, output_tokens=None, total_tokens=50000)
    """

    calls: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None

    def problems(self) -> Iterator[str]:
        """What is wrong with the limits, one sentence each."""
        for item in fields(UsageLimits):
            value = getattr(self, item.name)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 1
            ):
                yield f"{item.name} must be a whole number of at least 1 or None, got {value!r}"


UsageFigure = Literal["calls", "input_tokens", "output_tokens", "total_tokens"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LimitCheck:
    """A limit that the next call would pass.

    Attributes:
        limit: Which figure.
        allowed: The limit.
        used: What the run had used, calls in flight included, when the call was due.
    """

    limit: UsageFigure
    allowed: int
    used: int


class UsageMeter:
    """Counts a run's calls and tokens as they start and finish, against its limits.

    Args:
        limits: The run's limits.
    """

    def __init__(self, limits: UsageLimits) -> None:
        self.limits = limits
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.in_flight_tokens = 0

    def admit(self, prompt: PromptTokens) -> LimitCheck | None:
        """Count a call about to start, unless it would pass a limit (then say which)."""
        in_flight = self._in_flight(prompt)
        check = self._exceeded(in_flight)
        if check is None:
            self.calls += 1
            self.in_flight_tokens += in_flight
        return check

    def settle(
        self, prompt: PromptTokens, usage: Mapping[str, object] | None, *, answered: bool
    ) -> None:
        """Count a finished call admitted with ``prompt``: the provider's usage, else,
        when the model ``answered``, the prompt's tokens as the estimate (a call that got
        no answer, or was cancelled, counts only what its error reported)."""
        self.in_flight_tokens -= self._in_flight(prompt)
        if usage is None and answered:
            self.input_tokens += prompt.count
            return
        reported = _reported(usage)
        self.input_tokens += reported[0]
        self.output_tokens += reported[1]

    def _in_flight(self, prompt: PromptTokens) -> int:
        """The tokens a call holds while in flight: its prompt's when a limit on input or
        total tokens weighs them, else none (and the prompt stays uncounted)."""
        if self.limits.input_tokens is None and self.limits.total_tokens is None:
            return 0
        return prompt.count

    def _exceeded(self, prompt_tokens: int) -> LimitCheck | None:
        input_after = self.input_tokens + self.in_flight_tokens + prompt_tokens
        figures: dict[UsageFigure, tuple[int, int]] = {
            "calls": (self.calls + 1, self.calls),
            "input_tokens": (input_after, self.input_tokens + self.in_flight_tokens),
            "output_tokens": (self.output_tokens + 1, self.output_tokens),
            "total_tokens": (
                input_after + self.output_tokens,
                self.input_tokens + self.in_flight_tokens + self.output_tokens,
            ),
        }
        for name, (after, used) in figures.items():
            allowed = getattr(self.limits, name)
            if allowed is not None and after > allowed:
                return LimitCheck(limit=name, allowed=allowed, used=used)
        return None


class CallTokens(Protocol):
    """What the token rule reads of a call: a run's `TraceRecord`, or a call of a saved
    run (``SavedCall``, which a run's page shows), so that both count alike."""

    @property
    def usage(self) -> Mapping[str, object] | None:
        """The provider's ``usage_metadata`` of the reply (``None``: it reported none)."""

    @property
    def answered(self) -> bool:
        """Whether the model answered the call."""

    @property
    def token_count(self) -> int | None:
        """The tokens of the call's prompt (``None``: not known)."""

    @property
    def replayed(self) -> bool:
        """Whether the answer came from a journal or cache instead of a model call."""


def run_tokens(trace: Iterable[CallTokens]) -> int:
    """The tokens of the calls made, as far as a provider received or reported them: the
    provider's total where it reported usage, else the prompt's count for a call the model
    answered, and nothing for one that got no answer (answers replayed from a journal or
    cache cost nothing)."""
    return sum(call_tokens(call) for call in trace if not call.replayed)


def call_tokens(call: CallTokens) -> int:
    """One call's tokens, as `run_tokens()` counts them."""
    reported = reported_tokens(call.usage)
    if reported is not None:
        return reported
    return (call.token_count or 0) if call.answered else 0


def reported_tokens(usage: Mapping[str, object] | None) -> int | None:
    """The total tokens of a ``usage_metadata`` mapping: its ``total_tokens``, else its
    input and output tokens added up (``None``: no usage reported)."""
    return _reported(usage)[2] if usage else None


def _reported(usage: Mapping[str, object] | None) -> tuple[int, int, int]:
    """Input, output and total tokens of a ``usage_metadata`` mapping (zeros when absent)."""
    if not usage:
        return 0, 0, 0
    numbers = [_count(usage.get(key)) for key in ("input_tokens", "output_tokens")]
    total = _count(usage.get("total_tokens")) or sum(numbers)
    return numbers[0], numbers[1], total


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0
    return int(value)


def usage_of_error(error: BaseException) -> dict[str, int] | None:
    """The token usage an exception reports, as ``usage_metadata`` (``None``: none).

    openai's ``LengthFinishReasonError`` carries the completion that was cut off, with the
    tokens it cost.
    """
    usage = getattr(getattr(error, "completion", None), "usage", None)
    if usage is None:
        return None
    prompt = _count(getattr(usage, "prompt_tokens", None))
    completion = _count(getattr(usage, "completion_tokens", None))
    total = _count(getattr(usage, "total_tokens", None)) or prompt + completion
    return {"input_tokens": prompt, "output_tokens": completion, "total_tokens": total}
