"""``FakeChatModel``: a LangChain chat model for offline tests, with structured output.

None of ``langchain_core``'s own fakes implement ``bind_tools``, so none of them supports
``with_structured_output``. This one does, the way provider models do: ``bind_tools``
binds the tools in OpenAI's format, and the reply is a tool call whose arguments arrive as
JSON text, which LangChain parses into ``tool_calls`` (or, when the text is not a JSON
object, ``invalid_tool_calls``) exactly as it does for a provider's stream. A streamed
call gets the text in pieces of 16 characters; a call that is not streamed (``invoke``)
gets it in one piece, as a provider's whole response, so its arguments are parsed once
rather than once per piece.

Every call is recorded as a `FakeRequest` in `FakeChatModel.calls`. The node
path comes from the run's metadata key ``"langtree_node_path"``: LangChain hands it to
``_generate``/``_agenerate`` through the callback manager, and to ``_stream``/``_astream``
(which get no callback manager) through the runnable config of the chain being run, e.g.
``model.with_structured_output(M).stream(..., config)``. A bare ``model.stream(...)`` is not
run inside a chain, so its requests have no node path.
"""

from __future__ import annotations

__all__ = ["FakeChatModel", "FakeRequest", "Latency", "Responder", "ResponderResult"]

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pydantic_core
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import agenerate_from_stream, generate_from_stream
from langchain_core.messages import AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables.config import ensure_config
from pydantic import PrivateAttr

from langtree.errors import ExecutionError
from langtree.runtime import NODE_PATH_KEY, Method, StructuredChatModel, requested_output
from langtree.testing._examples import example_value

_PIECE = 16

ResponderResult = Mapping[str, object] | str
"""What a responder returns: a tool call's arguments, or the text of a reply."""

Responder = Callable[["FakeRequest"], ResponderResult | Awaitable[ResponderResult]]
"""Answers a request; may be a plain function or a coroutine function."""

