"""A run's page from a journal file alone.

A journal (`langtree.runtime.durable._journal`) keeps, for each call, the answers its model gave:
the step, the node instance, the sample, the model's key, the raw output, why it was not
valid, the provider's usage and the latency. That is what its page shows: the tree of
the node instances called, each call with its answers, the invalid ones marked.

It keeps no prompts (a call is known by the key of its messages, not by the messages),
no plan, no values that inputs, defaults, mappings or transforms wrote, and so no
provenance: the page of a saved result (`RunResult.to_json()`, or
`RunResult.to_html()` at once) has them all.
"""

from __future__ import annotations

from pathlib import Path

from langtree.runtime.durable._journal import JournalEntry, journal_answers
from langtree.runtime.page._saved import RUN_HINT, SavedCall, SavedRun

__all__ = ["journal_run"]


def journal_run(path: Path) -> SavedRun:
    """The page's data of every answer the journal file holds.

    Raises:
        ExecutionError: The file holds no journal, is damaged, or cannot be read.
    """
    return SavedRun(
        origin="journal",
        tasks={},
        trace=tuple(_call(entry) for entry in journal_answers(path, RUN_HINT)),
    )


def _call(entry: JournalEntry) -> SavedCall:
    # A journal's answers of one call are its attempts: answer 2 is the retry after
    # answer 1 was invalid.
    return SavedCall(
        step_id=entry.step_id,
        node_path=entry.node_path,
        fields=(),
        model=entry.model,
        attempt=entry.answer,
        sample=entry.sample,
        usage=dict(entry.usage) if entry.usage is not None else None,
        latency=entry.latency,
        raw_output=entry.raw_output,
        error=entry.error,
        failure=None if entry.valid else "invalid_output",
        call=entry.key,
    )
