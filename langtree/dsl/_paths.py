"""Dotted paths, their scope prefixes, and the pluck operators of source paths."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias, cast

__all__ = [
    "PLUCK_OPERATORS",
    "SCOPES",
    "Pluck",
    "PluckOperator",
    "Scope",
    "split_plucks",
    "split_scope",
]

Scope: TypeAlias = Literal["prompt", "value", "outputs", "task"]
PluckOperator: TypeAlias = Literal["*", "**", "***"]
"""The operator between a list and a field of its items (see `PLUCK_OPERATORS`)."""

SCOPES: frozenset[str] = frozenset({"prompt", "value", "outputs", "task"})
"""The scopes a path may start with: `prompt.`, `value.`, `outputs.` and `task.`."""
PLUCK_OPERATORS: tuple[PluckOperator, ...] = ("*", "**", "***")
"""``.*.`` keeps every value (``None`` for a missing one), ``.**.`` drops the ``None``
values, ``.***.`` requires every value present and all of one type."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Pluck:
    """A pluck operator in a source path: ``items.*.id`` has ``Pluck(after=1, operator="*")``.

    Attributes:
        after: How many field names stand before the operator (the list is the last of them).
        operator: ``*``, ``**`` or ``***``.
    """

    after: int
    operator: PluckOperator


def split_scope(path: str) -> tuple[Scope | None, str]:
    """Split a known scope prefix off a dotted path.

    A path is scoped when its first component is a known scope and more follows it;
    anything else (``custom.field``, a bare ``value``) is returned whole, unscoped.

    Examples:
        >>> split_scope("prompt.context")
        ('prompt', 'context')
        >>> split_scope("sections.title")
        (None, 'sections.title')
        >>> split_scope("task")
        (None, 'task')
    """
    head, dot, rest = path.partition(".")
    if dot and head in SCOPES:
        return cast(Scope, head), rest
    return None, path


def split_plucks(path: str) -> tuple[str, tuple[Pluck, ...]]:
    """Split a source path into its plain dotted path and its pluck operators.

    Examples:
        >>> split_plucks("sections.*.paragraphs.**.text")
        ('sections.paragraphs.text', (Pluck(after=1, operator='*'), Pluck(after=2, operator='**')))
        >>> split_plucks("sections.title")
        ('sections.title', ())
    """
    names: list[str] = []
    plucks: list[Pluck] = []
    for part in path.split("."):
        if part in PLUCK_OPERATORS:
            plucks.append(Pluck(after=len(names), operator=part))
        else:
            names.append(part)
    return ".".join(names), tuple(plucks)
