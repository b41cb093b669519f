"""Reading a model's answer: the structured output it holds, or why there is none.

An answer is what the bound model returns (`langtree.runtime.calls._methods`): a message
with a tool call (``"function_calling"``), a message whose text is JSON (``"json_schema"``,
``"json_mode"``; a fenced block is accepted), the ``{"raw", "parsed", "parsing_error"}``
of a ``with_structured_output(..., include_raw=True)`` chain, or the text a user's own
runnable returns. The problems found go back to the model in a retry and into the
trace, in the words of `langtree.prompts._feedback`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage
from langchain_core.output_parsers.openai_tools import JsonOutputKeyToolsParser
from langchain_core.outputs import ChatGeneration
from langchain_core.utils.json import parse_json_markdown
from pydantic import BaseModel

from langtree.prompts import (
    NO_OUTPUT,
    invalid_tool_arguments,
    no_tool_call,
    not_a_message,
    not_an_object,
    not_json,
    other_tools_called,
)
from langtree.runtime.calls._methods import StructuredBinding

__all__ = [
    "Reading",
    "answered_by",
    "finish_reason",
    "raw_text",
    "read_reply",
    "reported_usage",
]


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


def read_reply(binding: StructuredBinding, reply: object) -> Reading:
    """The structured output in an answer, or why there is none."""
    # A chain's dict has been parsed by the chain itself; text comes from a user's runnable
    # in JSON mode; anything else but a message cannot hold an answer.
    if isinstance(reply, Mapping) and "raw" in reply:
        return _read_chain_output(binding, reply)
    if isinstance(reply, str):
        arguments, problem = _json_object(reply)
        return Reading(message=None, arguments=arguments, problem=problem, text=reply)
    if not isinstance(reply, AIMessage):
        problem = not_a_message(reply)
        return Reading(message=None, arguments=None, problem=problem, text=repr(reply))
    return _read_message(binding, reply)


def _read_chain_output(binding: StructuredBinding, reply: Mapping[str, Any]) -> Reading:
    """A ``with_structured_output(..., include_raw=True)`` chain's ``{"raw", "parsed",
    "parsing_error"}``."""
    raw = reply["raw"]
    message = raw if isinstance(raw, AIMessage) else None
    arguments, problem = reply.get("parsed"), reply.get("parsing_error")
    # The chain's parsers found nothing and said nothing (no tool call, an empty answer):
    # the problem is named here, in the words the feedback to the model uses.
    if arguments is None and problem is None and message is not None:
        problem = no_tool_call(message.text) if binding.tool_name else NO_OUTPUT
    truncated = message is not None and _truncated(message)
    return Reading(message=message, arguments=arguments, problem=problem, truncated=truncated)


def _read_message(binding: StructuredBinding, reply: AIMessage) -> Reading:
    """A bound model's message: the tool call, a parsed answer, or JSON text."""
    problem: object
    if binding.tool_name is not None and _has_tool_calls(reply):
        arguments, problem = _tool_arguments(reply, binding.tool_name)
    # langchain-openai parses a native structured answer itself and leaves it here.
    elif isinstance(reply.additional_kwargs.get("parsed"), Mapping):
        arguments, problem = reply.additional_kwargs["parsed"], None
    elif binding.tool_name is not None:
        arguments, problem = None, no_tool_call(reply.text)
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


def _has_tool_calls(reply: AIMessage) -> bool:
    # A provider's tool calls that the message did not parse stay in ``additional_kwargs``.
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
        # A call whose name could not be read may be the one asked for: its arguments are
        # the problem to report, not a missing call.
        if invalid.get("name") in (name, None):
            return None, invalid_tool_arguments(str(invalid.get("args") or ""))
    if reply.tool_calls:
        return None, other_tools_called([call["name"] for call in reply.tool_calls], name)
    if "tool_calls" not in reply.additional_kwargs:
        return None, no_tool_call(reply.text)
    # Parsed as ``with_structured_output`` would, so that its error is the problem reported.
    parser = JsonOutputKeyToolsParser(key_name=name, first_tool_only=True)
    try:
        return parser.parse_result([ChatGeneration(message=reply)]), None
    except OutputParserException as error:
        return None, error


def _json_object(text: str) -> tuple[object, str | None]:
    """The JSON object in an answer's text (a fenced block is accepted)."""
    try:
        # Plain JSON first: a fence is looked for only in text that is no JSON, so a string
        # value that holds a fenced block is not cut out of a valid answer.
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            value = parse_json_markdown(text, parser=json.loads)
        except (json.JSONDecodeError, ValueError):
            return None, not_json(text)
    if not isinstance(value, dict):
        return None, not_an_object(text)
    return value, None


def finish_reason(message: AIMessage | None) -> str | None:
    """Why the provider says the model stopped (``response_metadata``), if it says:
    OpenAI's ``finish_reason``, Anthropic's ``stop_reason``, Ollama's ``done_reason``."""
    if message is None:
        return None
    metadata = message.response_metadata
    reasons = (metadata.get(key) for key in ("finish_reason", "stop_reason", "done_reason"))
    return next((str(reason) for reason in reasons if reason), None)


def _truncated(message: AIMessage) -> bool:
    """Whether the provider says it stopped at the output limit."""
    # OpenAI's and Ollama's ``length``, Anthropic's ``max_tokens``.
    return str(finish_reason(message)).lower() in ("length", "max_tokens")


def reported_usage(message: AIMessage | None) -> Mapping[str, object] | None:
    if message is None or not message.usage_metadata:
        return None
    return dict(message.usage_metadata)


def raw_text(reading: Reading) -> str:
    """The tool call's arguments as JSON (or the invalid call's text), else the text."""
    raw = reading.message
    if raw is None:
        if reading.text is not None:
            return reading.text
        arguments = reading.arguments
        if isinstance(arguments, BaseModel):
            return arguments.model_dump_json()
        return repr(arguments)
    # Non-ASCII kept as the model wrote it, and a value JSON cannot hold written as text.
    if raw.tool_calls:
        return json.dumps(raw.tool_calls[0]["args"], ensure_ascii=False, default=str)
    if raw.invalid_tool_calls:
        return str(raw.invalid_tool_calls[0].get("args") or "")
    return raw.text
