"""Read a pluck path (``items.*.id``) from a run's values: no model call, same values,
same result.

``.*.`` gives every element's value, ``None`` where the field is missing or the element
is not a node; ``.**.`` leaves those ``None`` values out; ``.***.`` requires every value
present and all of one type, else the run fails naming the element. A list that is
itself missing gives ``None`` (``.*.``), an empty list (``.**.``) or that error
(``.***.``). Plucks nest: each adds the list levels of the list it reads. A value not
known yet stays a `Pending` marker.
"""

from __future__ import annotations

from collections.abc import Callable

from langtree.dsl.paths import Pluck, PluckOperator
from langtree.errors import ExecutionError
from langtree.prompts.values import Pending
from langtree.structure.tree import NodeField

__all__ = ["pluck_values"]

Fail = Callable[[str, str], ExecutionError]
"""Makes the error for a message and a hint (it adds the command and where it stands)."""

_STRICT_HINT = "use '.**.' to leave out missing values, or '.*.' to keep them as None"


def pluck_values(
    value: object,
    fields: tuple[NodeField, ...],
    plucks: tuple[Pluck, ...],
    *,
    where: str,
    fail: Fail,
) -> object:
    """The values a pluck path reads from ``value``.

    Args:
        value: The node values the path starts from (a dict).
        fields: The path's fields from there.
        plucks: Its pluck operators, ``after`` counted from the first of ``fields``.
        where: How the start reads in messages (``''`` at the command's node, else
            e.g. ``'sections[2].'``).
        fail: Makes the error of a ``.***.`` whose values are not all present and alike.

    Raises:
        ExecutionError: A ``.***.`` pluck found a missing value or mixed types.
    """
    return _Plucker(fields, plucks, fail).pluck(value, 0, where)


class _Plucker:
    def __init__(self, fields: tuple[NodeField, ...], plucks: tuple[Pluck, ...], fail: Fail):
        self.fields = fields
        self.plucks = plucks
        self.fail = fail

    def pluck(self, value: object, index: int, where: str) -> object:
        """Walk to the list of pluck ``index`` (from the previous one) and pluck it."""
        start = self.plucks[index - 1].after if index else 0
        pluck = self.plucks[index]
        walked = self.fields[start : pluck.after]
        where += ".".join(node_field.name for node_field in walked)
        depth = walked[-1].shape.list_depth
        return self._levels(_walk(value, walked), depth, index, where)

    def _levels(self, value: object, depth: int, index: int, where: str) -> object:
        operator = self.plucks[index].operator
        if isinstance(value, Pending):
            return Pending(value.step_id)
        if not isinstance(value, list):
            return self._absent(operator, where)
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
        return _walk(item, self.fields[self.plucks[index].after :])

    def _absent(self, operator: PluckOperator, where: str) -> object:
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
            return [value for _, value in found if value is not None]
        end = self.plucks[index + 1].after if index + 1 < len(self.plucks) else None
        names = ".".join(f.name for f in self.fields[self.plucks[index].after : end])
        first: tuple[str, type] | None = None
        for position, (element, value) in enumerate(found):
            path = element + names
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
    """The value at the end of ``fields``; ``None`` where a node is missing or not a node."""
    for node_field in fields:
        if isinstance(value, Pending):
            return Pending(value.step_id)
        if not isinstance(value, dict):
            return None
        value = value.get(node_field.name)
    if isinstance(value, Pending):
        return Pending(value.step_id)
    return value
