"""Runs that meet provider faults: retries by kind, timeouts, limits, usage, partial results."""

import asyncio
import pickle
import time
from collections.abc import Callable
from typing import Any

import pytest
from catalogue_tree import TaskCatalogue, catalogue_inputs
from provider_faults import RateLimitedError
from pydantic import Field, model_validator

from langtree import (
    ExecutionError,
    ModelConfig,
    RetryPolicy,
    RunLimitError,
    RunStructure,
    StepFailedError,
    StructureError,
    TreeNode,
    UsageLimits,
)
from langtree.runtime import LLMProvider, RunResult, Usage
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest, ResponderResult

FAST = RetryPolicy(initial_delay=0.001, max_delay=0.01)


class TaskGreet(TreeNode):
    """Greet the person by name."""

    name: str = Field(description="Who to greet.")
    greeting: str = Field(description="One friendly sentence.")


class UnauthorizedError(Exception):
    """Stands in for a provider's HTTP 401."""

    status_code = 401


class LengthFinishReasonError(Exception):
    """Named like openai's error for an answer cut off at max_tokens."""


def failing(*faults: BaseException | None) -> Callable[[FakeRequest], ResponderResult]:
    """A responder that raises the given faults in turn, then answers (``None``: answer)."""
    queue = list(faults)

    def respond(request: FakeRequest) -> ResponderResult:
        fault = queue.pop(0) if queue else None
        if fault is not None:
            raise fault
        return {"greeting": "Hello, Ada!", "blurb": "A fine thing."}

    return respond


def structure(
    model: object, task: type[TreeNode] = TaskGreet, config: dict[str, Any] | None = None
) -> RunStructure:
    built = RunStructure(config, provider=LLMProvider({"default": model}))  # type: ignore[dict-item]
    built.add(task)
    return built


def greet(model: object, **options: Any) -> RunResult:
    return structure(model).run({TaskGreet: {"name": "Ada"}}, **{"retry": FAST, **options})


# --- transient failures ----------------------------------------------------------------


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(TimeoutError(), id="timeout"),
        pytest.param(ConnectionResetError("connection reset by peer"), id="dropped-connection"),
        pytest.param(RateLimitedError("0"), id="rate-limit"),
    ],
)
def test_a_transient_failure_is_retried_with_the_same_messages(fault: BaseException) -> None:
    model = FakeChatModel(responder=failing(fault))

    result = greet(model)

    assert result[TaskGreet].greeting == "Hello, Ada!"
    assert [record.failure for record in result.trace] == ["transient", None]
    assert model.calls[1].messages == model.calls[0].messages


def test_the_trace_describes_a_transient_failure() -> None:
    result = greet(FakeChatModel(responder=failing(RateLimitedError("0"))))

    first = result.trace[0]
    assert (first.attempt, first.error, first.raw_output, first.usage) == (
        1,
        "RateLimitedError (HTTP 429): Rate limit reached for requests",
        "",
        None,
    )


def test_retry_after_is_honoured_beyond_the_backoffs_longest_wait() -> None:
    result = greet(FakeChatModel(responder=failing(RateLimitedError("0.2"))), retry=FAST)

    assert result.trace[1].waited == pytest.approx(0.2, abs=0.05)


def test_retry_after_pauses_the_models_other_calls() -> None:
    started: list[float] = []
    faults = [RateLimitedError("0.3")]

    def respond(request: FakeRequest) -> ResponderResult:
        started.append(time.monotonic())
        if faults:
            raise faults.pop()
        return {"blurb": "A fine thing."}

    model = FakeChatModel(responder=respond)

    result = structure(model, TaskCatalogue).run(catalogue_inputs(4), retry=FAST, max_concurrency=1)

    assert len(result.trace) == 5
    assert min(moment - started[0] for moment in started[1:]) >= 0.25


