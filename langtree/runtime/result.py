"""What a run returns: the filled root tasks, and one trace record per model call."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
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
        sample: Which of a resampled step's samples the call belongs to (1 to n; 1 when
            the step does not resample).
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
    sample: int = 1
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
            "sample": self.sample,
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

    The raw number behind a numerical ``@resampled[f]->fn`` aggregation (DESIGN D12) is
    not part of the user's class, so the instance holds only the enum member it maps to;
    the number is in :attr:`resampled_values`, and :meth:`dump` and :meth:`to_json` add it
    next to the field as ``f_resampled_value``.

    Attributes:
        tasks: Each root task's instance, by tag.
        trace: One record per model call, in the order the calls finished.
        resampled_values: The aggregated number of each numerically aggregated field, by
            ``(node path, field)``, e.g. ``("task.rate_review", "rating"): 2.6``.
    """

    tasks: Mapping[str, TreeNode]
    trace: tuple[TraceRecord, ...]
    resampled_values: Mapping[tuple[str, str], float] = field(default_factory=dict)

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

    def dump(self, key: type[TreeNode] | str) -> dict[str, object]:
        """A task's values as JSON-ready data, with each ``f_resampled_value`` added.

        ``{"rating": "GOOD", "rating_resampled_value": 2.6, ...}``: the number goes into
        the dict of the node instance it was aggregated for, right after the field.
        """
        task = self[key]
        tag = next(name for name, value in self.tasks.items() if value is task)
        data: dict[str, object] = task.model_dump(mode="json")
        for (node_path, name), number in self.resampled_values.items():
            target = _located(data, tag, node_path)
            if target is not None and name in target:
                items = list(target.items())
                at = [key for key, _ in items].index(name) + 1
                items.insert(at, (f"{name}_resampled_value", number))
                target.clear()
                target.update(items)
        return data

    def to_json(self) -> str:
        """The tasks' values (see :meth:`dump`) and the trace as indented JSON text."""
        data = {
            "tasks": {tag: self.dump(tag) for tag in self.tasks},
            "trace": [record.to_dict() for record in self.trace],
        }
        return json.dumps(data, indent=2, ensure_ascii=False)


_PART = re.compile(r"([^.\[\]]+)((?:\[\d+\])*)")


def _located(data: dict[str, object], tag: str, node_path: str) -> dict[str, object] | None:
    """The dict at ``node_path`` (``task.x.items[0]``) inside the dump of task ``tag``."""
    if node_path != tag and not node_path.startswith(f"{tag}."):
        return None
    current: object = data
    rest = node_path[len(tag) + 1 :]
    for part in rest.split(".") if rest else []:
        match = _PART.fullmatch(part)
        if match is None or not isinstance(current, dict):
            return None
        current = current.get(match.group(1))
        for index in re.findall(r"\[(\d+)\]", match.group(2)):
            if not isinstance(current, list) or int(index) >= len(current):
                return None
            current = current[int(index)]
    return current if isinstance(current, dict) else None
