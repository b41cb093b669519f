"""How a step asks its model for structured output, and how the answer is read.

Three methods, named as LangChain names them:

- ``"function_calling"``: the schema is bound as the one tool the model must call
  (``tool_choice`` names it); the answer is the tool call's arguments.
- ``"json_schema"``: the provider's native structured output (``response_format`` with the
  schema; Ollama's ``format``); the answer is JSON text.
- ``"json_mode"``: the schema is in the prompt (appended to the last human message), and
  the provider's JSON mode is asked for when the model has one; the answer is JSON text.

``"auto"`` takes, for a chat model, the method its own ``with_structured_output``
defaults to (langchain-openai's ``ChatOpenAI``: ``"json_schema"``; ChatAnthropic:
``"function_calling"``), or ``"function_calling"`` when it has no choice and binds tools;
for a runnable that cannot bind anything (a user's own ``Runnable`` around a chat model),
``"json_mode"``, which needs nothing from the model but text.

The binding is made once per plan step. The provider-specific part is left to the model's
own ``bind_tools`` / ``with_structured_output``; of the latter, only the bound model (the
``raw`` branch of ``include_raw=True``) is kept, so each call is the model's own
``ainvoke`` and the answer is parsed and validated here, once. Wrappers are rebuilt around
the bound model: a ``RunnableBinding`` (``bind(...)``, ``with_retry(...)``,
``with_config(...)``) keeps its settings, ``with_fallbacks`` binds every model with the
method chosen for the first, and a configurable model (``configurable_fields`` /
``configurable_alternatives``) is bound per call, for the model its config selects.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.output_parsers.openai_tools import JsonOutputKeyToolsParser
from langchain_core.outputs import ChatGeneration
from langchain_core.runnables import (
    Runnable,
    RunnableConfig,
    RunnableParallel,
    RunnableSequence,
    RunnableWithFallbacks,
)
from langchain_core.runnables.base import RunnableBindingBase
from langchain_core.runnables.configurable import DynamicRunnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_core.utils.json import parse_json_markdown

from langtree.errors import ExecutionError
from langtree.runtime.json_form import json_form

__all__ = [
    "METHOD_CHOICES",
    "Method",
    "MethodChoice",
    "Reading",
    "StepRunnable",
    "StructuredBinding",
    "add_instructions",
    "answered_by",
    "asks_for_json",
    "bind_structured",
    "json_instructions",
    "primary_chat_model",
    "read_reply",
    "resolve_method",
]

Method = Literal["function_calling", "json_schema", "json_mode"]
MethodChoice = Literal["auto", "function_calling", "json_schema", "json_mode"]
METHOD_CHOICES: tuple[str, ...] = get_args(MethodChoice)

StepRunnable = Runnable[LanguageModelInput, Any]
"""What a step calls with its messages: a bound model (it returns the ``AIMessage``), or a
``with_structured_output(..., include_raw=True)`` chain (it returns a dict)."""

_INSTRUCTIONS = "Answer with one JSON object, and nothing else, in this form:"
_UNSUPPORTED = (NotImplementedError, ValueError, TypeError)
"""What ``with_structured_output`` raises for a method a model does not offer."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StructuredBinding:
    """A model bound to one step's output schema.

    Attributes:
        runnable: What each call invokes with the step's messages.
        method: The method in use (never ``"auto"``).
        tool_name: The tool the answer must call (``"function_calling"``).
        instructions: Text appended to the last human message (``"json_mode"``).
    """

    runnable: StepRunnable
    method: Method
    tool_name: str | None = None
    instructions: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Reading:
    """What an answer holds.

    Attributes:
        message: The model's message (``None`` when the runnable returned something else).
        arguments: The structured output, not yet validated (``None``: there is none).
        problem: Why there is none: a parser's exception, or a sentence.
        truncated: Whether the model stopped at its output limit.
        text: The answer's text when the runnable returned text rather than a message.
    """

    message: AIMessage | None
    arguments: object
    problem: object = None
    truncated: bool = False
    text: str | None = None


