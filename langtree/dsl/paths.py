"""Dotted paths and their scope prefixes."""

from __future__ import annotations

from typing import Literal, TypeAlias, cast

__all__ = ["SCOPES", "Scope", "split_scope"]

Scope: TypeAlias = Literal["prompt", "value", "outputs", "task"]

SCOPES: frozenset[str] = frozenset({"prompt", "value", "outputs", "task"})


def split_scope(path: str) -> tuple[Scope | None, str]:
    """Split a known scope prefix off a dotted path.

    A path is scoped when its first component is a known scope and more follows it;
    anything else (``custom.field``, a bare ``value``) is returned whole, unscoped.

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
