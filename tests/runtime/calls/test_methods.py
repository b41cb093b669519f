"""Structured-output methods: which one each model gets, how answers are read, wrappers.

Every model is injected through ``LLMProvider``; the small chat models below stand for
provider models with other abilities (no ``bind_tools``, native JSON schema output) and
record what they were sent.
"""

import enum
from collections.abc import Callable
from typing import Any, Literal

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import ConfigurableField, Runnable, RunnableLambda
from pydantic import Field

from langtree import ExecutionError, RunStructure, TreeNode
from langtree.prompts._json_form import add_instructions, asks_for_json, json_instructions
from langtree.runtime import LLMProvider, MethodChoice, ModelConfig, RunResult
from langtree.runtime.calls._methods import (
    Method,
    StructuredBinding,
    bind_structured,
    resolve_method,
)
from langtree.runtime.calls._replies import answered_by, read_reply
from langtree.testing import FakeChatModel, offline_model
from langtree.testing._fake_model import FakeRequest, ResponderResult

METHODS: list[Method] = ["function_calling", "json_schema", "json_mode"]

SCHEMA = {
    "title": "Answer",
    "type": "object",
    "properties": {"a": {"type": "string"}},
    "required": ["a"],
}


class TaskGreet(TreeNode):
    """Greet the person by name."""

    name: str = Field(description="Who to greet.")
    greeting: str = Field(description="One friendly sentence.")


class Mood(enum.Enum):
    HAPPY = "happy"
    SAD = "sad"


class Verse(TreeNode):
    """Write one verse of the poem."""

    topic: str
    text: str = Field(description="One line.")
    mood: Mood = Field(description="The verse's mood.")


class TaskPoem(TreeNode):
    """Write a poem."""

    title: str = Field(description="A title.")
    verses: list[Verse] = Field(default=[], description="The verses.")


@offline_model
class Scripted(BaseChatModel):
    """A chat model without ``bind_tools`` or its own ``with_structured_output``: it gives
    ``replies`` in turn (the last one again once they run out) and records what it got."""

    replies: list[AIMessage] = Field(default_factory=lambda: [AIMessage(content="{}")])
    sent: list[list[BaseMessage]] = Field(default_factory=list)
    received: list[dict[str, object]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, *args: Any, **kwargs: Any
    ) -> ChatResult:
        self.sent.append(messages)
        self.received.append({"stop": stop, **kwargs})
        reply = self.replies[min(len(self.sent), len(self.replies)) - 1]
        return ChatResult(generations=[ChatGeneration(message=reply)])


class NativeJson(Scripted):
    """A chat model whose ``with_structured_output`` defaults to ``"json_schema"``."""

    def with_structured_output(
        self,
        schema: dict[str, Any] | type,
        *,
        method: Literal["function_calling", "json_schema", "json_mode"] = "json_schema",
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[Any, Any]:
        raise NotImplementedError


class KwargsFake(FakeChatModel):
    """A FakeChatModel that records the keyword arguments each call got."""

    received: list[dict[str, object]] = Field(default_factory=list)

    async def _agenerate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, *args: Any, **kwargs: Any
    ) -> ChatResult:
        self.received.append({"stop": stop, **kwargs})
        return await super()._agenerate(messages, stop, *args, **kwargs)


def replies(*answers: ResponderResult) -> Callable[[FakeRequest], ResponderResult]:
    queue = list(answers)
    return lambda request: queue.pop(0)


def fails_first(error: Exception) -> Callable[[FakeRequest], ResponderResult]:
    """A responder that raises ``error`` on its first call and greets afterwards."""
    calls: list[FakeRequest] = []

    def respond(request: FakeRequest) -> ResponderResult:
        calls.append(request)
        if len(calls) == 1:
            raise error
        return {"greeting": "Hello, Ada!"}

    return respond


def raises(request: FakeRequest) -> ResponderResult:
    raise ValueError("the primary model is down")


def greet(model: Runnable[Any, Any], method: MethodChoice = "auto") -> RunResult:
    structure = RunStructure(provider=LLMProvider({"default": ModelConfig(model, method=method)}))
    structure.add(TaskGreet)
    return structure.run({TaskGreet: {"name": "Ada"}})


