"""What a run returns: the filled root tasks, and one trace record per model call."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar, overload

from langchain_core.messages import BaseMessage
from pydantic_core import to_jsonable_python

from langtree.structure.tree import task_tag
from langtree.structure.tree_node import TreeNode

__all__ = ["RunResult", "TraceRecord"]

_Task = TypeVar("_Task", bound=TreeNode)


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceRecord:
    """One model call (one attempt of one step instance).

    Attributes:
        step_id: The plan step (``<node tag>:<fields>``).
        node_path: The node instance, e.g. ``task.report.sections[0]``.
        fields: The fields the call generates.
        model: The provider's key of the model called.
        attempt: 1 for the first call of the instance, 2 for the first retry, ...
        messages: The messages sent (a retry adds one human message with the feedback).
        token_count: Tokens of the step's prompt, as the prompt stage counted them.
        usage: The provider's ``usage_metadata`` of the reply, when it reports one.
        latency: Seconds the call took.
        raw_output: The reply as the model gave it: the structured-output tool call's
            arguments as JSON, else the reply's text.
        error: Why the output was not accepted (``None``: accepted).
    """

    step_id: str
    node_path: str
    fields: tuple[str, ...]
    model: str
    attempt: int
    messages: tuple[BaseMessage, ...]
    token_count: int
    usage: Mapping[str, object] | None
    latency: float
    raw_output: str
    error: str | None

    def to_dict(self) -> dict[str, object]:
        """The record as JSON-ready data (messages as ``{"role", "content"}``)."""
        return {
            "step_id": self.step_id,
            "node_path": self.node_path,
            "fields": list(self.fields),
            "model": self.model,
            "attempt": self.attempt,
            "messages": [
                {"role": message.type, "content": message.text} for message in self.messages
            ],
            "token_count": self.token_count,
            "usage": to_jsonable_python(self.usage),
            "latency": self.latency,
            "raw_output": self.raw_output,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    """The filled root tasks of a run, validated against the user's classes.

    ``result[TaskClass]`` (or ``result["task.name"]``) gives the instance.

    Attributes:
        tasks: Each root task's instance, by tag.
        trace: One record per model call, in the order the calls finished.
    """

    tasks: Mapping[str, TreeNode]
    trace: tuple[TraceRecord, ...]

    @overload
    def __getitem__(self, key: type[_Task]) -> _Task: ...

    @overload
    def __getitem__(self, key: str) -> TreeNode: ...

    def __getitem__(self, key: type[TreeNode] | str) -> TreeNode:
        tag = key if isinstance(key, str) else task_tag(key.__name__)
        if tag is None or tag not in self.tasks:
            tasks = ", ".join(repr(name) for name in self.tasks)
            raise KeyError(f"{key!r} is not a task of this run; its tasks are {tasks}")
        return self.tasks[tag]

    def to_json(self) -> str:
        """The tasks' values and the trace as indented JSON text."""
        data = {
            "tasks": {tag: task.model_dump(mode="json") for tag, task in self.tasks.items()},
            "trace": [record.to_dict() for record in self.trace],
        }
        return json.dumps(data, indent=2, ensure_ascii=False)
