"""The base class of every node in a prompt tree."""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["TreeNode"]


class TreeNode(BaseModel):
    # No docstring on purpose: a node's docstring is its prompt text, and the base class
    # must not lend one to subclasses that have none.
    pass
