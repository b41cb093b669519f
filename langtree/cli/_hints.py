"""What the command line says of an error: its flags where ``RunStructure.run`` speaks
Python.

A run's errors are worded for Python: their hints name ``run(..., max_retries=...)``,
``ModelConfig(...)``, ``RetryPolicy(...)``, ``variables={...}`` and where the result
is (``error.result``). Each keeps its problem apart (``problem``, or ``reached`` for a
limit), and the command line tells it with a hint of its own that names the flags
(`flag_for()`), or with none where the command line says what follows itself (what had
finished is printed, or kept in ``--output``).
"""

from __future__ import annotations

from collections.abc import Mapping

from langtree.cli._flags import flag_for
from langtree.errors import MissingVariablesError
from langtree.runtime import (
    Diagnosis,
    JournalWriteError,
    RunInterrupted,
    RunLimitError,
    StepFailedError,
)

__all__ = ["error_text"]

# --method sets the method of a chat model; an LLMProvider sets it per model.
_METHOD = "--method, or with ModelConfig(model, method=...) in an LLMProvider"

_STEP_HINTS: Mapping[Diagnosis, str] = {
    "invalid_output": "check the model's support for structured output (or choose another "
    f"method with {_METHOD}), or raise {flag_for('max_retries')}",
    "truncated": "the model stopped at its output limit; raise the max_tokens of the model "
    f"that --model names ({flag_for('usage_limits.total_tokens')} limits the whole run), or "
    "split the step's fields (@sequential)",
    "prose": "the model answered in text instead of calling the tool: servers that ignore "
    "tool_choice (llama.cpp, Ollama) need --method json_schema (in an LLMProvider: "
    "ModelConfig(model, method='json_schema'))",
    "transient": "the provider kept failing (timeouts, rate limits, server errors); raise "
    f'{flag_for("call_timeout")} or "retry": {{"max_retries": ...}} in --config, or lower '
    f"{flag_for('max_concurrency')}",
    "permanent": "retrying cannot fix this (credentials, model name, request settings); check "
    "the model that --model names against the error above",
}


def error_text(error: BaseException) -> str:
    """What the command line says of ``error``: as it is, but the errors of a run with
    the command line's hints (see the module)."""
    match error:
        case StepFailedError():
            return _hinted(error.problem, _STEP_HINTS[error.diagnosis])
        case RunLimitError():
            return _hinted(error.reached, f"raise {flag_for(error.setting)}")
        case JournalWriteError():
            return _hinted(error.problem, _file_hint(error))
        case MissingVariablesError():
            return _hinted(error.problem, "give " + " ".join(f"--var {n}=..." for n in error.names))
        case RunInterrupted():
            return error.problem
    return str(error)


def _hinted(problem: str, hint: str) -> str:
    return f"{problem}\n  hint: {hint}"


def _file_hint(error: JournalWriteError) -> str:
    """How to go on with a journal or cache that could not record an answer."""
    flag = f"--{error.kind}"
    if error.read_only:
        return (
            f"to make new calls, copy the {error.kind} to a folder this process may write "
            f"to, and give {flag} the copy"
        )
    return (
        f"free space on its disk, or give {flag} a file on another disk; running the same "
        f"command again replays the answers the {error.kind} holds"
    )