def test_backoff_grows_between_transient_retries() -> None:
    policy = RetryPolicy(initial_delay=0.02, multiplier=2.0, max_delay=1.0, jitter=False)
    model = FakeChatModel(responder=failing(TimeoutError(), TimeoutError(), TimeoutError()))

    result = greet(model, retry=policy)

    assert [record.waited for record in result.trace] == pytest.approx([0.0, 0.02, 0.04, 0.08])


def test_transient_retries_have_their_own_budget() -> None:
    faults = [TimeoutError()] * 3
    model = FakeChatModel(responder=failing(*faults))

    result = greet(model, max_retries=0, retry=RetryPolicy(max_retries=3, initial_delay=0.001))

    assert result[TaskGreet].greeting == "Hello, Ada!"
    assert len(result.trace) == 4


def test_a_step_fails_when_its_transient_budget_is_spent() -> None:
    model = FakeChatModel(responder=failing(*[TimeoutError()] * 10))

    with pytest.raises(StepFailedError) as caught:
        greet(model, retry=RetryPolicy(max_retries=2, initial_delay=0.001))

    error = caught.value
    assert (error.kind, len(error.attempts), len(model.calls)) == ("transient", 3, 3)
    assert isinstance(error.__cause__, TimeoutError)
    assert str(error) == (
        "Step 'task.greet:greeting' could not get an answer for 'task.greet': 3 attempt(s) "
        "failed; the last error:\nTimeoutError: the call timed out\n"
        "  hint: the provider kept failing (timeouts, rate limits, server errors); raise "
        "retry=RetryPolicy(max_retries=...) or call_timeout, or lower max_concurrency"
    )


def test_my_own_transient_error_type_is_retried() -> None:
    class FlakyError(Exception):
        pass

    model = FakeChatModel(responder=failing(FlakyError("try again")))
    policy = RetryPolicy(initial_delay=0.001, transient_errors=(FlakyError,))

    assert greet(model, retry=policy)[TaskGreet].greeting == "Hello, Ada!"


class GatewayBusyError(Exception):
    """A user's own transient error."""


def flaky_run(
    structure_config: dict[str, Any] | None, model_retry: RetryPolicy | None, **options: Any
) -> RunResult:
    model = FakeChatModel(responder=failing(GatewayBusyError("try again")))
    provider = LLMProvider({"default": ModelConfig(model, retry=model_retry)})
    built = RunStructure(structure_config, provider=provider)
    built.add(TaskGreet)
    return built.run({TaskGreet: {"name": "Ada"}}, **options)


BUSY = [GatewayBusyError]
QUICK = {"initial_delay": 0.001}


@pytest.mark.parametrize(
    ("structure_config", "model_retry", "options"),
    [
        pytest.param(
            None, None, {"retry": RetryPolicy(transient_errors=BUSY, **QUICK)}, id="constructor"
        ),
        pytest.param(
            {"retry": {"transient_errors": BUSY, **QUICK}}, None, {}, id="structure-config"
        ),
        pytest.param(None, None, {"retry": {"transient_errors": BUSY, **QUICK}}, id="run-option"),
        pytest.param(None, RetryPolicy(transient_errors=BUSY, **QUICK), {}, id="model-config"),
        pytest.param(
            None,
            None,
            {"retry": RetryPolicy(transient_errors={GatewayBusyError}, **QUICK)},
            id="set",
        ),
    ],
)
def test_transient_errors_may_be_a_list_wherever_a_retry_policy_comes_from(
    structure_config: dict[str, Any] | None,
    model_retry: RetryPolicy | None,
    options: dict[str, Any],
) -> None:
    result = flaky_run(structure_config, model_retry, **options)

    assert result[TaskGreet].greeting == "Hello, Ada!"
    assert [record.failure for record in result.trace] == ["transient", None]


