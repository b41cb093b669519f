"""How values appear in prompts, and the markers for values not known yet.

Strings appear as they are, numbers and booleans as text, Enum members as their value,
``None`` as ``null``, other scalars (dates, decimals, paths) as their JSON text without
quotes, lists, dicts and nodes as indented JSON (sets sorted, so that the same values
always give the same text). A value that an earlier step will produce is a
`Pending` marker, so a whole run can be previewed without a model; a list of nodes
whose elements a step will produce is a `PendingList`, which holds what is already
known of every one of its elements. A source that holds no value at all when a command
reads it (never produced) is `Absent`, which is not ``None``: a target takes its
default for it.

Values nest as deep as the classes that hold them, hundreds of levels perhaps, so they
are walked with an explicit stack, never by recursion. Their text is never altered: a
string holding a lone surrogate (not Unicode, so no prompt can be encoded with it) is
refused with an error that names where it stands.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from langtree.errors import ExecutionError

__all__ = [
    "Absent",
    "Pending",
    "PendingList",
    "check_unicode",
    "contains_pending",
    "first_absent",
    "json_data",
    "pending_list",
    "rebuild",
    "render_value",
    "unicode_problem",
]

_MAX_DEPTH = 10_000
"""The deepest a value may nest: deeper, it is taken to contain itself."""

_ENCODER = json.JSONEncoder(ensure_ascii=False)
_JSON_SCALARS = frozenset({str, int, float, bool})
_END = object()
_SURROGATE = re.compile("[\ud800-\udfff]")
_INPUT_HINT = (
    "decode the text strictly where it is read (a lone surrogate comes from "
    "errors='surrogateescape' or a broken '\\ud800' escape); LangTree never alters the "
    "values it is given"
)
_MODEL_HINT = (
    "the model escaped a lone surrogate in its JSON ('\\ud800'); LangTree never alters "
    "the values it is given: run again, or use another model"
)


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
            nested list (``list[list[Node]]``) another `PendingList`.
    """

    element: object = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Absent:
    """A mapping's source that holds no value, as opposed to ``None``: never produced
    (its step failed or was skipped in a run that went on), or a node on its path is absent.

    Attributes:
        source: Where it was read, e.g. ``task.research.documents[1].summary`` (empty
            until the command that reads it says where).
    """

    source: str = ""


def first_absent(value: object) -> Absent | None:
    """The value if it is `Absent`, else the first one in its lists, or ``None``.

    Examples:
        >>> first_absent([["a"], [Absent("x.y")]])
        Absent(source='x.y')
    """
    return next((item for item in _walk(value, (list,)) if isinstance(item, Absent)), None)


def pending_list(step_id: str, depth: int) -> PendingList:
    """A `PendingList` of ``depth`` list levels (at least one), elements empty.

    Examples:
        >>> pending_list("task.a:items", 2).element
        PendingList(step_id='task.a:items', element={})
    """
    element: object = {}
    for _ in range(depth - 1):
        element = PendingList(step_id, element)
    return PendingList(step_id, element)


def render_value(value: object) -> str:
    """The text a value takes in a prompt.

    Raises:
        ExecutionError: The value nests deeper than 10,000 levels (it contains itself).

    Examples:
        >>> render_value("plain text"), render_value(2.5), render_value(True), render_value(None)
        ('plain text', '2.5', 'true', 'null')
        >>> from enum import Enum
        >>> class Color(str, Enum):
        ...     RED = "red"
        >>> render_value(Color.RED)
        'red'
        >>> print(render_value({"a": [1, 2]}))
        {
          "a": [
            1,
            2
          ]
        }
    """
    # An Enum member first: one that is also a str (``class Color(str, Enum)``) would
    # otherwise show as ``Color.RED`` rather than its value, as it does inside a list.
    if isinstance(value, Enum):
        return render_value(value.value)
    if isinstance(value, str | Pending):
        return str(value)
    data = json_data(value)
    if isinstance(data, str):
        return data
    return _json_text(data)


def json_data(value: object) -> object:
    """A value as JSON data, as ``model_dump(mode="json")`` gives it: Enum members are
    their values, dates, times, decimals and paths their JSON text, models (assets too)
    the dicts of their fields, tuples lists, sets sorted lists; a `Pending` marker is
    its text. The containers are new: nothing is shared with ``value``.

    Raises:
        ExecutionError: The value nests deeper than 10,000 levels (it contains itself).

    Examples:
        >>> from datetime import date
        >>> json_data({"due": date(2024, 5, 1), "tags": {"b", "a"}})
        {'due': '2024-05-01', 'tags': ['a', 'b']}
    """
    return rebuild(value, _json_level)


def rebuild(value: object, unfold: Callable[[object], object]) -> object:
    """``value`` rebuilt level by level with an explicit stack.

    Args:
        value: What to rebuild.
        unfold: Turns one value into a new dict or list whose items are still to be
            rebuilt (they are replaced in place), or into a value taken as it is.

    Raises:
        ExecutionError: The value nests deeper than 10,000 levels (it contains itself).
    """
    top = unfold(value)
    stack: list[tuple[dict[object, object] | list[object], int]] = []
    if isinstance(top, dict | list):
        stack.append((top, 1))
    while stack:
        container, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise _too_deep()
        if isinstance(container, dict):
            for key, item in container.items():
                shape = container[key] = unfold(item)
                if isinstance(shape, dict | list):
                    stack.append((shape, depth + 1))
        else:
            for index, item in enumerate(container):
                shape = container[index] = unfold(item)
                if isinstance(shape, dict | list):
                    stack.append((shape, depth + 1))
    return top