def greet_built(model: Runnable[Any, Any], configurable: dict[str, object]) -> RunResult:
    """A greeting run through ``structure.build()``, with the config's ``configurable``."""
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskGreet)
    result: RunResult = structure.build().invoke(
        {TaskGreet: {"name": "Ada"}}, config={"configurable": configurable}
    )
    return result


# --- resolve_method -----------------------------------------------------------------------


def fake() -> FakeChatModel:
    return FakeChatModel()


AUTO_CASES = [
    pytest.param(fake, "function_calling", id="fake-chat-model"),
    pytest.param(NativeJson, "json_schema", id="native-json-schema-default"),
    pytest.param(Scripted, "json_mode", id="no-bind-tools"),
    pytest.param(lambda: RunnableLambda(lambda messages: messages), "json_mode", id="opaque"),
    pytest.param(lambda: fake().with_retry(), "function_calling", id="with-retry"),
    pytest.param(lambda: fake().with_fallbacks([Scripted()]), "function_calling", id="fallbacks"),
    pytest.param(
        lambda: NativeJson().with_fallbacks([fake()]), "json_schema", id="fallbacks-first"
    ),
    pytest.param(lambda: fake().bind(stop=["END"]), "function_calling", id="bind"),
    pytest.param(lambda: fake().with_config(tags=["x"]), "function_calling", id="with-config"),
    pytest.param(lambda: Scripted().bind(stop=["END"]), "json_mode", id="bind-no-tools"),
    pytest.param(
        lambda: fake().configurable_fields(model_name=ConfigurableField(id="name")),
        "function_calling",
        id="configurable-fields",
    ),
    pytest.param(
        lambda: fake().configurable_alternatives(
            ConfigurableField(id="model"), default_key="a", b=NativeJson()
        ),
        "function_calling",
        id="configurable-alternatives",
    ),
    pytest.param(
        lambda: RunnableLambda(lambda messages: messages).with_retry(),
        "json_mode",
        id="opaque-with-retry",
    ),
]


@pytest.mark.parametrize(("build", "method"), AUTO_CASES)
def test_auto_resolves_per_model_kind(build: Callable[[], Runnable[Any, Any]], method: str) -> None:
    assert resolve_method(build(), "auto") == method


# Building ChatOpenAI probes socket options on a throwaway socket (never connected), which
# pytest-socket refuses and langchain-openai tolerates.
OPENAI_PROBE = pytest.mark.filterwarnings("ignore:A test tried to use socket.socket")


@OPENAI_PROBE
def test_auto_takes_chat_openai_native_json_schema() -> None:
    openai = pytest.importorskip("langchain_openai")
    model = openai.ChatOpenAI(base_url="http://127.0.0.1:9/v1", api_key="x", model="m")

    assert resolve_method(model, "auto") == "json_schema"


@OPENAI_PROBE
def test_chat_openai_json_schema_binds_response_format() -> None:
    openai = pytest.importorskip("langchain_openai")
    model = openai.ChatOpenAI(base_url="http://127.0.0.1:9/v1", api_key="x", model="m")

    binding = bind_structured(model, SCHEMA)

    assert binding.runnable.kwargs["response_format"] == {  # type: ignore[attr-defined]
        "type": "json_schema",
        "json_schema": {
            "name": "Answer",
            "strict": False,
            "schema": {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "required": ["a"],
            },
        },
    }


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    "build",
    [
        pytest.param(fake, id="fake-chat-model"),
        pytest.param(Scripted, id="no-bind-tools"),
        pytest.param(lambda: RunnableLambda(lambda messages: messages), id="opaque"),
    ],
)
def test_explicit_choice_passes_through(
    build: Callable[[], Runnable[Any, Any]], method: Method
) -> None:
    assert resolve_method(build(), method) == method


@pytest.mark.parametrize(
    ("method", "tool_name", "has_instructions"),
    [
        pytest.param("function_calling", "Answer", False, id="function-calling"),
        pytest.param("json_schema", None, False, id="json-schema"),
        pytest.param("json_mode", None, True, id="json-mode"),
    ],
)
def test_binding_names_the_tool_or_carries_the_instructions(
    method: Method, tool_name: str | None, has_instructions: bool
) -> None:
    binding = bind_structured(FakeChatModel(), SCHEMA, method)

    assert (binding.method, binding.tool_name, binding.instructions) == (
        method,
        tool_name,
        json_instructions(SCHEMA) if has_instructions else None,
    )


