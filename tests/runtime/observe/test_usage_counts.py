"""A run counts its prompts' tokens only when something needs them: a limit on input or
total tokens, a rate limit on tokens per minute, or a call whose provider reports no usage
(the estimate stands in for it).

A prompt's tokens are counted when first read (``PromptTokens``). The in-process tests
start with no encoding chosen and tell from ``encoding_loaded()`` whether the run counted;
the first two run in a fresh process, which has never counted, to show that such a run
does not even import tiktoken.
"""

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from catalogue_tree import TaskCatalogue, catalogue

from langtree import LLMProvider, RateLimit, RetryPolicy, RunStructure, UsageLimits
from langtree.prompts._tokens import count_tokens, encoding_loaded
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest, ResponderResult

ROOT = Path(__file__).parent.parent.parent.parent

RUN_AND_READ = """
import json, sys

from catalogue_tree import TaskCatalogue, catalogue

from langtree.prompts import _tokens as tokens
from langtree.testing import FakeChatModel


structure = catalogue(FakeChatModel(report_usage=True))
result = structure.run({TaskCatalogue: {"items": [{"name": "lamp"}, {"name": "desk"}]}})
after_run = {
    "pieces_counted": tokens._cached_piece_tokens.cache_info().currsize,
    "encodings_chosen": tokens._tokenizer.cache_info().currsize,
    "tiktoken_imported": "tiktoken" in sys.modules,
}
record = result.trace[0]
read = record.token_count
text = "\\n\\n".join(message.text for message in record.messages)
print(json.dumps({
    "calls": len(result.trace),
    "after_run": after_run,
    "read": read,
    "loaded_after_read": tokens.encoding_loaded(),
    "count_tokens": tokens.count_tokens(text).count,
}))
"""


@pytest.fixture(scope="module")
def fresh_process() -> dict[str, object]:
    """What a fresh process saw: a run on a model that reports its usage, without token
    limits, then ``token_count`` of its first trace record read."""
    ran = subprocess.run(
        [sys.executable, "-c", RUN_AND_READ],
        cwd=ROOT,
        # LangTree from the working folder, the catalogue from beside these tests.
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    seen: dict[str, object] = json.loads(ran.stdout)
    return seen


def test_a_run_that_needs_no_count_loads_no_encoding(fresh_process: dict[str, object]) -> None:
    assert fresh_process["calls"] == 2
    assert fresh_process["after_run"] == {
        "pieces_counted": 0,
        "encodings_chosen": 0,
        "tiktoken_imported": False,
    }


def test_a_trace_records_count_is_made_when_read(fresh_process: dict[str, object]) -> None:
    assert fresh_process["loaded_after_read"] is True
    assert fresh_process["read"] == fresh_process["count_tokens"]
    assert isinstance(fresh_process["read"], int)
    assert fresh_process["read"] > 0


# --- in this process --------------------------------------------------------------------


ITEMS = {TaskCatalogue: {"items": [{"name": "lamp"}, {"name": "desk"}]}}


@pytest.mark.usefixtures("no_encoding_chosen")
@pytest.mark.parametrize(
    ("options", "counted"),
    [
        pytest.param({}, False, id="no-limits"),
        pytest.param({"usage_limits": UsageLimits(calls=10)}, False, id="calls-limit"),
        pytest.param({"usage_limits": UsageLimits(output_tokens=10**6)}, False, id="output-limit"),
        pytest.param({"usage_limits": UsageLimits(input_tokens=10**6)}, True, id="input-limit"),
        pytest.param({"usage_limits": UsageLimits(total_tokens=10**6)}, True, id="total-limit"),
        pytest.param({"rate_limit": RateLimit(requests_per_minute=6000)}, False, id="requests"),
        pytest.param({"rate_limit": RateLimit(tokens_per_minute=10**7)}, True, id="tokens"),
    ],
)
def test_a_run_counts_only_for_a_limit_on_tokens(options: dict[str, object], counted: bool) -> None:
    result = catalogue(FakeChatModel(report_usage=True)).run(ITEMS, **options)

    assert len(result.trace) == 2
    assert encoding_loaded() is counted


@pytest.mark.usefixtures("no_encoding_chosen")
def test_a_call_without_reported_usage_counts_its_prompt() -> None:
    result = catalogue(FakeChatModel(report_usage=False)).run(ITEMS)

    assert encoding_loaded()
    text = "\n\n".join(message.text for message in result.trace[0].messages)
    assert result.usage.input_tokens == 0  # the usage the provider reported: none
    assert result.trace[0].token_count == count_tokens(text).count


# --- calls that got no answer -------------------------------------------------------------


def refused(calls: int) -> Callable[[FakeRequest], ResponderResult]:
    """A responder whose first ``calls`` calls find no server, as a wrong port does (every
    call when ``calls`` is -1), then answers."""

    made: list[FakeRequest] = []

    def respond(request: FakeRequest) -> ResponderResult:
        made.append(request)
        if calls < 0 or len(made) <= calls:
            raise ConnectionRefusedError(111, "Connection refused")
        return {"blurb": "A fine thing."}

    return respond


async def no_wait(seconds: float) -> None:
    """A retry's backoff that takes no time."""


NO_WAIT = RetryPolicy(max_retries=3, sleep=no_wait)


@pytest.mark.usefixtures("no_encoding_chosen")
def test_a_call_that_reached_no_provider_counts_no_tokens() -> None:
    structure = RunStructure(
        {"on_error": "continue"}, provider=LLMProvider({"default": FakeChatModel(refused(-1))})
    )
    structure.add(TaskCatalogue)

    result = structure.run(ITEMS, retry=NO_WAIT)

    assert result.usage.to_dict() == {
        "calls": 8,
        "retries": 6,
        "failed_calls": 8,
        "input_tokens": 0,
        "output_tokens": 0,
        "total_tokens": 0,
        "failed_tokens": 0,
    }
    assert repr(result) == "RunResult(tasks=[], calls=8, tokens=0, errors=2)"
    summary = result._repr_markdown_().split("\n")[0]
    assert summary == "**Run**: 8 calls, 6 retries, 8 failed, 0 tokens"
    # Nothing needed the prompts' counts: not the limits, and no answer without usage.
    assert not encoding_loaded()


def test_a_token_limit_counts_nothing_for_a_call_that_reached_no_provider() -> None:
    model = FakeChatModel(refused(3))
    structure = catalogue(model)
    one = {TaskCatalogue: {"items": [{"name": "lamp"}]}}
    prompt = structure.prompts(one)[0].token_count

    result = structure.run(one, retry=NO_WAIT, usage_limits=UsageLimits(total_tokens=prompt))

    assert [record.failure for record in result.trace] == [
        "transient",
        "transient",
        "transient",
        None,
    ]
    assert result.partial(TaskCatalogue) == {"items": [{"name": "lamp", "blurb": "A fine thing."}]}
    assert repr(result) == (
        f"RunResult(tasks=['task.catalogue'], calls=4, tokens={prompt}, errors=0)"
    )


def test_an_invalid_answer_counts_its_prompt() -> None:
    answers = iter([{"blurb": None}, {"blurb": "A fine thing."}])
    structure = catalogue(FakeChatModel(lambda request: next(answers)))
    one = {TaskCatalogue: {"items": [{"name": "lamp"}]}}

    result = structure.run(one)

    assert [record.failure for record in result.trace] == ["invalid_output", None]
    assert repr(result) == (
        "RunResult(tasks=['task.catalogue'], calls=2, "
        f"tokens={sum(record.token_count for record in result.trace)}, errors=0)"
    )
