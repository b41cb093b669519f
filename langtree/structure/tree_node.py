"""The base class of every node in a prompt tree."""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["TreeNode", "display_name"]


class TreeNode(BaseModel):
    # No docstring on purpose: a node's docstring is its prompt text, and the base class
    # must not lend one to subclasses that have none.
    pass


def display_name(cls: type) -> str:
    """A class's name as users wrote it: nested classes keep their outer class
    (``TaskReport.Section``), a class defined inside a function drops the function.

    >>> display_name(TreeNode)
    'TreeNode'
    """
    return cls.__qualname__.rsplit("<locals>.", 1)[-1]