def bind_structured(
    model: Runnable[Any, Any], schema: Mapping[str, Any], method: MethodChoice = "auto"
) -> StructuredBinding:
    """Bind ``model`` to ``schema`` (a JSON schema with a ``title``) with ``method``.

    Raises:
        ExecutionError: The model does not offer the method.
    """
    chosen = resolve_method(model, method)
    name: str = convert_to_openai_tool(dict(schema))["function"]["name"]
    return StructuredBinding(
        runnable=_bound(model, schema, chosen),
        method=chosen,
        tool_name=name if chosen == "function_calling" else None,
        instructions=json_instructions(schema) if chosen == "json_mode" else None,
    )


def resolve_method(model: Runnable[Any, Any], choice: MethodChoice) -> Method:
    """The method ``"auto"`` stands for with this model (see the module), or ``choice``."""
    if choice != "auto":
        return choice
    chat = primary_chat_model(model)
    if chat is None:
        return "json_mode"
    default = _default_method(type(chat))
    if default is not None:
        return default
    return "function_calling" if _binds_tools(chat) else "json_mode"


def primary_chat_model(model: Runnable[Any, Any]) -> BaseChatModel | None:
    """The chat model a runnable wraps first (for fallbacks, the first model), if known."""
    seen = 0
    while not isinstance(model, BaseChatModel) and seen < 32:
        seen += 1
        if isinstance(model, RunnableBindingBase):
            model = model.bound
        elif isinstance(model, RunnableWithFallbacks):
            model = model.runnable
        elif isinstance(model, DynamicRunnable):
            model = model.default
        else:
            return None
    return model if isinstance(model, BaseChatModel) else None


def json_instructions(schema: Mapping[str, Any]) -> str:
    """The text that asks for JSON following ``schema`` (``"json_mode"``): the answer's
    form rather than the schema itself, which small models copy instead of following
    (see :mod:`langtree.runtime.json_form`).

    >>> schema = {"properties": {"title": {"type": "string"}, "year": {"type": "integer"}}}
    >>> print(json_instructions(schema))
    Answer with one JSON object, and nothing else, in this form:
    {"title": "<text>", "year": <integer>}
    """
    return f"{_INSTRUCTIONS}\n{json_form(schema)}"


def asks_for_json(text: str) -> bool:
    """Whether ``text`` holds the instructions of :func:`json_instructions`."""
    return _INSTRUCTIONS in text


def add_instructions(messages: tuple[BaseMessage, ...], text: str) -> tuple[BaseMessage, ...]:
    """The messages with ``text`` as a new paragraph of the last human message.

    Appending keeps the roles alternating, which some chat templates require.
    """
    at = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    if at < 0:
        return (*messages, HumanMessage(content=text))
    last = messages[at]
    content: str | list[str | dict[Any, Any]]
    if isinstance(last.content, str):
        kept = last.content.rstrip()
        content = f"{kept}\n\n{text}" if kept else text
    else:
        content = [*last.content, {"type": "text", "text": text}]
    return (*messages[:at], last.model_copy(update={"content": content}), *messages[at + 1 :])


def read_reply(binding: StructuredBinding, reply: object) -> Reading:
    """The structured output in an answer, or why there is none."""
    if isinstance(reply, Mapping) and "raw" in reply:
        return _read_chain_output(binding, reply)
    if isinstance(reply, str):
        arguments, problem = _json_object(reply)
        return Reading(message=None, arguments=arguments, problem=problem, text=reply)
    if not isinstance(reply, AIMessage):
        unusable = f"the model returned {type(reply).__name__!r}, not a message"
        return Reading(message=None, arguments=None, problem=unusable, text=repr(reply))
    return _read_message(binding, reply)


def _read_chain_output(binding: StructuredBinding, reply: Mapping[str, Any]) -> Reading:
    """A ``with_structured_output(..., include_raw=True)`` chain's ``{"raw", "parsed",
    "parsing_error"}``."""
    raw = reply["raw"]
    message = raw if isinstance(raw, AIMessage) else None
    arguments, problem = reply.get("parsed"), reply.get("parsing_error")
    if arguments is None and problem is None and message is not None:
        problem = _no_tool_call(message) if binding.tool_name else _NO_OUTPUT
    truncated = message is not None and _truncated(message)
    return Reading(message=message, arguments=arguments, problem=problem, truncated=truncated)