def test_a_retry_policy_keeps_its_transient_errors_as_a_tuple() -> None:
    policy = RetryPolicy(transient_errors=[GatewayBusyError, TimeoutError])

    assert policy.transient_errors == (GatewayBusyError, TimeoutError)
    assert hash(policy) == hash(RetryPolicy(transient_errors=(GatewayBusyError, TimeoutError)))


BUSY_CLASS = f"<class '{__name__}.GatewayBusyError'>"
TEXT_PROBLEM = (
    "transient_errors[1] must be an exception class, got the text 'TimeoutError' (a .json "
    "config cannot hold classes: give them in a Python dict)"
)
WRONG_TRANSIENT_ERRORS = [
    pytest.param(
        GatewayBusyError,
        f"transient_errors must be a list or tuple of exception classes, got {BUSY_CLASS}",
        id="one-class",
    ),
    pytest.param(
        "TimeoutError",
        "transient_errors must be a list or tuple of exception classes, got 'TimeoutError'",
        id="text",
    ),
    pytest.param(
        {"busy": GatewayBusyError},
        "transient_errors must be a list or tuple of exception classes, got "
        f"{{'busy': {BUSY_CLASS}}}",
        id="dict",
    ),
    pytest.param([GatewayBusyError, "TimeoutError"], TEXT_PROBLEM, id="a-name"),
    pytest.param(
        [GatewayBusyError("busy")],
        "transient_errors[0] must be an exception class, got GatewayBusyError('busy')",
        id="an-instance",
    ),
    pytest.param(
        (int,),
        "transient_errors[0] must be an exception class, got <class 'int'>",
        id="not-an-error",
    ),
]


@pytest.mark.parametrize(("value", "problem"), WRONG_TRANSIENT_ERRORS)
def test_a_retry_policy_refuses_what_is_no_exception_class_as_it_is_built(
    value: object, problem: str
) -> None:
    with pytest.raises(StructureError) as caught:
        RetryPolicy(transient_errors=value)  # type: ignore[arg-type]

    assert str(caught.value) == (
        f"LangTree found 1 problem:\n\nerror: {problem}\n"
        "  hint: give the classes themselves, e.g. RetryPolicy(transient_errors=[TimeoutError])"
    )


def test_wrong_transient_errors_in_the_config_are_reported_with_the_other_settings() -> None:
    with pytest.raises(StructureError) as caught:
        RunStructure({"retry": {"transient_errors": [GatewayBusyError, "TimeoutError"]}})

    assert [d.message for d in caught.value.diagnostics] == [f"retry: {TEXT_PROBLEM}"]


def test_wrong_transient_errors_in_the_run_options_fail_before_any_call() -> None:
    model = FakeChatModel()

    with pytest.raises(ExecutionError) as caught:
        structure(model).run(
            {TaskGreet: {"name": "Ada"}},
            retry={"transient_errors": [GatewayBusyError, "TimeoutError"]},
        )

    assert str(caught.value) == (
        f"retry: {TEXT_PROBLEM}\n  hint: e.g. run(..., max_concurrency=8, call_timeout=60, "
        "retry=RetryPolicy(max_retries=5), usage_limits=UsageLimits(calls=500))"
    )
    assert model.calls == []


def test_a_classifier_decides_first() -> None:
    model = FakeChatModel(responder=failing(KeyError("busy")))
    policy = RetryPolicy(
        initial_delay=0.001,
        classifier=lambda error: "transient" if isinstance(error, KeyError) else None,
    )

    assert [r.failure for r in greet(model, retry=policy).trace] == ["transient", None]


# --- permanent failures and invalid output ------------------------------------------------


def test_a_permanent_failure_fails_the_step_at_once() -> None:
    model = FakeChatModel(responder=failing(UnauthorizedError("Incorrect API key provided")))

    with pytest.raises(StepFailedError) as caught:
        greet(model)

    assert (caught.value.kind, len(model.calls)) == ("permanent", 1)
    assert str(caught.value) == (
        "Step 'task.greet:greeting' failed for 'task.greet' with an error that retrying "
        "cannot fix:\nUnauthorizedError (HTTP 401): Incorrect API key provided\n"
        "  hint: retrying cannot fix this (credentials, model name, request settings); the "
        "exception is error.__cause__"
    )


