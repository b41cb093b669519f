"""How values appear in prompts, and the marker for values not known yet.

Strings appear as they are, numbers and booleans as text, Enum members as their value,
lists, dicts and nodes as indented JSON. A value that an earlier step will produce is a
:class:`Pending` marker, so a whole run can be previewed without a model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

__all__ = ["Pending", "contains_pending", "render_value"]


@dataclass(frozen=True, slots=True)
class Pending:
    """A value that the step ``step_id`` will produce."""

    step_id: str

    def __str__(self) -> str:
        return f"[pending: produced by step {self.step_id}]"


def render_value(value: object) -> str:
    """The text a value takes in a prompt.

    >>> render_value("plain text"), render_value(2.5), render_value(True)
    ('plain text', '2.5', 'true')
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
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, Enum):
        return render_value(value.value)
    if value is None:
        return "null"
    return json.dumps(_jsonable(value), indent=2, ensure_ascii=False)


def _jsonable(value: object) -> object:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Pending):
        return str(value)
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(item) for item in value]
    return to_jsonable_python(value)


def contains_pending(value: object) -> bool:
    """Whether a value is, or holds, a :class:`Pending` marker."""
    if isinstance(value, Pending):
        return True
    if isinstance(value, dict):
        return any(contains_pending(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(contains_pending(item) for item in value)
    return False