def _read_message(binding: StructuredBinding, reply: AIMessage) -> Reading:
    """A bound model's message: the tool call, a parsed answer, or JSON text."""
    problem: object
    if binding.tool_name is not None and _has_tool_calls(reply):
        arguments, problem = _tool_arguments(reply, binding.tool_name)
    elif isinstance(reply.additional_kwargs.get("parsed"), Mapping):
        arguments, problem = reply.additional_kwargs["parsed"], None
    elif binding.tool_name is not None:
        arguments, problem = None, _no_tool_call(reply)
    elif reply.tool_calls and not reply.text.strip():
        # Some integrations answer a JSON method with a tool call of their own.
        arguments, problem = reply.tool_calls[0]["args"], None
    else:
        arguments, problem = _json_object(reply.text)
    return Reading(message=reply, arguments=arguments, problem=problem, truncated=_truncated(reply))


def answered_by(message: AIMessage | None) -> str | None:
    """The model name the provider says answered (``response_metadata``), if it says."""
    if message is None:
        return None
    metadata = message.response_metadata
    name = metadata.get("model_name") or metadata.get("model") or metadata.get("model_id")
    return name if isinstance(name, str) else None


def _bound(model: Runnable[Any, Any], schema: Mapping[str, Any], method: Method) -> StepRunnable:
    """``model`` bound to ``schema``, wrappers rebuilt around the bound model."""
    if isinstance(model, BaseChatModel):
        return _bind_chat_model(model, schema, method)
    if isinstance(model, RunnableBindingBase):
        return model.model_copy(update={"bound": _bound(model.bound, schema, method)})
    if isinstance(model, RunnableWithFallbacks):
        return model.model_copy(
            update={
                "runnable": _bound(model.runnable, schema, method),
                "fallbacks": [_bound(fallback, schema, method) for fallback in model.fallbacks],
            }
        )
    if isinstance(model, DynamicRunnable):
        return _BoundPerCall(model, schema, method)
    if method == "json_mode":
        return model
    raise ExecutionError(
        f"A {type(model).__name__!r} cannot be bound to a schema with method {method!r}\n"
        "  hint: use method='json_mode' (the schema goes into the prompt), the default "
        "for runnables that are not chat models"
    )


def _bind_chat_model(
    model: BaseChatModel, schema: Mapping[str, Any], method: Method
) -> StepRunnable:
    if method == "function_calling":
        name: str = convert_to_openai_tool(dict(schema))["function"]["name"]
        try:
            return model.bind_tools(
                [dict(schema)],
                tool_choice=name,
                ls_structured_output_format={
                    "kwargs": {"method": "function_calling"},
                    "schema": dict(schema),
                },
            )
        except NotImplementedError:
            pass
    try:
        if method == "function_calling":
            chain = model.with_structured_output(dict(schema), include_raw=True)
        else:
            chain = model.with_structured_output(dict(schema), method=method, include_raw=True)
    except _UNSUPPORTED as error:
        if method == "json_mode":
            return model
        raise ExecutionError(
            f"{type(model).__name__!r} does not offer structured output with method "
            f"{method!r}: {error}\n"
            "  hint: choose another method; 'json_mode' works with every chat model: "
            "LLMProvider({'key': ModelConfig(model, method='json_mode')})"
        ) from error
    return _raw_branch(chain) or chain


def _raw_branch(chain: Runnable[Any, Any]) -> StepRunnable | None:
    """The bound model inside ``with_structured_output(..., include_raw=True)``.

    LangChain's integrations build that chain as ``RunnableMap(raw=bound_model) | parsers``;
    anything else is used whole.
    """
    if isinstance(chain, RunnableSequence) and isinstance(chain.first, RunnableParallel):
        branches = chain.first.steps__
        if list(branches) == ["raw"]:
            return branches["raw"]
    return None


