"""``rate_limit``: requests and tokens per minute per model key, and a shared pause.

The buckets run on an injected clock whose ``sleep`` moves it, so waits are exact and no
test sleeps; through the engine, waits are read from the trace's ``waited``. A limiter gets
each prompt's tokens uncounted: the tests that show it reads them only to pace tokens
start with no encoding chosen and tell from ``encoding_loaded()`` whether anything counted.
"""

import asyncio
from dataclasses import dataclass, field

import pytest
from catalogue_tree import TaskCatalogue, catalogue, catalogue_inputs
from provider_faults import FakeClock, RateLimitedError

from langtree import (
    ExecutionError,
    RateLimit,
    RetryPolicy,
    RunResult,
    StructureError,
)
from langtree.prompts._tokens import PromptTokens, encoding_loaded
from langtree.runtime.faults._rate_limit import RateBuckets, RateLimiter
from langtree.testing import FakeChatModel, FakeRequest, ResponderResult

RUN_HINT = (
    "\n  hint: e.g. run(..., max_concurrency=8, call_timeout=60, "
    "retry=RetryPolicy(max_retries=5), usage_limits=UsageLimits(calls=500))"
)


def limit(clock: FakeClock, **limits: float) -> RateLimit:
    return RateLimit(**limits, clock=clock, sleep=clock.sleep)


def prompt(tokens: int) -> PromptTokens:
    """A prompt of ``tokens`` tokens: an empty text (0 tokens) and ``tokens`` more."""
    return PromptTokens("", extra=tokens)


def waits(rate_limit: RateLimiter, *calls: tuple[str, int]) -> list[float]:
    async def acquire_all() -> list[float]:
        return [await rate_limit.acquire(model, prompt(tokens)) for model, tokens in calls]

    return asyncio.run(acquire_all())


@dataclass
class RecordingLimiter:
    """A ``RateLimiter`` that lets every call go and remembers what it was told, without
    reading the prompts' counts."""

    acquired: list[tuple[str, PromptTokens]] = field(default_factory=list)
    held: list[tuple[str, float]] = field(default_factory=list)

    async def acquire(self, model: str, tokens: PromptTokens) -> float:
        self.acquired.append((model, tokens))
        return 0.0

    def hold(self, model: str, seconds: float) -> None:
        self.held.append((model, seconds))


# --- the buckets ----------------------------------------------------------------------------


def test_requests_per_minute_paces_the_calls_after_one_seconds_worth() -> None:
    clock = FakeClock()

    waited = waits(limit(clock, requests_per_minute=600), *[("m", 0)] * 12)

    assert waited == pytest.approx([0.0] * 10 + [0.1, 0.1])


def test_a_limit_below_one_call_a_second_lets_one_call_go_at_once() -> None:
    clock = FakeClock()

    assert waits(limit(clock, requests_per_minute=30), *[("m", 0)] * 3) == [0.0, 2.0, 2.0]


def test_tokens_per_minute_paces_by_the_prompts_tokens() -> None:
    clock = FakeClock()

    waited = waits(limit(clock, tokens_per_minute=6000), ("m", 60), ("m", 60), ("m", 100))

    # 100 tokens a second, as many at once: 40 are left after the first call, the second
    # waits for 20 more, the third for a full second's worth.
    assert waited == pytest.approx([0.0, 0.2, 1.0])


def test_a_call_larger_than_a_seconds_worth_waits_for_a_full_bucket_and_leaves_a_debt() -> None:
    clock = FakeClock()

    waited = waits(limit(clock, tokens_per_minute=6000), ("m", 50), ("m", 400), ("m", 10))

    # 400 tokens start once the bucket is full again (100), then 300 are owed: the next
    # call waits for them and its own 10 (3.1 s at 100 tokens a second).
    assert waited == pytest.approx([0.0, 0.5, 3.1])


