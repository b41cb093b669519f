"""Runs of a tree of 551 calls on one journal, each killed by its own model, then one run
to the end: ``python journal_worker.py FOLDER KILL_AFTER...``.

Each run is a process forked from this one (the imports are paid once), with the journal
FOLDER/run.sqlite. Run ``n`` (from 0) kills itself with SIGKILL when its model is asked for
an answer after it gave the ``n``-th KILL_AFTER answers (failures counted), so no timing
decides where a run stops; the run after the last KILL_AFTER goes to the end and writes
the result's JSON to FOLDER/result.json. The worker prints how each run ended (``killed``,
``finished``, or its exit code), one line per run.

The model (`ReportModel`) gives some calls one or two invalid answers before a valid one
and fails some once with a transient error, in every run, so that a kill finds answers of
every kind in flight. It appends to FOLDER/calls.log one line ``RUN<TAB>EVENT<TAB>CALL``
as a call reaches it (``sent``) and one as it fails it (``failed``); CALL is the node
path, the fields and which of the call's answers is asked for (``#1``, ``#2``, ``#3``).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import threading
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from pydantic import Field

from langtree import LLMProvider, RetryPolicy, RunStructure, TreeNode
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest

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

RETRY = RetryPolicy(initial_delay=0.0)
"""No backoff after the model's transient failures, to keep the runs quick."""


def answer(request: FakeRequest) -> Mapping[str, object]:
    """The same answer for the same call, in any run."""
    return {name: f"{name} of {request.node_path}" for name in request.fields}


def structure(model: FakeChatModel) -> RunStructure:
    tree = RunStructure(provider=LLMProvider({"fake": model}))
    tree.add(TaskReport)
    return tree


class ReportModel:
    """The answers of the report's calls: a call whose node path's CRC-32 is 0 modulo 8
    is answered invalid twice (a missing field, then a number), 1 or 2 modulo 8 once, and
    3 modulo 8 fails once (a ``ConnectionError``) the first time this process is asked.

    Args:
        log: Where to log the calls (``None``: nowhere).
        run: The run's number, logged.
        kill_after: The answers after which the process kills itself (``None``: never).
    """

    def __init__(self, log: TextIO | None = None, run: int = 0, kill_after: int | None = None):
        self.log = log
        self.run = run
        self.kill_after = kill_after
        self.given = 0
        self.failed: set[str] = set()

    def model(self) -> FakeChatModel:
        """A fake model that answers with this one; its calls take 1 to 3 ms."""
        return FakeChatModel(responder=self.respond, latency=self.latency)

    def latency(self, request: FakeRequest) -> float:
        """Log the call as it reaches the model."""
        self._write("sent", request)
        return 0.001 * (1 + _crc(request) % 3)

    def respond(self, request: FakeRequest) -> Mapping[str, object]:
        """The call's answer, or its failure, or the end of the process."""
        if self.given == self.kill_after:
            os.kill(os.getpid(), signal.SIGKILL)  # the process ends here
        self.given += 1
        call, kind = _call(request), _crc(request) % 8
        if kind == 3 and call not in self.failed:
            self.failed.add(call)
            self._write("failed", request)
            raise ConnectionError("the connection dropped")
        asked = _asked(request)
        if asked == 1 and kind in (0, 1, 2):
            return {}
        if asked == 2 and kind == 0:
            return dict.fromkeys(request.fields, 5)
        return answer(request)

    def _write(self, event: str, request: FakeRequest) -> None:
        if self.log is not None:
            self.log.write(f"{self.run}\t{event}\t{_call(request)}\n")


def _crc(request: FakeRequest) -> int:
    return zlib.crc32(str(request.node_path).encode())


def _asked(request: FakeRequest) -> int:
    """Which of its call's answers a request asks for: the feedback after an invalid
    answer names the problem."""
    last = request.messages[-1].text
    if "Field required" in last:
        return 2
    if "valid string" in last:
        return 3
    return 1


def _call(request: FakeRequest) -> str:
    return f"{request.node_path}:{','.join(request.fields)}#{_asked(request)}"


def run_once(folder: Path, run: int, kill_after: int | None) -> None:
    """One run on the journal, killed after ``kill_after`` answers (``None``: to the end)."""
    with (folder / "calls.log").open("a", buffering=1) as log:
        model = ReportModel(log, run, kill_after).model()
        finished = structure(model).run(
            INPUTS,
            journal=folder / "run.sqlite",
            max_concurrency=MAX_CONCURRENCY,
            retry=RETRY,
        )
    (folder / "result.json").write_text(json.dumps(finished.dump(TaskReport)))


def warm_up() -> None:
    """The prompts of a section of one paragraph, assembled offline, so that the forked
    runs do not each pay for what a process's first run imports and loads. A run would
    start LangTree's loop thread: a thread is not copied into the forks, and a lock it
    held would stay held in them."""
    tiny = {TaskReport: {"sections": [{"heading": "S", "paragraphs": [{"text": "p"}]}]}}
    structure(ReportModel().model()).prompts(tiny)
    if threading.active_count() != 1:
        raise SystemExit(f"a thread outlived the warm-up: {threading.enumerate()}")


def main(folder: str, *kill_after: str) -> None:
    warm_up()
    forks = multiprocessing.get_context("fork")
    points: list[int | None] = [*map(int, kill_after), None]
    for run, point in enumerate(points):
        child = forks.Process(target=run_once, args=(Path(folder), run, point))
        child.start()
        child.join()
        ended = {0: "finished", -signal.SIGKILL: "killed"}
        print(ended.get(child.exitcode, f"exit code {child.exitcode}"), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