Latency = float | Callable[["FakeRequest"], float]
"""Seconds a call takes: a constant, or computed from the request."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeRequest:
    """One call to a `FakeChatModel`, as the model saw it.

    Attributes:
        node_path: The run metadata's ``"langtree_node_path"`` (``None`` when absent).
        fields: The requested schema's top-level property names, in order (empty when
            no tool was called for).
        text: The content of every message, joined by a blank line.
        messages: The messages sent.
        schema: The JSON schema of the requested output: the tool's arguments or the
            ``response_format``'s schema (``None`` without structured output, or for
            JSON asked for in the prompt alone; the default reply is then ``{}``).
        tool_name: The name of the tool called for (``None`` without a tool).
        method: How structured output was asked for: ``"function_calling"``,
            ``"json_schema"`` or ``"json_mode"`` (``None``: a text reply).
    """

    node_path: str | None
    fields: tuple[str, ...]
    text: str
    messages: tuple[BaseMessage, ...]
    schema: Mapping[str, object] | None
    tool_name: str | None
    method: Method | None = None


class FakeChatModel(StructuredChatModel):
    """A deterministic chat model that answers offline and records every call.

    Bound to tools (``with_structured_output(Schema)`` binds one), it calls the first tool,
    or the one ``tool_choice`` names, with arguments valid for the tool's schema (see
    `langtree.testing.example_value()`); asked for JSON
    (``with_structured_output(Schema, method="json_schema")`` or ``"json_mode"``), it
    replies with such values as JSON text; otherwise it echoes the first line of the last
    human message. A ``responder`` replaces all of these: its dict becomes the tool call's
    arguments (or the JSON text) and its string the reply's text, unvalidated, so tests
    can feed LangTree wrong output on purpose; what it raises, the call raises (a
    provider's timeout or rate limit, say). Same request, same reply: no network, no
    randomness.

    Args:
        responder: Called with each `FakeRequest`; returns the arguments (a dict)
            or a text reply (a string, which with tools bound means no tool call), or an
            awaitable of either. What it raises propagates to the caller.
        latency: Seconds each call waits before replying (``asyncio.sleep`` on the async
            path, ``time.sleep`` on the sync one), or a function of the request.
        model_name: The name the replies report in ``response_metadata`` (which model
            answered, e.g. behind ``with_fallbacks``).
        report_usage: Whether replies carry ``usage_metadata``, as provider replies do:
            about four characters a token, of the messages' text and of the reply.

    Examples:
        >>> from pydantic import BaseModel
        >>> class Answer(BaseModel):
        ...     text: str
        ...     confidence: float
        >>> model = FakeChatModel()
        >>> model.with_structured_output(Answer).invoke("Why is the sky blue?")
        Answer(text='text 1', confidence=1.0)
        >>> model.invoke("Hello\\nworld").content
        'Hello'
        >>> model.calls[0].fields
        ('text', 'confidence')
    """

    responder: Responder | None = None
    latency: Latency = 0.0
    model_name: str = "langtree-fake"
    report_usage: bool = False
    _calls: list[FakeRequest] = PrivateAttr(default_factory=list)

    def __init__(
        self,
        responder: Responder | None = None,
        latency: Latency = 0.0,
        *,
        model_name: str = "langtree-fake",
        report_usage: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            responder=responder,
            latency=latency,
            model_name=model_name,
            report_usage=report_usage,
            **kwargs,
        )

    @property
    def calls(self) -> list[FakeRequest]:
        """Every request so far, in the order the calls reached the model.

        The list itself, not a copy: ``calls.clear()`` starts over. Appending is safe
        from concurrent asyncio tasks (one thread) and from LangChain's batch threads
        (``list.append`` is atomic).
        """
        return self._calls

    @property
    def _llm_type(self) -> str:
        return "langtree-fake"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return generate_from_stream(self._replies(messages, run_manager, kwargs, size=None))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return await agenerate_from_stream(self._areplies(messages, run_manager, kwargs, size=None))

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        return self._replies(messages, run_manager, kwargs)

    def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        return self._areplies(messages, run_manager, kwargs)

    def _replies(
        self,
        messages: Sequence[BaseMessage],
        run_manager: CallbackManagerForLLMRun | None,
        options: Mapping[str, object],
        size: int | None = _PIECE,
    ) -> Iterator[ChatGenerationChunk]:
        request = self._record(messages, run_manager, options)
        delay = self._delay(request)
        if delay:
            time.sleep(delay)
        reply = self.responder(request) if self.responder else _default_reply(request)
        if inspect.isawaitable(reply):
            reply = _run_to_completion(reply)
        yield from _chunks(request, reply, self, size)

    async def _areplies(
        self,
        messages: Sequence[BaseMessage],
        run_manager: AsyncCallbackManagerForLLMRun | None,
        options: Mapping[str, object],
        size: int | None = _PIECE,
    ) -> AsyncIterator[ChatGenerationChunk]:
        request = self._record(messages, run_manager, options)
        delay = self._delay(request)
        if delay:
            await asyncio.sleep(delay)
        reply = self.responder(request) if self.responder else _default_reply(request)
        if inspect.isawaitable(reply):
            reply = await reply
        for chunk in _chunks(request, reply, self, size):
            yield chunk

    def _record(
        self,
        messages: Sequence[BaseMessage],
        run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None,
        options: Mapping[str, object],
    ) -> FakeRequest:
        wanted = requested_output(options, messages)
        schema = wanted.schema if wanted else None
        properties = schema.get("properties", {}) if schema else {}
        request = FakeRequest(
            node_path=_node_path(run_manager),
            fields=tuple(properties),
            text="\n\n".join(message.text for message in messages),
            messages=tuple(messages),
            schema=schema,
            tool_name=wanted.tool_name if wanted else None,
            method=wanted.method if wanted else None,
        )
        self._calls.append(request)
        return request

    def _delay(self, request: FakeRequest) -> float:
        delay = self.latency(request) if callable(self.latency) else self.latency
        if delay < 0:
            raise ExecutionError(f"FakeChatModel latency must not be negative, got {delay!r}")
        return delay


def _default_reply(request: FakeRequest) -> ResponderResult:
    """Values valid for the requested schema, or the last human message's first line."""
    if request.schema is not None:
        value = example_value(request.schema)
        return value if isinstance(value, Mapping) else {}
    if request.method is not None:
        return {}
    human = next((m for m in reversed(request.messages) if isinstance(m, HumanMessage)), None)
    return human.text.split("\n", 1)[0] if human else ""


def _node_path(
    run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None,
) -> str | None:
    """The run's ``langtree_node_path``, from the callback manager or the chain's config."""
    metadata = run_manager.metadata if run_manager else ensure_config().get("metadata", {})
    path = metadata.get(NODE_PATH_KEY) if metadata else None
    return path if isinstance(path, str) else None


def _chunks(
    request: FakeRequest, reply: object, model: FakeChatModel, size: int | None
) -> Iterator[ChatGenerationChunk]:
    """The reply as a provider would stream it: text (JSON text when structured output
    was asked for as JSON), or a tool call's JSON arguments, in pieces of ``size``
    characters (``None``: one piece, a whole response); the last chunk says which model
    answered, and how many tokens it took when the model reports usage."""
    call = request.tool_name is not None and not isinstance(reply, str)
    text = reply if isinstance(reply, str) else _json(reply)
    pieces = [text[i : i + size] for i in range(0, len(text), size)] if size else [text]
    pieces = pieces or [""]
    usage = _usage(request.text, text) if model.report_usage else None
    for number, piece in enumerate(pieces):
        position: Literal["last"] | None = "last" if number == len(pieces) - 1 else None
        metadata = {"model_name": model.model_name, "finish_reason": "stop"} if position else {}
        counted = usage if position else None
        if call:
            first = number == 0
            tool_chunk = tool_call_chunk(
                name=request.tool_name if first else None,
                args=piece,
                id=f"call_{request.tool_name}" if first else None,
                index=0,
            )
            message = AIMessageChunk(
                content="",
                tool_call_chunks=[tool_chunk],
                chunk_position=position,
                response_metadata=metadata,
                usage_metadata=counted,
            )
        else:
            message = AIMessageChunk(
                content=piece,
                chunk_position=position,
                response_metadata=metadata,
                usage_metadata=counted,
            )
        yield ChatGenerationChunk(message=message)


def _usage(prompt: str, reply: str) -> UsageMetadata:
    """Token counts at about four characters a token."""
    sent, received = -(-len(prompt) // 4), -(-len(reply) // 4)
    return UsageMetadata(input_tokens=sent, output_tokens=received, total_tokens=sent + received)


def _json(value: object) -> str:
    try:
        return pydantic_core.to_json(value).decode()
    except pydantic_core.PydanticSerializationError as error:
        raise ExecutionError(
            f"FakeChatModel cannot send the responder's reply as JSON: {error}"
        ) from error


def _run_to_completion(reply: Awaitable[ResponderResult]) -> ResponderResult:
    """Await an async responder's reply on the sync path, where no loop is running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(reply))
    if inspect.iscoroutine(reply):
        reply.close()
    raise ExecutionError(
        "FakeChatModel got an async responder on the sync path inside a running event "
        "loop; call ainvoke/astream instead, or pass a sync responder"
    )


async def _awaited(reply: Awaitable[ResponderResult]) -> ResponderResult:
    return await reply