def test_the_slower_of_the_two_limits_sets_the_pace() -> None:
    clock = FakeClock()
    both = limit(clock, requests_per_minute=60, tokens_per_minute=60_000)

    waited = waits(both, ("m", 10), ("m", 10), ("m", 3000), ("m", 10))

    # One call a second, until 3000 tokens leave the token bucket 2000 in debt.
    assert waited == pytest.approx([0.0, 1.0, 1.0, 2.01])


def test_each_model_key_has_its_own_pace() -> None:
    clock = FakeClock()

    waited = waits(limit(clock, requests_per_minute=60), ("fast", 0), ("smart", 0), ("fast", 0))

    assert waited == [0.0, 0.0, 1.0]


def test_hold_pauses_only_that_models_calls() -> None:
    clock = FakeClock()
    paced = limit(clock)
    paced.hold("fast", 5.0)

    assert waits(paced, ("fast", 0), ("smart", 0), ("fast", 0)) == [5.0, 0.0, 0.0]


def test_a_shorter_hold_does_not_shorten_a_longer_one() -> None:
    clock = FakeClock()
    paced = limit(clock)
    paced.hold("m", 5.0)
    paced.hold("m", 1.0)

    assert waits(paced, ("m", 0)) == [5.0]


def test_a_hold_that_begins_while_a_call_waits_is_waited_for_too() -> None:
    clock = FakeClock()

    async def sleep_and_get_told_to_wait(seconds: float) -> None:
        await clock.sleep(seconds)
        if len(clock.slept) == 1:
            paced.hold("m", 3.0)

    paced = RateLimit(requests_per_minute=60, clock=clock, sleep=sleep_and_get_told_to_wait)

    assert waits(paced, ("m", 0), ("m", 0)) == [0.0, 4.0]
    assert clock.slept == [1.0, 3.0]


def test_without_limits_calls_never_wait() -> None:
    clock = FakeClock()

    assert waits(limit(clock), *[("m", 10**6)] * 5) == [0.0] * 5
    assert clock.slept == []


def test_a_rate_limit_is_a_rate_limiter_and_shows_its_limits() -> None:
    paced = RateLimit(requests_per_minute=500, tokens_per_minute=200_000)

    assert isinstance(paced, RateLimiter)
    assert isinstance(RecordingLimiter(), RateLimiter)
    assert repr(paced) == "RateLimit(requests_per_minute=500, tokens_per_minute=200000)"
    assert repr(RateLimit()) == "RateLimit()"


def test_calls_that_ask_at_once_are_booked_one_after_another() -> None:
    buckets = RateBuckets(requests_per_minute=60)

    assert [buckets.reserve("m", 0, now=10.0) for _ in range(4)] == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.usefixtures("no_encoding_chosen")
@pytest.mark.parametrize(
    ("limits", "counted"),
    [
        pytest.param({}, False, id="no-limits"),
        pytest.param({"requests_per_minute": 60}, False, id="requests"),
        pytest.param({"tokens_per_minute": 6000}, True, id="tokens"),
    ],
)
def test_a_rate_limit_counts_the_prompt_only_to_pace_tokens(
    limits: dict[str, float], counted: bool
) -> None:
    paced = limit(FakeClock(), **limits)

    asyncio.run(paced.acquire("m", PromptTokens("Describe a lamp.")))

    assert encoding_loaded() is counted


# --- through the engine -----------------------------------------------------------------


def test_the_trace_shows_each_calls_wait_for_the_rate_limit() -> None:
    clock = FakeClock()
    paced = limit(clock, requests_per_minute=60)

    result = catalogue(FakeChatModel()).run(
        catalogue_inputs(3), rate_limit=paced, max_concurrency=1
    )

    assert [record.waited for record in result.trace] == [0.0, 1.0, 1.0]


def test_the_prompts_tokens_pace_the_calls_with_tokens_per_minute() -> None:
    clock = FakeClock()
    paced = limit(clock, tokens_per_minute=60)

    result = catalogue(FakeChatModel()).run(
        catalogue_inputs(3), rate_limit=paced, max_concurrency=1
    )

    # One token a second, one at once: each call waits for the tokens of the one before.
    first, second, _ = (record.token_count for record in result.trace)
    assert [record.waited for record in result.trace] == pytest.approx([0.0, first, second])