def test_an_answer_cut_off_is_retried_as_invalid_output() -> None:
    model = FakeChatModel(responder=failing(LengthFinishReasonError("Length limit reached")))

    result = greet(model, max_retries=1)

    assert [(r.failure, r.truncated) for r in result.trace] == [
        ("invalid_output", True),
        (None, False),
    ]
    assert model.calls[1].messages[-1].content == (
        "Your previous answer could not be used:\n"
        "- the answer was cut off at the model's output limit (LengthFinishReasonError)\n\n"
        "Write Greeting again, as structured output."
    )


def test_a_step_whose_answers_stay_cut_off_says_to_raise_the_output_limit() -> None:
    model = FakeChatModel(responder=failing(*[LengthFinishReasonError("Length")] * 3))

    with pytest.raises(StepFailedError) as caught:
        greet(model, max_retries=2)

    assert str(caught.value).endswith(
        "  hint: the model stopped at its output limit; raise the model's max_tokens, or "
        "split the step's fields (@sequential)"
    )


def test_invalid_output_and_transient_failures_count_separately() -> None:
    answers: list[object] = [TimeoutError(), {"greeting": 5}, TimeoutError(), {"greeting": "Hi"}]

    def respond(request: FakeRequest) -> ResponderResult:
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer  # type: ignore[return-value]

    result = greet(FakeChatModel(responder=respond), max_retries=1, retry=FAST)

    assert [r.failure for r in result.trace] == ["transient", "invalid_output", "transient", None]


# --- on_error="continue" ----------------------------------------------------------------


def test_continue_applies_to_provider_errors() -> None:
    def respond(request: FakeRequest) -> ResponderResult:
        if "item 1" in request.text:
            raise UnauthorizedError("no access to this one")
        return {"blurb": "A fine thing."}

    built = structure(FakeChatModel(responder=respond), TaskCatalogue, {"on_error": "continue"})

    result = built.run(catalogue_inputs(3))

    assert [(e.kind, e.node_path) for e in result.errors] == [
        ("permanent", "task.catalogue.items[1]")
    ]
    assert result.partial(TaskCatalogue)["items"] == [
        {"name": "item 0", "blurb": "A fine thing."},
        {"name": "item 1"},
        {"name": "item 2", "blurb": "A fine thing."},
    ]


# --- what a failure carries ---------------------------------------------------------------


def test_a_failure_carries_what_had_finished() -> None:
    def respond(request: FakeRequest) -> ResponderResult:
        if "item 2" in request.text:
            raise UnauthorizedError("no access")
        return {"blurb": "A fine thing."}

    model = FakeChatModel(responder=respond)

    with pytest.raises(StepFailedError) as caught:
        structure(model, TaskCatalogue).run(catalogue_inputs(3), max_concurrency=1)

    error = caught.value
    assert error.result is not None
    assert error.partial == error.result.partials
    assert [r.node_path for r in error.trace] == [
        "task.catalogue.items[0]",
        "task.catalogue.items[1]",
        "task.catalogue.items[2]",
    ]
    assert error.result.provenance_paths()[-2:] == [
        "task.catalogue.items[0].blurb",
        "task.catalogue.items[1].blurb",
    ]
    assert error.result.usage.calls == 3


def test_a_failure_with_its_result_pickles() -> None:
    with pytest.raises(StepFailedError) as caught:
        greet(FakeChatModel(responder=failing(UnauthorizedError("no"))))

    copy = pickle.loads(pickle.dumps(caught.value))
    assert (str(copy), copy.kind, copy.partial) == (
        str(caught.value),
        "permanent",
        caught.value.partial,
    )