# --- Methods a model does not offer ---------------------------------------------------------


def test_json_schema_on_a_model_without_it_fails_at_run_start() -> None:
    model = Scripted()

    with pytest.raises(ExecutionError) as caught:
        greet(model, "json_schema")

    assert (str(caught.value), model.sent) == (
        "'Scripted' does not offer structured output with method 'json_schema': "
        "with_structured_output is not implemented for this model.\n"
        "  hint: choose another method; 'json_mode' works with every chat model: "
        "LLMProvider({'key': ModelConfig(model, method='json_mode')})",
        [],
    )


@pytest.mark.allow_model_requests  # LangTree cannot see into a RunnableLambda
@pytest.mark.parametrize(
    "method",
    [
        pytest.param("function_calling", id="function-calling"),
        pytest.param("json_schema", id="json-schema"),
    ],
)
def test_opaque_runnable_takes_only_json_mode(method: Method) -> None:
    calls: list[object] = []
    opaque: Runnable[Any, None] = RunnableLambda(lambda messages: calls.append(messages))

    with pytest.raises(ExecutionError) as caught:
        greet(opaque, method)

    assert (str(caught.value), calls) == (
        f"A 'RunnableLambda' cannot be bound to a schema with method {method!r}\n"
        "  hint: use method='json_mode' (the schema goes into the prompt), the default for "
        "runnables that are not chat models",
        [],
    )


def test_function_calling_on_a_model_without_tools_fails_at_run_start() -> None:
    with pytest.raises(ExecutionError, match="does not offer structured output with method"):
        greet(Scripted(), "function_calling")


# --- Instructions in the prompt (json_mode) -------------------------------------------------


def test_json_instructions_show_the_form_of_the_answer() -> None:
    schema = {"title": "Ä", "type": "object", "properties": {"ä": {"type": "string"}}}

    assert json_instructions(schema) == (
        'Answer with one JSON object, and nothing else, in this form:\n{"ä": "<text>"}'
    )


ADDED = [
    pytest.param(
        (SystemMessage("Be brief."), HumanMessage("Question.")),
        (SystemMessage("Be brief."), HumanMessage("Question.\n\nTEXT")),
        id="last-human-message",
    ),
    pytest.param(
        (HumanMessage("First."), AIMessage("Answer."), HumanMessage("Second.")),
        (HumanMessage("First."), AIMessage("Answer."), HumanMessage("Second.\n\nTEXT")),
        id="only-the-last-human-message",
    ),
    pytest.param(
        (HumanMessage("Question."), AIMessage("Answer.")),
        (HumanMessage("Question.\n\nTEXT"), AIMessage("Answer.")),
        id="human-message-before-an-ai-message",
    ),
    pytest.param(
        (SystemMessage("Be brief."), HumanMessage("")),
        (SystemMessage("Be brief."), HumanMessage("TEXT")),
        id="empty-human-message",
    ),
    pytest.param(
        (SystemMessage("Be brief."),),
        (SystemMessage("Be brief."), HumanMessage("TEXT")),
        id="no-human-message",
    ),
    pytest.param(
        (HumanMessage([{"type": "text", "text": "Look."}]),),
        (HumanMessage([{"type": "text", "text": "Look."}, {"type": "text", "text": "TEXT"}]),),
        id="content-blocks",
    ),
]


@pytest.mark.parametrize(("messages", "expected"), ADDED)
def test_add_instructions_extends_the_last_human_message(
    messages: tuple[BaseMessage, ...], expected: tuple[BaseMessage, ...]
) -> None:
    assert add_instructions(messages, "TEXT") == expected


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        pytest.param(f"Write it.\n\n{json_instructions(SCHEMA)}\n\nThanks.", True, id="asked"),
        pytest.param("Write it.", False, id="not-asked"),
    ],
)
def test_asks_for_json_finds_the_instructions(text: str, asked: bool) -> None:
    assert asks_for_json(text) is asked


# --- Reading answers ------------------------------------------------------------------------

TOOL = StructuredBinding(runnable=FakeChatModel(), method="function_calling", tool_name="Answer")
JSON = StructuredBinding(runnable=FakeChatModel(), method="json_mode", instructions="JSON!")


