"""A run's page as HTML text, from its data (`SavedRun`)."""

from __future__ import annotations

import functools
import json

from jinja2 import StrictUndefined, Template
from jinja2.sandbox import ImmutableSandboxedEnvironment

from langtree._display import counted
from langtree.runtime.observe._result_display import run_summary
from langtree.runtime.observe._usage import reported_tokens
from langtree.runtime.page._diagram import LINE_HEIGHT, made_by, plan_diagram, waits_for
from langtree.runtime.page._saved import SavedCall, SavedRun
from langtree.runtime.page._template import PAGE_TEMPLATE
from langtree.runtime.page._tree import run_tree

__all__ = ["page_html"]

JOURNAL_NOTE = (
    "This page shows a journal: the answers its model calls received, one block per "
    "call. A journal keeps no prompts, no plan and no values but the answers (so no "
    "provenance either): the page of a saved result has them all (RunResult.to_html(), "
    "or langtree show on the JSON that RunResult.to_json() wrote)."
)

NO_PLAN_NOTE = (
    "This result holds no plan (it was saved by an earlier LangTree, or not made by a run): "
    "no plan is shown."
)


def page_html(run: SavedRun) -> str:
    """The page of a run: one HTML document, with nothing to fetch and no script."""
    tree = run_tree(run)
    steps = run.plan.steps if run.plan is not None else ()
    return _template().render(
        title=", ".join(task.tag for task in tree.tasks) or "no calls",
        summary=_summary(run),
        notes=_notes(run),
        tree=tree,
        tasks_known=run.origin == "result",
        plan=run.plan,
        diagram=plan_diagram(steps, tree.failed_steps),
        waits_for=waits_for(steps),
        line_height=LINE_HEIGHT,
    )


@functools.cache
def _template() -> Template:
    # Autoescaping is what keeps a prompt, an answer or a value from becoming markup;
    # the sandbox and StrictUndefined keep a mistake in the template from passing unseen.
    environment = ImmutableSandboxedEnvironment(
        autoescape=True, undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )
    environment.filters.update(
        seconds=_seconds,
        tokens=_tokens,
        json=_json,
        text=_text,
        made_by=made_by,
        counted=counted,
    )
    return environment.from_string(PAGE_TEMPLATE)


def _notes(run: SavedRun) -> list[str]:
    if run.origin == "journal":
        return [JOURNAL_NOTE]
    return [NO_PLAN_NOTE] if run.plan is None else []


def _summary(run: SavedRun) -> str:
    """One line on what the run did: its calls, failures and tokens (a journal: its
    answers)."""
    if run.origin == "journal":
        return _journal_summary(run)
    return run_summary(run.usage, run.trace, transforms=len(run.transforms))


def _journal_summary(run: SavedRun) -> str:
    calls = len({call.call for call in run.trace})
    parts = [f"{counted(len(run.trace), 'answer')} to {counted(calls, 'call')}"]
    if invalid := sum(call.error is not None for call in run.trace):
        parts.append(f"{invalid:,} invalid")
    if reported := sum(reported_tokens(call.usage) or 0 for call in run.trace):
        parts.append(f"{reported:,} tokens as the providers reported")
    return ", ".join(parts)


def _tokens(call: SavedCall) -> str:
    """A call's tokens: the provider's figures, else the prompt's count."""
    reported = reported_tokens(call.usage)
    if reported is not None:
        usage = call.usage or {}
        split = [
            f"{figure:,} {name}"
            for key, name in (("input_tokens", "in"), ("output_tokens", "out"))
            if isinstance(figure := usage.get(key), int)
        ]
        return f"{reported:,} tokens" + (f" ({', '.join(split)})" if split else "")
    if not call.answered:
        return "no tokens (the call got no answer)"
    if call.token_count is not None:
        return f"{call.token_count:,} prompt tokens (counted; the provider reported none)"
    return "no tokens reported"


def _seconds(value: float) -> str:
    return f"{value:.3f} s"


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _text(value: object) -> str:
    """A value as the page shows it: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else _json(value)
