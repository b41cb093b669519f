"""Calls that no callback handler sees skip LangChain's run bookkeeping (``DirectCall``);
calls that a handler sees go through ``ainvoke`` and send their events."""

import asyncio
from typing import Any
from uuid import UUID

import pytest
from langchain_core.caches import InMemoryCache
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.rate_limiters import BaseRateLimiter
from langchain_core.runnables import Runnable
from pydantic import Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.prompts._schema_text import tool_schema
from langtree.runtime import RunResult
from langtree.runtime.calls._metadata import NODE_PATH_KEY
from langtree.runtime.calls._methods import DirectCall, bind_structured
from langtree.testing import FakeChatModel


class TaskGreet(TreeNode):
    """Greet the person, then say goodbye."""

    name: str = Field(description="Who to greet.")
    greeting: str = Field(description="One friendly sentence.")
    farewell: str = Field(description="One closing sentence.")


SCHEMA = tool_schema(TaskGreet)
MESSAGES: list[BaseMessage] = [SystemMessage("Be kind."), HumanMessage("Greet Ada.")]
CONFIG: Any = {"metadata": {NODE_PATH_KEY: "task.greet"}, "run_name": "task.greet: greeting"}


class ChatEvents(BaseCallbackHandler):
    """The chat model runs a handler sees start and end, with their node paths."""

    def __init__(self) -> None:
        self.started: list[object] = []
        self.ended: list[UUID] = []

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: Any, *, run_id: UUID, **kwargs: Any
    ) -> None:
        self.started.append((kwargs.get("metadata") or {}).get(NODE_PATH_KEY))

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.ended.append(run_id)


class CountingLimiter(BaseRateLimiter):
    """A rate limiter that never waits and counts what it was asked."""

    def __init__(self) -> None:
        self.asked = 0

    def acquire(self, *, blocking: bool = True) -> bool:
        self.asked += 1
        return True

    async def aacquire(self, *, blocking: bool = True) -> bool:
        self.asked += 1
        return True


class OwnAinvoke(FakeChatModel):
    """A chat model whose ``ainvoke`` is its own."""

    async def ainvoke(self, *args: Any, **kwargs: Any) -> Any:
        return await super().ainvoke(*args, **kwargs)


def run(model: BaseChatModel) -> RunResult:
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskGreet)
    return structure.run({TaskGreet: {"name": "Ada"}})


def direct(model: BaseChatModel) -> DirectCall:
    call = bind_structured(model, SCHEMA, "function_calling").direct
    assert call is not None
    return call


def test_a_chat_model_bound_by_bind_tools_has_a_direct_call() -> None:
    call = direct(FakeChatModel())

    assert sorted(call.options) == ["tool_choice", "tools"]
    assert call.stop is None


def test_bound_stop_sequences_are_passed_as_stop() -> None:
    runnable = FakeChatModel().bind(stop=["END"], temperature=0)

    call = DirectCall.of(runnable)

    assert call is not None
    assert (call.stop, dict(call.options)) == (["END"], {"temperature": 0})


@pytest.mark.parametrize(
    "wrap",
    [
        pytest.param(lambda model: model.bind(stop=["END"]), id="bind-around-the-model"),
        pytest.param(lambda model: model.with_retry(), id="with-retry"),
        pytest.param(lambda model: model.with_config(tags=["mine"]), id="with-config"),
        pytest.param(lambda model: model.with_fallbacks([FakeChatModel()]), id="fallbacks"),
    ],
)
def test_other_wrappers_are_called_through_ainvoke(wrap: Any) -> None:
    wrapped: Runnable[Any, Any] = wrap(FakeChatModel())

    assert bind_structured(wrapped, SCHEMA, "function_calling").direct is None


def test_a_model_with_its_own_ainvoke_is_called_through_it() -> None:
    assert bind_structured(OwnAinvoke(), SCHEMA, "function_calling").direct is None


@pytest.mark.parametrize(
    ("model", "messages", "applies"),
    [
        pytest.param(FakeChatModel(), MESSAGES, True, id="text"),
        pytest.param(FakeChatModel(callbacks=[ChatEvents()]), MESSAGES, False, id="callbacks"),
        pytest.param(FakeChatModel(verbose=True), MESSAGES, False, id="verbose"),
        pytest.param(
            FakeChatModel(),
            [HumanMessage(content=[{"type": "text", "text": "Greet Ada."}])],
            False,
            id="content-blocks",
        ),
    ],
)
def test_a_direct_call_applies_to_text_for_a_model_without_handlers(
    model: FakeChatModel, messages: list[BaseMessage], applies: bool
) -> None:
    assert direct(model).applies(messages) is applies


def test_a_direct_call_answers_as_ainvoke_does() -> None:
    model = FakeChatModel(report_usage=True)
    binding = bind_structured(model, SCHEMA, "function_calling")
    assert binding.direct is not None

    through = asyncio.run(binding.runnable.ainvoke(list(MESSAGES), config=CONFIG))
    skipped = asyncio.run(binding.direct.ainvoke(list(MESSAGES), CONFIG))

    assert isinstance(through, AIMessage)
    assert isinstance(skipped, AIMessage)
    fields = ("content", "tool_calls", "invalid_tool_calls", "usage_metadata", "response_metadata")
    assert [getattr(skipped, name) for name in fields] == [
        getattr(through, name) for name in fields
    ]
    assert [message.id and message.id[:7] for message in (through, skipped)] == ["lc_run-"] * 2
    first, second = model.calls
    assert (first.node_path, first.tool_name) == (second.node_path, second.tool_name)
    assert second.node_path == "task.greet"


def test_an_unobserved_run_uses_the_models_llm_cache() -> None:
    model = FakeChatModel(cache=InMemoryCache())

    first, second = run(model), run(model)

    assert second[TaskGreet] == first[TaskGreet]
    assert len(model.calls) == 2


def test_an_unobserved_run_waits_for_the_models_rate_limiter() -> None:
    limiter = CountingLimiter()

    result = run(FakeChatModel(rate_limiter=limiter))

    assert limiter.asked == len(result.trace) == 2


def test_a_models_own_handler_sees_every_call_of_an_unobserved_run() -> None:
    events = ChatEvents()

    result = run(FakeChatModel(callbacks=[events]))

    assert events.started == ["task.greet", "task.greet"]
    assert len(events.ended) == len(result.trace) == 2


def test_a_handler_of_the_run_sees_every_chat_model_start_and_end() -> None:
    events = ChatEvents()
    structure = RunStructure(provider=LLMProvider({"default": FakeChatModel()}))
    structure.add(TaskGreet)

    result = structure.build().invoke({TaskGreet: {"name": "Ada"}}, config={"callbacks": [events]})

    assert events.started == ["task.greet", "task.greet"]
    assert len(events.ended) == len(result.trace) == 2


def test_observed_and_unobserved_runs_give_the_same_result_and_trace() -> None:
    structure = RunStructure(provider=LLMProvider({"default": FakeChatModel(report_usage=True)}))
    structure.add(TaskGreet)
    inputs = {TaskGreet: {"name": "Ada"}}

    observed = structure.build().invoke(inputs, config={"callbacks": [ChatEvents()]})
    unobserved = structure.run(inputs)

    assert observed[TaskGreet] == unobserved[TaskGreet]
    described = [
        [(r.node_path, r.fields, r.messages, r.usage, r.raw_output, r.answered_by) for r in trace]
        for trace in (observed.trace, unobserved.trace)
    ]
    assert described[0] == described[1]
    assert observed.usage == unobserved.usage