def _json_level(value: object) -> object:
    """One level of ``value`` as JSON data (see `rebuild()`)."""
    if value is None or type(value) in _JSON_SCALARS:
        return value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Pending):
        return str(value)
    while isinstance(value, Enum):
        value = value.value
    if isinstance(value, dict):
        return {str(key): item for key, item in value.items()}
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=_sort_key)
    return to_jsonable_python(value, fallback=str)


def _sort_key(item: object) -> str:
    return json.dumps(json_data(item), sort_keys=True)


def _json_text(data: object) -> str:
    """``json.dumps(data, indent=2, ensure_ascii=False)`` for JSON data, with an explicit
    stack of the containers being written: their entries still to come, the indent of
    those entries, the closing line, and whether they are keyed (a dict)."""
    parts: list[str] = []
    stack: list[tuple[Iterator[object], str, str, bool]] = []
    value = data
    while True:
        if isinstance(value, dict | list) and value:
            keyed = isinstance(value, dict)
            indent = "\n" + "  " * len(stack)
            parts.append("{" if keyed else "[")
            entries = iter(value.items() if isinstance(value, dict) else value)
            stack.append((entries, indent + "  ", indent + ("}" if keyed else "]"), keyed))
            separator = ""
        else:
            parts.append(_ENCODER.encode(value))
            separator = ","
        while stack:
            entries, inner, closing, keyed = stack[-1]
            entry = next(entries, _END)
            if entry is _END:
                parts.append(closing)
                stack.pop()
                separator = ","
            elif keyed:
                assert isinstance(entry, tuple)
                key, value = entry
                parts.append(separator + inner + _ENCODER.encode(key) + ": ")
                break
            else:
                value = entry
                parts.append(separator + inner)
                break
        else:
            return "".join(parts)


def contains_pending(value: object) -> bool:
    """Whether a value is, or holds, a `Pending` marker."""
    return any(isinstance(item, Pending) for item in _walk(value, (dict, list, tuple)))


_Container = type[dict[object, object]] | type[list[object]] | type[tuple[object, ...]]


def _walk(value: object, containers: tuple[_Container, ...]) -> Iterator[object]:
    """``value`` and everything in it, in order: the items of its ``containers`` (a
    dict's values), each container entered once. Walked with a stack, as values may nest
    deeper than Python's recursion limit."""
    stack = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        yield item
        if isinstance(item, containers) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(reversed(item.values() if isinstance(item, dict) else item))


def check_unicode(
    value: object, path: str, *, subject: str = "The value of", generated: bool = False
) -> None:
    """Refuse a value whose text holds a lone surrogate, before any prompt carries it.

    Args:
        value: The value; its strings, dict keys and other scalars' text are checked.
        path: Where the value stands (``task.report.topic``); the message extends it to
            the string at fault (``.title``, ``[2]``).
        subject: How the message begins, before the path.
        generated: A model produced the value (the hint says so).

    Raises:
        ExecutionError: Naming the string, the surrogate and its index.
    """
    problem = unicode_problem(value, path, subject=subject)
    if problem is not None:
        raise ExecutionError(f"{problem}\n  hint: {_MODEL_HINT if generated else _INPUT_HINT}")


def unicode_problem(value: object, path: str, *, subject: str = "The value of") -> str | None:
    """Why ``value`` is not Unicode text (a lone surrogate, and where), or ``None``.

    Examples:
        >>> unicode_problem({"title": "fine"}, "answer") is None
        True
    """
    found = _lone_surrogate(value, path)
    if found is None:
        return None
    where, key, match = found
    place = f"{subject} {where!r} has a key that" if key else f"{subject} {where!r}"
    return (
        f"{place} holds the lone surrogate {match.group()!r} at index {match.start()}: it is "
        "not Unicode text, and no prompt can carry it"
    )


def _lone_surrogate(value: object, path: str) -> tuple[str, bool, re.Match[str]] | None:
    """The first string in ``value`` that holds a lone surrogate: its path, whether it is
    a dict key, and the surrogate's match."""
    stack: list[tuple[object, str]] = [(value, path)]
    seen: set[int] = set()
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict | list | tuple):
            if id(item) in seen:
                continue
            seen.add(id(item))
        if isinstance(item, dict):
            for key in item:
                match = _SURROGATE.search(key) if isinstance(key, str) else None
                if match is not None:
                    return where, True, match
            children = [(child, _child_path(where, key)) for key, child in item.items()]
            stack.extend(reversed(children))
        elif isinstance(item, list | tuple):
            stack.extend(reversed([(child, f"{where}[{i}]") for i, child in enumerate(item)]))
        elif item is not None and not isinstance(item, bool | int | float | Pending):
            match = _SURROGATE.search(item if isinstance(item, str) else render_value(item))
            if match is not None:
                return where, False, match
    return None


def _child_path(path: str, key: object) -> str:
    return f"{path}.{key}" if isinstance(key, str) and key.isidentifier() else f"{path}[{key!r}]"


def _too_deep() -> ExecutionError:
    return ExecutionError(
        f"A value nests deeper than {_MAX_DEPTH:,} levels: LangTree takes it to contain itself\n"
        "  hint: pass values without cycles (a list that holds itself, say)"
    )
