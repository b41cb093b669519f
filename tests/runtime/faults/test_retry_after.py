"""Waits a provider asks for (``Retry-After``): at most ``RetryPolicy.max_wait``, said in the
trace and in the progress line.

Every policy runs on a fake clock whose ``sleep`` moves it: no test waits, and none reads
the machine's clock.
"""

import io
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest
from provider_faults import FakeClock, RateLimitedError
from pydantic import Field

from langtree import RetryPolicy, RunStructure, StepFailedError, TreeNode
from langtree.cli import main
from langtree.runtime import LLMProvider, ProgressBar, RunResult
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest, ResponderResult

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC).timestamp()


class TaskGreet(TreeNode):
    """Greet the person by name."""

    name: str = Field(description="Who to greet.")
    greeting: str = Field(description="One friendly sentence.")


def refusing(retry_after: str, times: int = 1) -> FakeChatModel:
    """A model whose provider answers 429 with ``retry_after`` ``times`` times, then
    answers."""
    refusals = [RateLimitedError(retry_after, header="Retry-After")] * times

    def respond(request: FakeRequest) -> ResponderResult:
        if refusals:
            raise refusals.pop()
        return {"greeting": "Hello, Ada!"}

    return FakeChatModel(responder=respond)


def greet(model: FakeChatModel, policy: RetryPolicy, **options: object) -> RunResult:
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskGreet)
    return structure.run({TaskGreet: {"name": "Ada"}}, retry=policy, **options)  # type: ignore[arg-type]


def on(clock: FakeClock, **settings: float) -> RetryPolicy:
    return RetryPolicy(clock=clock, sleep=clock.sleep, jitter=False, **settings)


def capped(asked: str) -> str:
    return (
        f"waiting 300 s for the provider before the retry: it asked for {asked} s "
        "(Retry-After), more than RetryPolicy.max_wait"
    )


AS_ASKED = "waiting {} s for the provider before the retry, as it asked (Retry-After)"

IN_2099 = datetime(2099, 1, 1, tzinfo=UTC).timestamp() - NOW


@pytest.mark.parametrize(
    ("retry_after", "slept", "note"),
    [
        pytest.param("2", [2.0], AS_ASKED.format(2), id="seconds"),
        pytest.param("Sun, 01 Jun 2025 12:01:30 GMT", [90.0], AS_ASKED.format(90), id="date"),
        pytest.param("100000", [300.0], capped("100000"), id="a-day"),
        pytest.param("Thu, 01 Jan 2099 00:00:00 GMT", [300.0], capped(f"{IN_2099:g}"), id="2099"),
        pytest.param("1e308", [300.0], capped("1e+308"), id="1e308"),
        pytest.param("-5", [], AS_ASKED.format(0), id="negative"),
        pytest.param("Wed, 21 Oct 2015 07:28:00 GMT", [], AS_ASKED.format(0), id="past-date"),
        # Not a wait at all: the backoff's first wait (initial_delay, no jitter).
        pytest.param("soon", [0.5], None, id="garbage"),
        pytest.param("inf", [0.5], None, id="inf"),
        pytest.param("nan", [0.5], None, id="nan"),
        pytest.param("Sat, 01 Jan 10000 00:00:00 GMT", [0.5], None, id="year-10000"),
    ],
)
def test_a_retry_waits_what_the_provider_asks_up_to_max_wait(
    retry_after: str, slept: list[float], note: str | None
) -> None:
    clock = FakeClock(NOW)

    result = greet(refusing(retry_after), on(clock))

    assert result[TaskGreet].greeting == "Hello, Ada!"
    assert clock.slept == slept
    refused, answered = result.trace
    assert (refused.failure, refused.note) == ("transient", note)
    assert (answered.failure, answered.note, answered.waited) == (None, None, sum(slept))


def test_max_wait_sets_the_longest_wait_for_the_provider() -> None:
    clock = FakeClock(NOW)

    result = greet(refusing("100000"), on(clock, max_wait=60))

    assert clock.slept == [60.0]
    assert result.trace[0].note == (
        "waiting 60 s for the provider before the retry: it asked for 100000 s "
        "(Retry-After), more than RetryPolicy.max_wait"
    )


