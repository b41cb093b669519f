"""How a `RunResult` shows in a notebook and in ``repr``.

The display (Markdown, see `langtree._display`) opens with one line on what the run
cost, then each task's values as JSON, then what failed and what was skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from pydantic_core import to_jsonable_python

from langtree._display import clipped, code, counted, fenced, table
from langtree.runtime.observe._usage import CallTokens, Usage, run_tokens

if TYPE_CHECKING:
    from langtree.runtime.observe._result import RunResult

__all__ = ["result_markdown", "run_summary"]

MAX_JSON_LINES = 200
"""Lines of a task's JSON shown; the rest is left out, and the display says so."""


def result_markdown(result: RunResult) -> str:
    """The notebook display of a run: the summary, the tasks, the failures."""
    parts = [f"**Run**: {_summary(result)}"]
    if len(result.usage.by_model) > 1:
        parts.append(_models_table(result))
    parts.extend(_tasks(result))
    if result.errors:
        parts.extend(_errors(result))
    if result.skipped:
        parts.append(_skipped(result))
    return "\n\n".join(parts)


def _summary(result: RunResult) -> str:
    return run_summary(result.usage, result.trace, transforms=len(result.transforms))


def run_summary(usage: Usage, trace: Sequence[CallTokens], *, transforms: int) -> str:
    """One line on what a run did: its calls, retries, failures and tokens, the answers
    it replayed and the transforms it computed (the notebook display's first line, and
    the page's).

    Args:
        usage: The run's totals.
        trace: Its calls, as `run_tokens()` counts them.
        transforms: How many transforms it computed.
    """
    parts = [counted(usage.calls, "call")]
    if usage.retries:
        parts.append(counted(usage.retries, "retry", "retries"))
    if usage.failed_calls:
        parts.append(f"{usage.failed_calls:,} failed")
    parts.append(_tokens_text(trace))
    if replayed := sum(call.replayed for call in trace):
        parts.append(counted(replayed, "answer") + " replayed")
    if transforms:
        parts.append(counted(transforms, "transform"))
    return ", ".join(parts)


def _tokens_text(trace: Sequence[CallTokens]) -> str:
    made = [call for call in trace if not call.replayed]
    text = counted(run_tokens(made), "token")
    if any(call.answered and not call.usage for call in made):
        text += " (counted from the prompts where the model reported no usage)"
    return text


def _models_table(result: RunResult) -> str:
    rows = (
        [
            code(model),
            f"{usage.calls:,}",
            f"{run_tokens(record for record in result.trace if record.model == model):,}",
        ]
        for model, usage in result.usage.by_model.items()
    )
    return table(["model", "calls", "tokens"], rows)


def _tasks(result: RunResult) -> Iterator[str]:
    """Each task's values as JSON; a task that does not validate says why first."""
    for tag in result.tasks:
        values = _json(result.dump(tag), f"result.dump({tag!r})")
        yield f"{code(tag)}\n\n{values}"
    for tag, reason in result.invalid.items():
        values = _json(to_jsonable_python(result.partials.get(tag)), f"result.partial({tag!r})")
        yield f"{code(tag)} does not validate\n\n{fenced(reason, 'text')}\n\n{values}"


def _json(data: object, source: str) -> str:
    """``data`` as indented JSON in a code block, clipped; ``source`` gives all of it."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return fenced(clipped(text, MAX_JSON_LINES, f"{source} has them all"), "json")


def _errors(result: RunResult) -> Iterator[str]:
    yield f"**{counted(len(result.errors), 'step instance')} failed**"
    for error in result.errors:
        yield f"{code(error.step_id)} at {code(error.node_path)}\n\n{fenced(str(error), 'text')}"


def _skipped(result: RunResult) -> str:
    lines = (
        f"- {code(record.step_id)} at {code(record.node_path)}, because of {code(record.because)}"
        for record in result.skipped
    )
    return f"**{counted(len(result.skipped), 'skipped instance')}**\n\n" + "\n".join(lines)
