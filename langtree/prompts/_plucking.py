"""Read a pluck path (``items.*.id``) from a run's values: no model call, same values,
same result.

``.*.`` gives every element's value, ``None`` where the value is ``None`` or the element
is not a node; ``.**.`` leaves those ``None`` values out; ``.***.`` requires every value
present and all of one type, else the run fails naming the element. A list that is
``None`` gives ``None`` (``.*.``), an empty list (``.**.``) or that error (``.***.``).

A value never produced (the element lacks the field: its step failed or was skipped in a
run that went on; a field only the caller gives, left out, is ``None``, its default) is
what the caller's ``absent`` makes of it: a command's mapping keeps
it `Absent` (its target then has no value for that element), where ``.**.`` leaves it
out like ``None``; a list never produced is absent for every operator. Plucks nest: each
adds the list levels of the list it reads, and an element whose inner pluck holds an
absent value holds one itself. A value not known yet stays a `Pending` marker.
"""

from __future__ import annotations

from collections.abc import Callable

from langtree.dsl import Pluck, PluckOperator
from langtree.errors import ExecutionError
from langtree.prompts._values import Absent, Pending, first_absent
from langtree.structure import NodeField, input_only

__all__ = ["pluck_values"]

Fail = Callable[[str, str], ExecutionError]
"""Makes the error for a message and a hint (it adds the command and where it stands)."""

Missing = Callable[[str], object]
"""What stands for a value never produced, given where it was read (``'items[1].id'``)."""


class _NeverProduced:
    """What `_walk()` finds where a node lacks the field."""


_NEVER = _NeverProduced()

_STRICT_HINT = "use '.**.' to leave out missing values, or '.*.' to keep them as None"


def pluck_values(
    value: object,
    fields: tuple[NodeField, ...],
    plucks: tuple[Pluck, ...],
    *,
    where: str,
    fail: Fail,
    absent: Missing,
) -> object:
    """The values a pluck path reads from ``value``.

    Args:
        value: The node values the path starts from (a dict).
        fields: The path's fields from there.
        plucks: Its pluck operators, ``after`` counted from the first of ``fields``.
        where: How the start reads in messages (``''`` at the command's node, else
            e.g. ``'sections[2].'``).
        fail: Makes the error of a ``.***.`` whose values are not all present and alike.
        absent: What stands for a value never produced: an `Absent` (a command's
            mapping), or ``None`` (a prompt's context, which shows what is known).

    Raises:
        ExecutionError: A ``.***.`` pluck found a ``None`` or mixed types.
    """
    return _Plucker(fields, plucks, fail, absent).pluck(value, 0, where)


class _Plucker:
    def __init__(
        self, fields: tuple[NodeField, ...], plucks: tuple[Pluck, ...], fail: Fail, absent: Missing
    ):
        self.fields = fields
        self.plucks = plucks
        self.fail = fail
        self.absent = absent

    def pluck(self, value: object, index: int, where: str) -> object:
        """Walk to the list of pluck ``index`` (from the previous one) and pluck it."""
        start = self.plucks[index - 1].after if index else 0
        pluck = self.plucks[index]
        walked = self.fields[start : pluck.after]
        where += ".".join(node_field.name for node_field in walked)
        depth = walked[-1].shape.list_depth
        return self._levels(self._found(_walk(value, walked), where), depth, index, where)

    def _found(self, value: object, where: str) -> object:
        """The value walked to, or what stands for it when it was never produced."""
        return self.absent(where) if value is _NEVER else value

    def _levels(self, value: object, depth: int, index: int, where: str) -> object:
        operator = self.plucks[index].operator
        if isinstance(value, Pending):
            return Pending(value.step_id)
        if isinstance(value, Absent):
            return value
        if not isinstance(value, list):
            return self._no_list(operator, where)
        if depth > 1:
            return [
                self._levels(item, depth - 1, index, f"{where}[{position}]")
                for position, item in enumerate(value)
            ]
        found = []
        for position, item in enumerate(value):
            element = f"{where}[{position}]."
            found.append((element, self._element(item, index, element)))
        return self._kept(operator, found, index)

    def _element(self, item: object, index: int, where: str) -> object:
        if index + 1 < len(self.plucks):
            return self.pluck(item, index + 1, where)
        walked = self.fields[self.plucks[index].after :]
        return self._found(_walk(item, walked), where + ".".join(f.name for f in walked))

    def _no_list(self, operator: PluckOperator, where: str) -> object:
        if operator == "*":
            return None
        if operator == "**":
            return []
        raise self.fail(
            f"found no list at {where!r}: '.***.' requires one",
            "supply the list, or use '.**.' (an empty list then) or '.*.' (None then)",
        )

    def _kept(self, operator: PluckOperator, found: list[tuple[str, object]], index: int) -> object:
        if operator == "*":
            return [value for _, value in found]
        if operator == "**":
            return [value for _, value in found if value is not None and not _holds_absent(value)]
        end = self.plucks[index + 1].after if index + 1 < len(self.plucks) else None
        names = ".".join(f.name for f in self.fields[self.plucks[index].after : end])
        first: tuple[str, type] | None = None
        for position, (element, value) in enumerate(found):
            path = element + names
            if _holds_absent(value):
                continue  # never produced, not None: its target gets no value for it
            if value is None:
                raise self.fail(
                    f"found no value at {path!r} (element {position}): '.***.' requires "
                    "every element to have one",
                    _STRICT_HINT,
                )
            if isinstance(value, Pending):
                continue
            if first is None:
                first = (path, type(value))
            elif type(value) is not first[1]:
                raise self.fail(
                    f"found mixed types: {first[0]!r} is {first[1].__name__!r}, but {path!r} "
                    f"(element {position}) is {type(value).__name__!r}: '.***.' requires one "
                    "type",
                    "make every value the same type, or use '.*.' or '.**.' to accept mixed values",
                )
        return [value for _, value in found]


def _walk(value: object, fields: tuple[NodeField, ...]) -> object:
    """The value at the end of ``fields``: ``None`` where a node is ``None`` or not a
    node, ``_NEVER`` where a node lacks the field (a field only the caller gives, which
    may be left out, is then ``None``, its default)."""
    for node_field in fields:
        if isinstance(value, Pending):
            return Pending(value.step_id)
        if not isinstance(value, dict):
            return None
        value = value.get(node_field.name, _NEVER)
        if value is _NEVER:
            return None if input_only(node_field) else value
    if isinstance(value, Pending):
        return Pending(value.step_id)
    return value


def _holds_absent(value: object) -> bool:
    """Whether a value is `Absent`, or holds one in its lists (an inner pluck's)."""
    return first_absent(value) is not None
