"""A run's values as users read them: JSON data, as ``RunResult.dump()`` gives them.

Transforms read this view, streamed events carry it and ``RunResult.partial()`` returns
it, so that a value looks the same wherever it is read, and what is read can be sent
as JSON as it is (``json.dumps``): node instances are dicts, Enum members their values,
dates and times ISO text, assets the dicts of their fields (their bytes base64), tuples
and sets lists (see `json_data()`). Next to each field that a numerical
``@resampled[f]->fn`` aggregated, ``f_resampled_value`` holds the number behind the
member (DESIGN D12), right after the field, where ``dump()`` puts it.

Examples:
    >>> from enum import Enum
    >>> class Rating(Enum):
    ...     BAD = 1
    ...     GOOD = 3
    >>> review = {"reviews": [{"rating": Rating.GOOD, "text": "Fine."}]}
    >>> json_view(review, "task.shop", {("task.shop.reviews[0]", "rating"): 2.6})
    {'reviews': [{'rating': 3, 'rating_resampled_value': 2.6, 'text': 'Fine.'}]}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeAlias

from langtree.prompts import json_data

__all__ = ["ResampledValues", "add_resampled_values", "fields_view", "json_view", "roots_view"]

ResampledValues: TypeAlias = Mapping[tuple[str, str], float]
"""The number behind each numerically aggregated field, by ``(instance path, field)``."""

_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")


def json_view(value: object, path: str, resampled: ResampledValues) -> object:
    """``value``, which stands at ``path`` in the run, as JSON data with each
    ``f_resampled_value`` of an instance inside it added (a copy).

    Args:
        value: A value of the run's state: a field's, an instance's fields, a root task's.
        path: Where it stands: an instance path (``task.shop.reviews[0]``) for an
            instance's fields, a field path (``task.shop.reviews``) for a field's value.
        resampled: The numbers behind numerically aggregated fields.

    Raises:
        ExecutionError: The value nests deeper than 10,000 levels (it contains itself).
    """
    data = json_data(value)
    add_resampled_values(data, path, resampled)
    return data


def fields_view(
    values: Mapping[str, object], path: str, resampled: ResampledValues
) -> dict[str, object]:
    """Fields of the instance at ``path`` (some or all of them), as `json_view()` gives
    them."""
    data = json_view(dict(values), path, resampled)
    assert isinstance(data, dict)
    return data


def roots_view(
    roots: Mapping[str, Mapping[str, object]], resampled: ResampledValues
) -> dict[str, dict[str, object]]:
    """Each root task's values, by tag, as `json_view()` gives them."""
    return {tag: fields_view(values, tag, resampled) for tag, values in roots.items()}


def add_resampled_values(data: object, path: str, resampled: ResampledValues) -> None:
    """Put each ``f_resampled_value`` right after ``f`` in the dict of its instance, for
    the instances inside ``data`` (JSON data standing at ``path``); changes ``data``."""
    for (node_path, name), number in resampled.items():
        target = _located(data, path, node_path)
        if isinstance(target, dict) and name in target:
            # A dict cannot insert in the middle: it is refilled in place, as it stands
            # inside the data, with the number right after its field.
            items = list(target.items())
            at = [key for key, _ in items].index(name) + 1
            items.insert(at, (f"{name}_resampled_value", number))
            target.clear()
            target.update(items)


def _located(data: object, path: str, node_path: str) -> object:
    """What stands at ``node_path`` inside ``data`` (which stands at ``path``), or ``None``."""
    if not node_path.startswith(path):
        return None
    rest = node_path[len(path) :]
    current = data
    at = 0
    for step in _STEP.finditer(rest):
        # Every character must belong to a step: a gap means the paths only share the start
        # of a name (``task.shop`` and ``task.shopping``).
        if step.start() != at:
            return None
        at = step.end()
        name, index = step.groups()
        if name is not None:
            current = current.get(name) if isinstance(current, dict) else None
        elif isinstance(current, list) and int(index) < len(current):
            current = current[int(index)]
        else:
            return None
    return current if at == len(rest) else None