class TaskScores(TreeNode):
    """Score the essay."""

    scores: list[int] = Field(description="One score per criterion.")
    mean: float = Field(description='! transform("(scores | sum) / (scores | length)")')


def test_a_failing_transform_carries_what_had_finished() -> None:
    model = FakeChatModel(responder=lambda request: {"scores": []})

    with pytest.raises(ExecutionError) as caught:
        structure(model, TaskScores).run({})

    assert str(caught.value).splitlines()[0] == (
        "transform() of 'TaskScores.mean' failed at task.scores: ZeroDivisionError: "
        "division by zero"
    )
    assert caught.value.result is not None
    assert caught.value.result.partial(TaskScores) == {"scores": []}
    assert [record.step_id for record in caught.value.result.trace] == ["task.scores:scores"]


class TaskCode(TreeNode):
    """Pick a code.

    ! @all->task.lookup@{{value.number=code}}
    """

    code: str = Field(description="The code.")


class TaskLookup(TreeNode):
    number: int = Field(description="The number.")
    label: str = Field(description="Its label.")


def test_a_mapped_value_that_does_not_convert_carries_what_had_finished() -> None:
    model = FakeChatModel(responder=lambda request: {"code": "forty-two"})
    built = structure(model, TaskCode, config={"validation_strategy": "permissive"})
    built.add(TaskLookup)

    with pytest.raises(ExecutionError) as caught:
        built.run({})

    assert str(caught.value).splitlines()[0] == (
        "'value.number' cannot take the value sent: cannot convert 'forty-two' to int: "
        "it is not an integer"
    )
    assert caught.value.result is not None
    assert caught.value.result.partial(TaskCode) == {"code": "forty-two"}
    assert caught.value.result.usage.calls == 1


class TaskShout(TreeNode):
    """Shout the greeting."""

    greeting: str = Field(description="One loud sentence.")

    @model_validator(mode="after")
    def loud(self) -> "TaskShout":
        if not self.greeting.isupper():
            raise ValueError("the greeting must be upper case")
        return self


def test_values_that_do_not_validate_after_the_run_carry_what_had_finished() -> None:
    model = FakeChatModel(responder=lambda request: {"greeting": "hello"})

    with pytest.raises(ExecutionError) as caught:
        structure(model, TaskShout).run({})

    assert caught.value.result is not None
    assert caught.value.result.partial(TaskShout) == {"greeting": "hello"}
    assert caught.value.result.invalid == {"task.shout": str(caught.value)}
    assert caught.value.result.usage.calls == 1


def test_an_error_before_the_run_carries_no_result() -> None:
    with pytest.raises(ExecutionError) as caught:
        greet(FakeChatModel(), max_concurrency=0)

    assert caught.value.result is None


def test_an_execution_error_with_its_result_pickles() -> None:
    model = FakeChatModel(responder=lambda request: {"scores": []})
    with pytest.raises(ExecutionError) as caught:
        structure(model, TaskScores).run({})

    copy = pickle.loads(pickle.dumps(caught.value))
    assert copy.result is not None
    assert (str(copy), copy.result.partials) == (str(caught.value), {"task.scores": {"scores": []}})


# --- timeouts and the deadline ------------------------------------------------------------


def test_a_call_that_passes_call_timeout_is_a_transient_failure() -> None:
    model = FakeChatModel(latency=lambda request: 5.0 if len(model.calls) == 1 else 0.0)

    result = greet(model, call_timeout=0.05)

    assert [(r.failure, r.error) for r in result.trace] == [
        ("transient", "TimeoutError: no answer within 0.05 s (call_timeout)"),
        (None, None),
    ]


def test_a_models_own_call_timeout_wins_over_the_runs() -> None:
    model = FakeChatModel(latency=lambda request: 0.2 if len(model.calls) == 1 else 0.0)
    patient = ModelConfig(model, call_timeout=5.0)

    result = greet(patient, call_timeout=0.05)

    assert [r.failure for r in result.trace] == [None]


