"""What a model is told when its answer cannot be used, and what the trace keeps of it.

Reading an answer (`langtree.runtime.calls._replies`) finds what is wrong with it; the
sentences here say so. Each problem is one line starting with ``- ``
(`problem_text()`): a validation error per line, with the field's location, or the
sentence of a problem found while reading (an answer of text where a tool call was
asked for, JSON that is not an object, ...), with an excerpt of what the model wrote.
The same text is the trace's ``error`` and, in a retry, the middle of the human message
`feedback_message()` adds after the invalid answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import HumanMessage
from pydantic import ValidationError

from langtree.structure import title_from_name

__all__ = [
    "CUT_OFF",
    "NO_OUTPUT",
    "TEXT_INSTEAD_OF_TOOL_CALL",
    "cut_off_error",
    "feedback_message",
    "invalid_tool_arguments",
    "no_tool_call",
    "not_a_message",
    "not_an_object",
    "not_json",
    "other_tools_called",
    "problem_text",
]

CUT_OFF = "the answer was cut off at the model's output limit"
NO_OUTPUT = "the answer held no structured output"
TEXT_INSTEAD_OF_TOOL_CALL = "the answer held no tool call, only text"


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


def problem_text(error: object, *, cut_off: bool = False) -> str:
    """Why an output was rejected, one line per validation error; first, when the model
    stopped at its output limit (``cut_off``), a line that says so.

    Examples:
        >>> print(problem_text(not_json("Sure!"), cut_off=True))
        - the answer was cut off at the model's output limit
        - the answer is not a JSON object: 'Sure!'
    """
    if isinstance(error, ValidationError):
        text = "\n".join(
            f"- {'.'.join(str(part) for part in detail['loc']) or '(answer)'}: {detail['msg']}"
            for detail in error.errors(include_url=False)
        )
    elif error is not None:
        text = f"- {error}"
    else:
        text = f"- {NO_OUTPUT} (no tool call)"
    return f"- {CUT_OFF}\n{text}" if cut_off else text


def cut_off_error(error: BaseException) -> str:
    """Why a call that raised ``error`` because the model stopped at its output limit
    gave no output."""
    return f"- {CUT_OFF} ({type(error).__name__})"


def no_tool_call(text: str) -> str:
    """An answer with no call of the step's tool, only ``text`` (perhaps none)."""
    text = text.strip()
    if not text:
        return f"{NO_OUTPUT} (no tool call)"
    return f"{TEXT_INSTEAD_OF_TOOL_CALL}: {_excerpt(text)}"


def invalid_tool_arguments(arguments: str) -> str:
    """A call of the step's tool whose arguments are not JSON."""
    return f"the tool call's arguments are not valid JSON: {_excerpt(arguments)}"


def other_tools_called(called: Sequence[str], name: str) -> str:
    """An answer that called tools, none of them the step's tool ``name``."""
    return f"the answer called {', '.join(map(repr, called))}, not {name!r}"


def not_json(text: str) -> str:
    """An answer whose text holds no JSON."""
    return f"the answer is not a JSON object: {_excerpt(text)}"


def not_an_object(text: str) -> str:
    """An answer whose text is JSON, but not an object."""
    return f"the answer is JSON but not an object: {_excerpt(text)}"


def not_a_message(reply: object) -> str:
    """A runnable that returned ``reply``, which is neither a message nor text."""
    return f"the model returned {type(reply).__name__!r}, not a message"


def _excerpt(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")
