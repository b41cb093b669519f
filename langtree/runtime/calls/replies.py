"""Reading a model's answer: the structured output it holds, or why there is none.

An answer is what the bound model returns (`langtree.runtime.calls.methods`): a message
with a tool call (``"function_calling"``), a message whose text is JSON (``"json_schema"``,
``"json_mode"``; a fenced block is accepted), the ``{"raw", "parsed", "parsing_error"}``
of a ``with_structured_output(..., include_raw=True)`` chain, or the text a user's own
runnable returns. The problems found are sentences that go back to the model in a retry
(`feedback_message()`) and into the trace.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.output_parsers.openai_tools import JsonOutputKeyToolsParser
from langchain_core.outputs import ChatGeneration
from langchain_core.utils.json import parse_json_markdown
from pydantic import BaseModel, ValidationError

from langtree.runtime.calls.methods import StructuredBinding
from langtree.structure.tree.tree import title_from_name

__all__ = [
    "CUT_OFF",
    "TEXT_INSTEAD_OF_TOOL_CALL",
    "Reading",
    "answered_by",
    "feedback_message",
    "finish_reason",
    "problem_text",
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
TEXT_INSTEAD_OF_TOOL_CALL = "the answer held no tool call, only text"


def _no_tool_call(reply: AIMessage) -> str:
    text = reply.text.strip()
    if not text:
        return f"{_NO_OUTPUT} (no tool call)"
    return f"{TEXT_INSTEAD_OF_TOOL_CALL}: {_excerpt(text)}"


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
    return str(finish_reason(message)).lower() in ("length", "max_tokens")


def _excerpt(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def feedback_message(
    problem: str, fields: tuple[str, ...], instructions: str | None = None
) -> HumanMessage:
    """The human message a retry adds after an invalid answer; in JSON mode it repeats
    the form the answer must have (``instructions``), which small models need close by.

    Examples:
        >>> print(feedback_message("- summary: Field required", ("summary",)).content)
        Your previous answer could not be used:
        - summary: Field required
        <BLANKLINE>
        Write Summary again, as structured output.
        >>> print(feedback_message("- x", ("summary",), "Answer in this form: {}").content)
        Your previous answer could not be used:
        - x
        <BLANKLINE>
        Write Summary again. Answer in this form: {}
    """
    titles = ", ".join(title_from_name(name) for name in fields)
    again = f"Write {titles} again, as structured output."
    if instructions is not None:
        again = f"Write {titles} again. {instructions}"
    return HumanMessage(content=f"Your previous answer could not be used:\n{problem}\n\n{again}")


CUT_OFF = "the answer was cut off at the model's output limit"


def problem_text(error: object) -> str:
    """Why an output was rejected, one line per validation error."""
    if isinstance(error, ValidationError):
        return "\n".join(
            f"- {'.'.join(str(part) for part in detail['loc']) or '(answer)'}: {detail['msg']}"
            for detail in error.errors(include_url=False)
        )
    if error is not None:
        return f"- {error}"
    return "- the answer held no structured output (no tool call)"


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
    if raw.tool_calls:
        return json.dumps(raw.tool_calls[0]["args"], ensure_ascii=False, default=str)
    if raw.invalid_tool_calls:
        return str(raw.invalid_tool_calls[0].get("args") or "")
    return raw.text