def test_the_deadline_stops_the_run_and_keeps_what_finished() -> None:
    model = FakeChatModel(latency=lambda request: 0.0 if "item 0" in request.text else 10.0)
    begin = time.monotonic()

    with pytest.raises(RunLimitError) as caught:
        structure(model, TaskCatalogue).run(catalogue_inputs(3), deadline=0.3)

    assert time.monotonic() - begin < 3.0
    error = caught.value
    assert (error.limit, error.allowed) == ("deadline", 0.3)
    assert str(error) == (
        "The run reached its deadline of 0.3 s\n"
        "  hint: pass a larger deadline=..., or lower the work per run; error.result holds "
        "what had finished"
    )
    assert error.result is not None
    assert error.result.partial(TaskCatalogue)["items"][0] == {
        "name": "item 0",
        "blurb": "blurb 1",
    }


# --- usage and its limits -----------------------------------------------------------------


def test_usage_counts_every_call_per_model() -> None:
    model = FakeChatModel(responder=failing(TimeoutError(), TimeoutError()))

    usage = greet(model).usage

    assert (usage.calls, usage.retries, usage.failed_calls) == (3, 2, 2)
    assert usage.by_model == {"default": Usage(calls=3, retries=2, failed_calls=2)}


def test_usage_adds_up_the_reported_tokens() -> None:
    class Counting(FakeChatModel):
        async def _agenerate(self, *args: Any, **kwargs: Any) -> Any:
            result = await super()._agenerate(*args, **kwargs)
            result.generations[0].message.usage_metadata = {
                "input_tokens": 100,
                "output_tokens": 20,
                "total_tokens": 120,
            }
            return result

    usage = structure(Counting(), TaskCatalogue).run(catalogue_inputs(3)).usage

    assert (usage.calls, usage.input_tokens, usage.output_tokens, usage.total_tokens) == (
        3,
        300,
        60,
        360,
    )


def test_a_call_limit_stops_the_run_before_the_call_that_would_pass_it() -> None:
    model = FakeChatModel()

    with pytest.raises(RunLimitError) as caught:
        structure(model, TaskCatalogue).run(
            catalogue_inputs(3), usage_limits=UsageLimits(calls=2), max_concurrency=1
        )

    assert len(model.calls) == 2
    assert str(caught.value) == (
        "The run reached its limit of 2 calls (2 used) before a call of step "
        "'task.catalogue.items:blurb' for 'task.catalogue.items[2]'\n"
        "  hint: raise usage_limits=UsageLimits(calls=...); error.result holds what had "
        "finished"
    )
    assert caught.value.result is not None
    assert len(caught.value.result.trace) == 2


def test_a_token_limit_counts_the_prompts_of_calls_in_flight() -> None:
    model = FakeChatModel(latency=0.05)
    prompts = structure(model, TaskCatalogue).prompts(catalogue_inputs(3))
    two = sum(prompt.token_count for prompt in prompts[:2])

    with pytest.raises(RunLimitError) as caught:
        structure(model, TaskCatalogue).run(catalogue_inputs(3), usage_limits={"input_tokens": two})

    assert (caught.value.limit, len(model.calls)) == ("input_tokens", 2)


# --- settings -------------------------------------------------------------------------------


def test_run_settings_come_from_the_config() -> None:
    model = FakeChatModel(responder=failing(TimeoutError(), TimeoutError()))
    built = structure(model, config={"retry": {"max_retries": 1, "initial_delay": 0.001}})

    with pytest.raises(StepFailedError):
        built.run({TaskGreet: {"name": "Ada"}})

    assert len(model.calls) == 2