def test_a_provider_that_still_refuses_after_the_longest_wait_fails_the_step() -> None:
    clock = FakeClock(NOW)

    with pytest.raises(StepFailedError) as caught:
        greet(refusing("100000", times=10), on(clock, max_retries=2))

    error = caught.value
    assert (error.kind, len(error.attempts)) == ("transient", 3)
    assert clock.slept == [300.0, 300.0]
    # The last refusal is not waited for: no retry is left.
    assert [attempt.note for attempt in error.attempts] == [capped("100000")] * 2 + [None]
    assert str(error) == (
        "Step 'task.greet:greeting' could not get an answer for 'task.greet': 3 attempt(s) "
        "failed; the last error:\nRateLimitedError (HTTP 429): Rate limit reached for requests\n"
        "  hint: the provider kept failing (timeouts, rate limits, server errors); raise "
        "retry=RetryPolicy(max_retries=...) or call_timeout, or lower max_concurrency"
    )


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_says_while_a_call_waits_for_the_provider() -> None:
    terminal = Terminal()
    # The bar's own clock stands still: only the wait's start and end redraw the line.
    bar = ProgressBar(1, interval=3600, stream=terminal, clock=lambda: 0.0)

    greet(refusing("100000"), on(FakeClock(NOW)), config={"callbacks": [bar]})

    # Each redraw covers the line before it: the end of the wait shortens the line.
    assert terminal.getvalue().split("\r") == [
        "langtree ▕████████████████████▏ 1/1 calls, 1 failed",
        "langtree ▕████████████████████▏ 1/1 calls, 1 failed, waiting 300 s for the provider",
        "langtree ▕████████████████████▏ 1/1 calls, 1 failed" + " " * 32,
        "langtree ▕████████████████████▏ 2/2 calls, 1 failed\n",
    ]


TREE = '''
from pydantic import Field

from langtree import TreeNode


class TaskGreet(TreeNode):
    """Greet the person by name."""

    name: str = Field(description="Who to greet.")
    greeting: str = Field(description="One friendly sentence.")
'''

MODELS = """
from types import SimpleNamespace

from langtree import LLMProvider, ModelConfig, RetryPolicy
from langtree.testing import FakeChatModel


class RateLimitedError(Exception):
    status_code = 429
    response = SimpleNamespace(headers={"Retry-After": "100000"})


class Clock:
    now = 1748779200.0

    def __call__(self):
        return self.now

    async def sleep(self, seconds):
        self.now += seconds


refusals = [RateLimitedError("Rate limit reached for requests")]


def respond(request):
    if refusals:
        raise refusals.pop()
    return {"greeting": "Hello, Ada!"}


clock = Clock()
policy = RetryPolicy(clock=clock, sleep=clock.sleep)
provider = LLMProvider({"default": ModelConfig(FakeChatModel(respond), retry=policy)})
"""


def test_the_command_line_says_while_a_call_waits_for_the_provider(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "greet_tree.py").write_text(textwrap.dedent(TREE))
    (tmp_path / "greet_models.py").write_text(textwrap.dedent(MODELS))
    (tmp_path / "ada.json").write_text('{"name": "Ada"}')
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setenv("NO_COLOR", "1")

    status = main(
        [
            "run",
            f"{tmp_path / 'greet_tree.py'}:TaskGreet",
            "--input",
            str(tmp_path / "ada.json"),
            "--model",
            f"{tmp_path / 'greet_models.py'}:provider",
        ]
    )

    assert status == 0
    live, summary = terminal.getvalue().rsplit("\n", 2)[:2]
    assert live.split("\r") == [
        "langtree: 1/2 calls done, 1 failed",
        "langtree: 1/2 calls done, 1 failed, waiting 300 s for the provider",
        "langtree: 1/2 calls done, 1 failed" + " " * 32,
        # A failed call counts one more to come (its retry) until the run is over.
        "langtree: 2/3 calls done, 1 failed",
        "langtree: 2/2 calls done, 1 failed",
    ]
    assert summary.startswith("langtree: 2 call(s), ")
