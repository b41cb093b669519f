"""A run whose result holds an error: the model leaves out the note of the second of two
parts, and the run goes on (``on_error="continue"``). What a result saves and what
``langtree show`` makes of it are tested on this run."""

from pathlib import Path

from pydantic import Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.runtime import RunResult
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest, ResponderResult


class Part(TreeNode):
    """One part."""

    name: str = Field(description="The name.")
    note: str = Field(description="A note.")


class TaskParts(TreeNode):
    """Describe the parts."""

    parts: list[Part] = Field(default=[], description="The parts.")
    summary: str = Field(description="The summary.")


def second_note_missing(request: FakeRequest) -> ResponderResult:
    if request.node_path == "task.parts.parts[1]":
        return {"note": None}
    return {name: f"{name} of {request.node_path}" for name in request.fields}


def parts_run(journal: Path | None = None) -> RunResult:
    """The run, with its answers recorded in ``journal`` if one is given."""
    model = FakeChatModel(responder=second_note_missing)
    structure = RunStructure({"on_error": "continue"}, provider=LLMProvider({"default": model}))
    structure.add(TaskParts)
    inputs = {TaskParts: {"parts": [{"name": "a"}, {"name": "b"}]}}
    return structure.run(inputs, max_retries=0, journal=journal)