@pytest.mark.usefixtures("no_encoding_chosen")
def test_a_limiter_that_reads_no_count_makes_the_run_count_nothing() -> None:
    limiter = RecordingLimiter()

    result = catalogue(FakeChatModel(report_usage=True)).run(
        catalogue_inputs(2), rate_limit=limiter
    )

    assert len(limiter.acquired) == len(result.trace) == 2
    assert not encoding_loaded()


def test_each_call_asks_for_its_model_key_and_its_prompts_tokens() -> None:
    limiter = RecordingLimiter()

    result = catalogue(FakeChatModel()).run(catalogue_inputs(2), rate_limit=limiter)

    assert limiter.acquired == [("default", record.prompt_tokens) for record in result.trace]
    assert all(tokens.count > 0 for _, tokens in limiter.acquired)


def test_the_rate_limit_may_come_from_the_config() -> None:
    limiter = RecordingLimiter()

    catalogue(FakeChatModel(), {"rate_limit": limiter}).run(catalogue_inputs(2))

    assert len(limiter.acquired) == 2


def test_a_retry_after_holds_the_models_calls_in_the_rate_limit() -> None:
    faults = [RateLimitedError("0")]

    def respond(request: FakeRequest) -> ResponderResult:
        if faults:
            raise faults.pop()
        return {"blurb": "A fine thing."}

    limiter = RecordingLimiter()
    fast = RetryPolicy(initial_delay=0.0, jitter=False)

    result = catalogue(FakeChatModel(responder=respond)).run(
        catalogue_inputs(1), rate_limit=limiter, retry=fast
    )

    assert [record.failure for record in result.trace] == ["transient", None]
    assert limiter.held == [("default", 0.0)]
    assert len(limiter.acquired) == 2


def test_answers_replayed_from_the_journal_do_not_wait(tmp_path: object) -> None:
    journal = f"{tmp_path}/run.sqlite"
    first: RunResult = catalogue(FakeChatModel()).run(catalogue_inputs(3), journal=journal)
    limiter = RecordingLimiter()
    model = FakeChatModel()

    again = catalogue(model).run(catalogue_inputs(3), journal=journal, rate_limit=limiter)

    assert again[TaskCatalogue] == first[TaskCatalogue]
    assert (model.calls, limiter.acquired) == ([], [])


# --- wrong settings ---------------------------------------------------------------------


def test_a_rate_limit_that_is_not_a_rate_limiter_is_refused() -> None:
    with pytest.raises(ExecutionError) as raised:
        catalogue(FakeChatModel()).run(catalogue_inputs(1), rate_limit=500)  # type: ignore[typeddict-item]

    assert str(raised.value) == (
        "rate_limit must be a RateLimit (or another RateLimiter) or None, got 500" + RUN_HINT
    )


def test_every_wrong_limit_is_listed() -> None:
    wrong = RateLimit(requests_per_minute=0, tokens_per_minute="many")  # type: ignore[arg-type]

    with pytest.raises(ExecutionError) as raised:
        catalogue(FakeChatModel()).run(catalogue_inputs(1), rate_limit=wrong)

    assert str(raised.value) == (
        "2 run settings are wrong:\n"
        "  - rate_limit: requests_per_minute must be a number above 0 or None, got 0\n"
        "  - rate_limit: tokens_per_minute must be a number above 0 or None, got 'many'" + RUN_HINT
    )


def test_a_wrong_rate_limit_in_the_config_is_a_structure_error() -> None:
    with pytest.raises(StructureError) as raised:
        catalogue(FakeChatModel(), {"rate_limit": RateLimit(requests_per_minute=-5)})

    assert str(raised.value) == (
        "LangTree found 1 problem:\n\n"
        "error: rate_limit: requests_per_minute must be a number above 0 or None, got -5\n"
        "  hint: e.g. RunStructure({'call_timeout': 60, 'retry': {'max_retries': 5}})"
    )