def test_wrong_run_settings_in_the_config_are_reported_together() -> None:
    with pytest.raises(StructureError) as caught:
        RunStructure({"call_timeout": 0, "retry": {"max_retry": 3}, "deadlin": 5})

    assert [d.message for d in caught.value.diagnostics] == [
        "Unknown setting 'deadlin'",
        "retry has no setting 'max_retry'; its settings are 'classifier', 'clock', "
        "'initial_delay', 'jitter', 'max_delay', 'max_retries', 'max_wait', 'multiplier', "
        "'sleep', 'transient_errors'",
        "call_timeout must be a number of seconds above 0 or None, got 0",
    ]
    assert caught.value.diagnostics[0].hint == "did you mean 'deadline'?"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param(
            {"max_concurrency": 0},
            "max_concurrency must be at least 1, got 0",
            id="concurrency",
        ),
        pytest.param(
            {"deadline": -1},
            "deadline must be a number of seconds above 0 or None, got -1",
            id="deadline",
        ),
        pytest.param(
            {"usage_limits": UsageLimits(calls=0)},
            "usage_limits: calls must be a whole number of at least 1 or None, got 0",
            id="limits",
        ),
        pytest.param(
            {"retry": RetryPolicy(multiplier=0.5)},
            "retry: multiplier must be at least 1, got 0.5",
            id="retry",
        ),
    ],
)
def test_a_wrong_run_setting_fails_before_any_call(
    options: dict[str, object], message: str
) -> None:
    model = FakeChatModel()

    with pytest.raises(ExecutionError) as caught:
        structure(model).run({TaskGreet: {"name": "Ada"}}, **options)  # type: ignore[arg-type]

    assert str(caught.value) == (
        f"{message}\n  hint: e.g. run(..., max_concurrency=8, call_timeout=60, "
        "retry=RetryPolicy(max_retries=5), usage_limits=UsageLimits(calls=500))"
    )
    assert model.calls == []


# --- cancellation -------------------------------------------------------------------------


def test_cancelling_arun_cancels_the_calls_in_flight() -> None:
    model = FakeChatModel(latency=10.0)

    async def main() -> asyncio.CancelledError:
        task = asyncio.create_task(structure(model, TaskCatalogue).arun(catalogue_inputs(3)))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError) as caught:
            await task
        return caught.value

    begin = time.monotonic()
    error = asyncio.run(main())

    assert time.monotonic() - begin < 2.0
    assert len(model.calls) == 3
    assert error.__notes__ == [
        "LangTree: the run was cancelled after 0 model call(s), 0 of them with a usable answer"
    ]


class TaskRate(TreeNode):
    """
    ! resample(3)
    Rate the text.
    """

    text: str
    rating: str = Field(description="One word.")


def test_a_permanent_failure_of_one_sample_cancels_the_others() -> None:
    def latency(request: FakeRequest) -> float:
        return 0.0 if len(model.calls) == 1 else 10.0

    def respond(request: FakeRequest) -> ResponderResult:
        raise UnauthorizedError("no access")

    model = FakeChatModel(responder=respond, latency=latency)
    begin = time.monotonic()

    with pytest.raises(StepFailedError) as caught:
        structure(model, TaskRate).run({TaskRate: {"text": "Fine."}})

    assert time.monotonic() - begin < 3.0
    assert (caught.value.kind, caught.value.sample, len(model.calls)) == ("permanent", 1, 3)
    assert "for 'task.rate' (sample 1 of 3) with an error" in str(caught.value)


def test_a_model_that_answers_in_text_instead_of_calling_the_tool_is_told_how_to_fix() -> None:
    model = FakeChatModel(responder=lambda request: "Hello, Ada!")

    with pytest.raises(StepFailedError) as caught:
        greet(model, max_retries=0)

    assert str(caught.value) == (
        "Step 'task.greet:greeting' gave no valid output for 'task.greet' in 1 attempt(s); "
        "the last error:\n- the answer held no tool call, only text: 'Hello, Ada!'\n"
        "  hint: the model answered in text instead of calling the tool: servers that ignore "
        "tool_choice (llama.cpp, Ollama) need ModelConfig(model, method='json_schema')"
    )
