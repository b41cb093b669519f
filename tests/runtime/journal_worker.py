"""A run of 551 calls that a test kills and resumes: ``python journal_worker.py JOURNAL
CALL_LOG RESULT RUN_NUMBER [STALL_AFTER]`` runs the report tree with the journal, appending
one line per model call (``RUN_NUMBER<TAB>node path<TAB>fields``) to CALL_LOG as the call
starts, and writes the result's JSON to RESULT when the run finishes.

With STALL_AFTER, the calls after the first STALL_AFTER of this process never answer: a
run the test means to kill cannot finish first, however late a busy machine lets the
test look at the log."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path

from pydantic import Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.testing import FakeChatModel
from langtree.testing.fake_model import FakeRequest

SECTIONS, PARAGRAPHS, MAX_CONCURRENCY = 50, 10, 8


class Paragraph(TreeNode):
    """Summarise the paragraph."""

    text: str = Field(description="The paragraph.")
    summary: str = Field(description="One sentence.")


class Section(TreeNode):
    """Summarise the section from its paragraphs."""

    heading: str = Field(description="The heading.")
    paragraphs: list[Paragraph] = Field(default=[], description="The paragraphs.")
    summary: str = Field(description="Two sentences.")


class TaskReport(TreeNode):
    """Summarise the report."""

    sections: list[Section] = Field(default=[], description="The sections.")
    digest: str = Field(description="One paragraph.")


INPUTS = {
    TaskReport: {
        "sections": [
            {"heading": f"S{s}", "paragraphs": [{"text": f"p{s}.{p}"} for p in range(PARAGRAPHS)]}
            for s in range(SECTIONS)
        ]
    }
}


def answer(request: FakeRequest) -> Mapping[str, object]:
    """The same answer for the same call, in any run."""
    return {name: f"{name} of {request.node_path}" for name in request.fields}


def structure(model: FakeChatModel) -> RunStructure:
    tree = RunStructure(provider=LLMProvider({"fake": model}))
    tree.add(TaskReport)
    return tree


STALLED = 3600.0
"""The latency of a call past STALL_AFTER: longer than any test waits."""


def main(journal: str, call_log: str, result: str, run_number: str, stall_after: str = "") -> None:
    made = 0
    with Path(call_log).open("a", buffering=1) as log:

        def latency(request: FakeRequest) -> float:
            nonlocal made
            made += 1
            if stall_after and made > int(stall_after):
                return STALLED
            log.write(f"{run_number}\t{request.node_path}\t{','.join(request.fields)}\n")
            return 0.01

        model = FakeChatModel(responder=answer, latency=latency)
        finished = structure(model).run(INPUTS, journal=journal, max_concurrency=MAX_CONCURRENCY)
    Path(result).write_text(json.dumps(finished.dump(TaskReport)))


if __name__ == "__main__":
    main(*sys.argv[1:6])