def tool_call(name: str, args: dict[str, object]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": "call_1", "type": "tool_call"}


READINGS = [
    pytest.param(
        TOOL,
        AIMessage(content="", tool_calls=[tool_call("Answer", {"a": "x"})]),
        ({"a": "x"}, None),
        id="tool-call",
    ),
    pytest.param(
        TOOL,
        AIMessage(
            content="",
            tool_calls=[tool_call("Other", {"a": "x"}), tool_call("Answer", {"a": "y"})],
        ),
        ({"a": "y"}, None),
        id="first-call-of-the-tool",
    ),
    pytest.param(
        TOOL,
        AIMessage(content="", tool_calls=[tool_call("Other", {}), tool_call("Third", {})]),
        (None, "the answer called 'Other', 'Third', not 'Answer'"),
        id="tool-call-of-another-name",
    ),
    pytest.param(
        TOOL,
        AIMessage(
            content="",
            invalid_tool_calls=[
                {"type": "invalid_tool_call", "name": "Answer", "args": "{oops", "id": "1"}
            ],
        ),
        (None, "the tool call's arguments are not valid JSON: '{oops'"),
        id="invalid-tool-call",
    ),
    pytest.param(
        TOOL,
        AIMessage(
            content="",
            additional_kwargs={
                "tool_calls": [
                    {
                        "id": "1",
                        "type": "function",
                        "function": {"name": "Answer", "arguments": '{"a": "z"}'},
                    }
                ]
            },
        ),
        ({"a": "z"}, None),
        id="provider-tool-calls",
    ),
    pytest.param(
        TOOL,
        AIMessage(content="I would  rather\nnot."),
        (None, "the answer held no tool call, only text: 'I would rather not.'"),
        id="text-instead-of-a-tool-call",
    ),
    pytest.param(
        TOOL,
        AIMessage(content=" "),
        (None, "the answer held no structured output (no tool call)"),
        id="empty-instead-of-a-tool-call",
    ),
    pytest.param(
        TOOL,
        AIMessage(content="x" * 130),
        (None, f"the answer held no tool call, only text: '{'x' * 119}…'"),
        id="long-text-is-cut",
    ),
    pytest.param(JSON, AIMessage(content='{"a": "x"}'), ({"a": "x"}, None), id="json-text"),
    pytest.param(
        JSON,
        AIMessage(content='Here it is:\n```json\n{"a": "x"}\n```'),
        ({"a": "x"}, None),
        id="fenced-json",
    ),
    pytest.param(
        JSON,
        AIMessage(content=[{"type": "text", "text": '{"a": "x"}'}]),
        ({"a": "x"}, None),
        id="json-in-content-blocks",
    ),
    pytest.param(
        JSON,
        AIMessage(content="[1, 2]"),
        (None, "the answer is JSON but not an object: '[1, 2]'"),
        id="json-array",
    ),
    pytest.param(
        JSON,
        AIMessage(content="Sure, here you go."),
        (None, "the answer is not a JSON object: 'Sure, here you go.'"),
        id="not-json",
    ),
    pytest.param(
        JSON,
        AIMessage(content='{"a": "x"}', tool_calls=[tool_call("Answer", {"a": "y"})]),
        ({"a": "x"}, None),
        id="json-mode-reads-the-text",
    ),
    pytest.param(
        JSON,
        AIMessage(content="", additional_kwargs={"parsed": {"a": "p"}}),
        ({"a": "p"}, None),
        id="parsed-in-additional-kwargs",
    ),
    pytest.param(
        TOOL,
        AIMessage(content="", additional_kwargs={"parsed": {"a": "p"}}),
        ({"a": "p"}, None),
        id="parsed-in-additional-kwargs-with-a-tool",
    ),
    pytest.param(JSON, '{"a": "x"}', ({"a": "x"}, None), id="str-reply"),
    pytest.param(
        JSON, "no JSON", (None, "the answer is not a JSON object: 'no JSON'"), id="str-not-json"
    ),
    pytest.param(
        TOOL,
        {"raw": AIMessage(content=""), "parsed": {"a": "x"}, "parsing_error": None},
        ({"a": "x"}, None),
        id="include-raw-dict",
    ),
    pytest.param(
        TOOL,
        {"raw": AIMessage(content="Only text."), "parsed": None, "parsing_error": None},
        (None, "the answer held no tool call, only text: 'Only text.'"),
        id="include-raw-dict-without-output",
    ),
    pytest.param(
        JSON,
        42,
        (None, "the model returned 'int', not a message"),
        id="not-a-message",
    ),
]


@pytest.mark.parametrize(("binding", "reply", "expected"), READINGS)
def test_read_reply(
    binding: StructuredBinding, reply: object, expected: tuple[object, ...]
) -> None:
    reading = read_reply(binding, reply)

    assert (reading.arguments, reading.problem) == expected


def test_read_reply_keeps_the_parsers_error() -> None:
    error = ValueError("bad arguments")

    reading = read_reply(
        TOOL, {"raw": AIMessage(content=""), "parsed": None, "parsing_error": error}
    )

    assert reading.problem is error


@pytest.mark.parametrize(
    ("reply", "message", "text"),
    [
        pytest.param(AIMessage(content="{}"), True, None, id="message"),
        pytest.param({"raw": AIMessage(content="{}"), "parsed": {}}, True, None, id="raw-dict"),
        pytest.param("{}", False, "{}", id="str"),
        pytest.param(42, False, "42", id="other"),
    ],
)
def test_read_reply_keeps_the_message_or_the_text(
    reply: object, message: bool, text: str | None
) -> None:
    reading = read_reply(JSON, reply)

    assert (reading.message is not None, reading.text) == (message, text)


@pytest.mark.parametrize(
    ("metadata", "truncated"),
    [
        pytest.param({"finish_reason": "length"}, True, id="openai-length"),
        pytest.param({"stop_reason": "max_tokens"}, True, id="anthropic-max-tokens"),
        pytest.param({"done_reason": "length"}, True, id="ollama-length"),
        pytest.param({"finish_reason": "MAX_TOKENS"}, True, id="gemini-max-tokens"),
        pytest.param({"finish_reason": "stop"}, False, id="stop"),
        pytest.param({"stop_reason": "end_turn"}, False, id="end-turn"),
        pytest.param({}, False, id="no-metadata"),
    ],
)
def test_read_reply_sees_an_answer_cut_off(metadata: dict[str, object], truncated: bool) -> None:
    message = AIMessage(content='{"a": "x', response_metadata=metadata)

    assert read_reply(JSON, message).truncated is truncated


def test_read_reply_sees_a_raw_dict_cut_off() -> None:
    raw = AIMessage(content="", response_metadata={"finish_reason": "length"})

    assert read_reply(TOOL, {"raw": raw, "parsed": None, "parsing_error": None}).truncated


@pytest.mark.parametrize(
    ("metadata", "name"),
    [
        pytest.param({"model_name": "gpt-x"}, "gpt-x", id="model-name"),
        pytest.param({"model": "llama"}, "llama", id="model"),
        pytest.param({"model_id": "bedrock"}, "bedrock", id="model-id"),
        pytest.param({"model_name": "a", "model": "b"}, "a", id="model-name-first"),
        pytest.param({"model_name": 7}, None, id="not-a-string"),
        pytest.param({}, None, id="not-said"),
    ],
)
def test_answered_by_reads_the_response_metadata(
    metadata: dict[str, object], name: str | None
) -> None:
    assert answered_by(AIMessage(content="", response_metadata=metadata)) == name


def test_answered_by_without_a_message_is_none() -> None:
    assert answered_by(None) is None


# --- Whole runs, one per method -------------------------------------------------------------

GREET_HUMAN = (
    "# Greet\n\nGreet the person by name.\n\n## Greeting\n\nOne friendly sentence.\n\n"
    "# Context\n\n## Name\n\nAda\n\n# Output\n\nWrite Greeting.\n"
)

GREET_INSTRUCTED = (
    "# Greet\n\nGreet the person by name.\n\n## Greeting\n\nOne friendly sentence.\n\n"
    "# Context\n\n## Name\n\nAda\n\n# Output\n\nWrite Greeting.\n\n"
    "Answer with one JSON object, and nothing else, in this form:\n"
    '{"greeting": "<text>"}'
)

GREETING_PARAMETERS = {
    "properties": {"greeting": {"description": "One friendly sentence.", "type": "string"}},
    "required": ["greeting"],
    "type": "object",
}


@pytest.mark.parametrize("method", METHODS)
def test_each_method_gives_the_same_greeting(method: Method) -> None:
    result = greet(FakeChatModel(replies({"greeting": "Hello, Ada!"})), method)

    assert result[TaskGreet] == TaskGreet(name="Ada", greeting="Hello, Ada!")


@pytest.mark.parametrize("method", METHODS)
def test_each_method_is_how_the_model_is_asked(method: Method) -> None:
    model = FakeChatModel()

    greet(model, method)

    assert [call.method for call in model.calls] == [method]


def poem_answer(request: FakeRequest) -> ResponderResult:
    if request.fields == ("title",):
        return {"title": "Weather"}
    if request.fields == ("text",):
        return {"text": f"A line for {request.node_path}."}
    return {"mood": "sad" if request.node_path == "task.poem.verses[1]" else "happy"}


@pytest.mark.parametrize("method", METHODS)
def test_each_method_fills_a_nested_node_list_with_enums(method: Method) -> None:
    model = FakeChatModel(poem_answer)
    structure = RunStructure(provider=LLMProvider({"default": ModelConfig(model, method=method)}))
    structure.add(TaskPoem)

    result = structure.run({TaskPoem: {"verses": [{"topic": "sun"}, {"topic": "rain"}]}})

    assert result[TaskPoem].model_dump() == {
        "title": "Weather",
        "verses": [
            {"topic": "sun", "text": "A line for task.poem.verses[0].", "mood": Mood.HAPPY},
            {"topic": "rain", "text": "A line for task.poem.verses[1].", "mood": Mood.SAD},
        ],
    }


def test_json_mode_appends_the_instructions_to_the_last_human_message() -> None:
    model = FakeChatModel()

    greet(model, "json_mode")

    assert model.calls[0].messages[-1].content == GREET_INSTRUCTED


def test_json_mode_trace_shows_the_instructions() -> None:
    model = FakeChatModel()

    result = greet(model, "json_mode")

    assert result.trace[0].messages == model.calls[0].messages


@pytest.mark.parametrize(
    "method",
    [
        pytest.param("function_calling", id="function-calling"),
        pytest.param("json_schema", id="json-schema"),
    ],
)
def test_other_methods_leave_the_prompt_alone(method: Method) -> None:
    model = FakeChatModel()

    greet(model, method)

    assert model.calls[0].messages[-1].content == GREET_HUMAN


@pytest.mark.parametrize(
    ("method", "tool_name"),
    [
        pytest.param("function_calling", "TaskGreet_greeting", id="function-calling"),
        pytest.param("json_schema", None, id="json-schema"),
    ],
)
def test_the_call_carries_the_schema(method: Method, tool_name: str | None) -> None:
    model = FakeChatModel()

    greet(model, method)

    assert (model.calls[0].schema, model.calls[0].tool_name) == (GREETING_PARAMETERS, tool_name)


@pytest.mark.parametrize(
    ("method", "raw_output"),
    [
        pytest.param("function_calling", '{"greeting": "Hello, Ada!"}', id="function-calling"),
        pytest.param("json_schema", '{"greeting":"Hello, Ada!"}', id="json-schema"),
        pytest.param("json_mode", '{"greeting":"Hello, Ada!"}', id="json-mode"),
    ],
)
def test_trace_records_the_raw_output_and_who_answered(method: Method, raw_output: str) -> None:
    result = greet(FakeChatModel(replies({"greeting": "Hello, Ada!"})), method)

    record = result.trace[0]
    assert (record.raw_output, record.answered_by, record.error, record.truncated) == (
        raw_output,
        "langtree-fake",
        None,
        False,
    )


@pytest.mark.parametrize(
    "method",
    [
        pytest.param("function_calling", id="function-calling"),
        pytest.param("json_schema", id="json-schema"),
        pytest.param("json_mode", id="json-mode"),
    ],
)
def test_a_retry_asks_for_the_same_schema(method: Method) -> None:
    model = FakeChatModel(replies({"greeting": 5}, {"greeting": "Hello, Ada!"}))

    greet(model, method)

    assert [call.fields for call in model.calls] == [("greeting",), ("greeting",)]


def test_json_mode_on_a_model_without_json_mode_sends_the_prompt_only() -> None:
    model = Scripted(replies=[AIMessage(content='{"greeting": "Hi, Ada."}')])

    result = greet(model, "json_mode")

    assert (result[TaskGreet].greeting, model.sent[0][-1].content, model.received) == (
        "Hi, Ada.",
        GREET_INSTRUCTED,
        [{"stop": None}],
    )


# --- Wrappers around the model --------------------------------------------------------------


def test_with_retry_retries_inside_one_traced_call() -> None:
    model = FakeChatModel(fails_first(ValueError("flaky")))

    result = greet(model.with_retry(stop_after_attempt=2, wait_exponential_jitter=False))

    assert (result[TaskGreet].greeting, len(result.trace), len(model.calls)) == (
        "Hello, Ada!",
        1,
        2,
    )


def test_bind_keeps_its_keyword_arguments() -> None:
    model = KwargsFake()

    greet(model.bind(temperature=0.1, stop=["END"]))

    received = model.received[0]
    assert (received["temperature"], received["stop"], received["tool_choice"]) == (
        0.1,
        ["END"],
        "TaskGreet_greeting",
    )


def test_bind_keeps_its_keyword_arguments_in_json_mode() -> None:
    model = Scripted(replies=[AIMessage(content='{"greeting": "Hi, Ada."}')])

    greet(model.bind(temperature=0.1, stop=["END"]))

    assert model.received == [{"stop": ["END"], "temperature": 0.1}]


def test_fallback_answers_when_the_primary_fails() -> None:
    primary = FakeChatModel(raises, model_name="primary")
    backup = FakeChatModel(model_name="backup")

    result = greet(primary.with_fallbacks([backup]))

    assert (result.trace[0].answered_by, len(result.trace)) == ("backup", 1)


def test_fallback_is_bound_with_the_primarys_method() -> None:
    primary = FakeChatModel(raises, model_name="primary")
    backup = FakeChatModel(model_name="backup")

    greet(primary.with_fallbacks([backup]))

    assert [(call.method, call.tool_name) for call in backup.calls] == [
        ("function_calling", "TaskGreet_greeting")
    ]


def alternatives(first: FakeChatModel, second: FakeChatModel) -> Runnable[Any, Any]:
    """``first``, or ``second`` when the config's ``"model"`` is ``"b"``."""
    field = ConfigurableField(id="model")
    return first.configurable_alternatives(field, default_key="a", b=second)


def test_configurable_alternative_is_chosen_per_call() -> None:
    first, second = FakeChatModel(model_name="a"), FakeChatModel(model_name="b")

    result = greet_built(alternatives(first, second), {"model": "b"})

    assert (result.trace[0].answered_by, len(first.calls), len(second.calls)) == ("b", 0, 1)


def test_configurable_alternative_default_is_used_without_config() -> None:
    first, second = FakeChatModel(model_name="a"), FakeChatModel(model_name="b")

    result = greet_built(alternatives(first, second), {})

    assert (result.trace[0].answered_by, len(first.calls), len(second.calls)) == ("a", 1, 0)


def test_configurable_field_is_set_per_call() -> None:
    model = FakeChatModel(model_name="a")
    configurable = model.configurable_fields(model_name=ConfigurableField(id="name"))

    result = greet_built(configurable, {"name": "renamed"})

    assert (result[TaskGreet].greeting, result.trace[0].answered_by, model.calls) == (
        "greeting 1",
        "renamed",
        [],
    )


@pytest.mark.allow_model_requests  # LangTree cannot see into a RunnableLambda
def test_opaque_runnable_gets_the_schema_in_the_prompt() -> None:
    model = FakeChatModel(replies({"greeting": "Hello, Ada!"}))

    result = greet(RunnableLambda(lambda messages: model.invoke(messages)))

    assert (result[TaskGreet].greeting, model.calls[0].method, model.calls[0].text) == (
        "Hello, Ada!",
        "json_mode",
        f"{model.calls[0].messages[0].text}\n\n{GREET_INSTRUCTED}",
    )


@pytest.mark.allow_model_requests  # LangTree cannot see into a RunnableLambda
def test_opaque_runnable_may_return_text() -> None:
    result = greet(RunnableLambda(lambda messages: '{"greeting": "Hi."}'))

    assert (result[TaskGreet].greeting, result.trace[0].raw_output) == (
        "Hi.",
        '{"greeting": "Hi."}',
    )
