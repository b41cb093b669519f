"""The model call path: the tool bound directly, with_structured_output as fallback, and
answers cut off at the output limit."""

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.output_parsers.openai_tools import JsonOutputKeyToolsParser
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableMap, RunnablePassthrough
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from langtree import RunStructure, TreeNode
from langtree.prompts._schema_text import tool_schema
from langtree.runtime import LLMProvider, RunResult
from langtree.runtime.calls._methods import bind_structured
from langtree.testing import FakeChatModel, offline_model
from langtree.testing._fake_model import ResponderResult


class TaskGreet(TreeNode):
    """Greet the person by name."""

    name: str = Field(description="Who to greet.")
    greeting: str = Field(description="One friendly sentence.")


class StructuredOnly(FakeChatModel):
    """A model without ``bind_tools`` that implements ``with_structured_output`` itself."""

    def bind_tools(self, *args: Any, **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        raise NotImplementedError

    def with_structured_output(  # type: ignore[override]
        self, schema: dict[str, Any], *, include_raw: bool = False, **kwargs: Any
    ) -> Runnable[LanguageModelInput, Any]:
        assert include_raw
        tools = FakeChatModel.bind_tools(self, [schema], tool_choice="any")
        name = convert_to_openai_tool(schema)["function"]["name"]
        parser = JsonOutputKeyToolsParser(key_name=name, first_tool_only=True)
        assign = RunnablePassthrough.assign(
            parsed=itemgetter("raw") | parser, parsing_error=lambda _: None
        )
        fallback = RunnablePassthrough.assign(parsed=lambda _: None)
        return RunnableMap(raw=tools) | assign.with_fallbacks(
            [fallback], exception_key="parsing_error"
        )


def replies(*answers: ResponderResult) -> Any:
    queue = list(answers)
    return lambda request: queue.pop(0)


def greet(model: BaseChatModel, **options: Any) -> RunResult:
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskGreet)
    return structure.run({TaskGreet: {"name": "Ada"}}, **options)


def trace_fields(result: RunResult) -> list[tuple[object, ...]]:
    return [
        (r.step_id, r.node_path, r.fields, r.attempt, r.messages, r.usage, r.raw_output, r.error)
        for r in result.trace
    ]


def test_step_is_bound_to_its_tool_by_name() -> None:
    model = FakeChatModel()
    binding = bind_structured(model, tool_schema(TaskGreet), "function_calling")
    name = binding.tool_name

    reply = binding.runnable.invoke("Hi")

    assert name == tool_schema(TaskGreet)["title"]
    assert isinstance(reply, AIMessage)
    assert reply.tool_calls[0]["name"] == name
    assert model.calls[0].tool_name == name


def test_model_without_bind_tools_is_bound_with_structured_output() -> None:
    binding = bind_structured(StructuredOnly(), tool_schema(TaskGreet), "function_calling")

    reply = binding.runnable.invoke("Hi")

    assert isinstance(reply, AIMessage)
    assert reply.tool_calls[0]["name"] == binding.tool_name


def test_both_paths_give_the_same_output_and_trace() -> None:
    answers = ({"greeting": 5}, "no tool call here", {"greeting": "Hello, Ada!"})
    direct = greet(FakeChatModel(responder=replies(*answers)))
    fallback = greet(StructuredOnly(responder=replies(*answers)))

    assert direct[TaskGreet] == fallback[TaskGreet]
    assert direct[TaskGreet].greeting == "Hello, Ada!"
    assert trace_fields(direct) == trace_fields(fallback)
    assert [r.error is None for r in direct.trace] == [False, False, True]


@offline_model
class InvalidThenValid(BaseChatModel):
    """First an invalid tool call (unparsable arguments), then a valid one."""

    sent: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "invalid-then-valid"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        return self.bind(tools=tools, **kwargs)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.sent.append(messages)
        name = kwargs["tool_choice"]
        if len(self.sent) == 1:
            message = AIMessage(
                content="",
                invalid_tool_calls=[
                    {"type": "invalid_tool_call", "name": name, "args": "{oops", "id": "1"}
                ],
                usage_metadata={"input_tokens": 3, "output_tokens": 2, "total_tokens": 5},
            )
        else:
            message = AIMessage(
                content="",
                tool_calls=[{"name": name, "args": {"greeting": "Hi, Ada."}, "id": "2"}],
            )
        return ChatResult(generations=[ChatGeneration(message=message)])


def test_invalid_tool_call_is_retried_with_feedback() -> None:
    model = InvalidThenValid()
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskGreet)

    result = structure.run({TaskGreet: {"name": "Ada"}})

    assert result[TaskGreet].greeting == "Hi, Ada."
    first = result.trace[0]
    assert (first.raw_output, first.usage) == (
        "{oops",
        {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5},
    )
    assert model.sent[1][-1].content == (
        "Your previous answer could not be used:\n"
        "- the tool call's arguments are not valid JSON: '{oops'\n\n"
        "Write Greeting again, as structured output."
    )


@offline_model
class CutOff(BaseChatModel):
    """A model without tools (asked in JSON mode) that gives ``replies`` in turn, each
    with its ``response_metadata``."""

    replies: list[AIMessage]
    sent: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "cut-off"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.sent.append(messages)
        return ChatResult(generations=[ChatGeneration(message=self.replies[len(self.sent) - 1])])


def cut_off_then_valid() -> CutOff:
    return CutOff(
        replies=[
            AIMessage(content='{"greeting": "Hel', response_metadata={"finish_reason": "length"}),
            AIMessage(content='{"greeting": "Hello, Ada!"}', response_metadata={"done": True}),
        ]
    )


def test_answer_cut_off_is_an_invalid_output_that_says_so() -> None:
    result = greet(cut_off_then_valid())

    first = result.trace[0]
    assert (first.error, first.truncated, first.failure) == (
        "- the answer was cut off at the model's output limit\n"
        '- the answer is not a JSON object: \'{"greeting": "Hel\'',
        True,
        "invalid_output",
    )


def test_answer_cut_off_is_retried_with_feedback() -> None:
    model = cut_off_then_valid()

    result = greet(model)

    assert result[TaskGreet].greeting == "Hello, Ada!"
    assert model.sent[1][-1].content == (
        "Your previous answer could not be used:\n"
        "- the answer was cut off at the model's output limit\n"
        '- the answer is not a JSON object: \'{"greeting": "Hel\'\n\n'
        "Write Greeting again. Answer with one JSON object, and nothing else, in this form:\n"
        '{"greeting": "<text>"}'
    )


def test_complete_answer_flagged_cut_off_is_accepted_and_flagged() -> None:
    message = AIMessage(
        content='{"greeting": "Hi."}', response_metadata={"stop_reason": "max_tokens"}
    )

    result = greet(CutOff(replies=[message]))

    assert (result[TaskGreet].greeting, result.trace[0].truncated, result.trace[0].error) == (
        "Hi.",
        True,
        None,
    )
