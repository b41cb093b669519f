"""How values appear in prompts, and the markers for values not known yet.

Strings appear as they are, numbers and booleans as text, Enum members as their value,
``None`` as ``null``, other scalars (dates, decimals, paths) as their JSON text without
quotes, lists, dicts and nodes as indented JSON (sets sorted, so that the same values
always give the same text). A value that an earlier step will produce is a
:class:`Pending` marker, so a whole run can be previewed without a model; a list of nodes
whose elements a step will produce is a :class:`PendingList`, which holds what is already
known of every one of its elements.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

__all__ = ["Pending", "PendingList", "contains_pending", "pending_list", "render_value"]


@dataclass(frozen=True, slots=True)
class Pending:
    """A value that the step ``step_id`` will produce."""

    step_id: str

    def __str__(self) -> str:
        return f"[pending: produced by step {self.step_id}]"


@dataclass(frozen=True, slots=True, eq=False)
class PendingList(Pending):
    """A list of nodes whose elements the step ``step_id`` will produce.

    Attributes:
        element: What is known of every element: a dict of field values, or for a
            nested list (``list[list[Node]]``) another :class:`PendingList`.
    """

    element: object = field(default_factory=dict)


def pending_list(step_id: str, depth: int) -> PendingList:
    """A :class:`PendingList` of ``depth`` list levels (at least one), elements empty.

    >>> pending_list("task.a:items", 2).element
    PendingList(step_id='task.a:items', element={})
    """
    element: object = {}
    for _ in range(depth - 1):
        element = PendingList(step_id, element)
    return PendingList(step_id, element)


def render_value(value: object) -> str:
    """The text a value takes in a prompt.

    >>> render_value("plain text"), render_value(2.5), render_value(True), render_value(None)
    ('plain text', '2.5', 'true', 'null')
    >>> print(render_value({"a": [1, 2]}))
    {
      "a": [
        1,
        2
      ]
    }
    """
    if isinstance(value, str | Pending):
        return str(value)
    if isinstance(value, Enum):
        return render_value(value.value)
    jsonable = _jsonable(value)
    if isinstance(jsonable, str):
        return jsonable
    return json.dumps(jsonable, indent=2, ensure_ascii=False)


def _jsonable(value: object) -> object:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Pending):
        return str(value)
    if isinstance(value, Enum):
        return _jsonable(value.value)
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, set | frozenset):
        items = [_jsonable(item) for item in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    return to_jsonable_python(value, fallback=str)


def contains_pending(value: object) -> bool:
    """Whether a value is, or holds, a :class:`Pending` marker."""
    if isinstance(value, Pending):
        return True
    if isinstance(value, dict):
        return any(contains_pending(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(contains_pending(item) for item in value)
    return False