class _BoundPerCall(Runnable[LanguageModelInput, Any]):
    """A configurable model, bound for the model each call's config selects."""

    def __init__(self, model: DynamicRunnable[Any, Any], schema: Mapping[str, Any], method: Method):
        self.model = model
        self.schema = schema
        self.method = method
        self._bound: dict[int, tuple[Runnable[Any, Any], StepRunnable]] = {}

    def _prepare(self, config: RunnableConfig | None) -> tuple[StepRunnable, RunnableConfig]:
        selected, config = self.model.prepare(config)
        known = self._bound.get(id(selected))
        if known is None or known[0] is not selected:
            # Keyed by identity; the model is kept so that its id stays its own.
            if len(self._bound) >= 64:
                self._bound.clear()
            known = (selected, _bound(selected, self.schema, self.method))
            self._bound[id(selected)] = known
        return known[1], config

    def invoke(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Any:
        runnable, config = self._prepare(config)
        return runnable.invoke(input, config, **kwargs)

    async def ainvoke(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Any:
        runnable, config = self._prepare(config)
        return await runnable.ainvoke(input, config, **kwargs)


def _default_method(model_class: type[BaseChatModel]) -> Method | None:
    """The ``method`` a chat model class's ``with_structured_output`` defaults to."""
    parameter = inspect.signature(model_class.with_structured_output).parameters.get("method")
    default = parameter.default if parameter is not None else None
    return default if default in get_args(Method) else None


def _binds_tools(model: BaseChatModel) -> bool:
    return type(model).bind_tools is not BaseChatModel.bind_tools


def _has_tool_calls(reply: AIMessage) -> bool:
    return bool(reply.tool_calls or reply.invalid_tool_calls) or (
        "tool_calls" in reply.additional_kwargs
    )


def _tool_arguments(reply: AIMessage, name: str) -> tuple[object, object]:
    """The arguments of the reply's first call of the tool, or why there are none.

    Reads the reply as ``with_structured_output``'s parser does: the first tool call of
    that name; provider tool calls the message did not parse are parsed here (their error
    is the problem).
    """
    for call in reply.tool_calls:
        if call["name"] == name:
            return call["args"], None
    for invalid in reply.invalid_tool_calls:
        if invalid.get("name") in (name, None):
            arguments = _excerpt(str(invalid.get("args") or ""))
            return None, f"the tool call's arguments are not valid JSON: {arguments}"
    if reply.tool_calls:
        called = ", ".join(repr(call["name"]) for call in reply.tool_calls)
        return None, f"the answer called {called}, not {name!r}"
    if "tool_calls" not in reply.additional_kwargs:
        return None, _no_tool_call(reply)
    parser = JsonOutputKeyToolsParser(key_name=name, first_tool_only=True)
    try:
        return parser.parse_result([ChatGeneration(message=reply)]), None
    except OutputParserException as error:
        return None, error


_NO_OUTPUT = "the answer held no structured output"


def _no_tool_call(reply: AIMessage) -> str:
    text = reply.text.strip()
    if not text:
        return f"{_NO_OUTPUT} (no tool call)"
    return f"the answer held no tool call, only text: {_excerpt(text)}"


def _json_object(text: str) -> tuple[object, str | None]:
    """The JSON object in an answer's text (a fenced block is accepted)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            value = parse_json_markdown(text, parser=json.loads)
        except (json.JSONDecodeError, ValueError):
            return None, f"the answer is not a JSON object: {_excerpt(text)}"
    if not isinstance(value, dict):
        return None, f"the answer is JSON but not an object: {_excerpt(text)}"
    return value, None


def _truncated(message: AIMessage) -> bool:
    """Whether the provider says it stopped at the output limit."""
    metadata = message.response_metadata
    reasons = (metadata.get(key) for key in ("finish_reason", "stop_reason", "done_reason"))
    return any(str(reason).lower() in ("length", "max_tokens") for reason in reasons if reason)


def _excerpt(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")
