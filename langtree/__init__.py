"""LangTree: structured LLM generation described as a tree of Pydantic models."""

from langtree.dsl import parse_command
from langtree.errors import CommandParseError, ExecutionError, LangTreeError, StructureError
from langtree.structure.tree_node import TreeNode

__all__ = [
    "CommandParseError",
    "ExecutionError",
    "LangTreeError",
    "StructureError",
    "TreeNode",
    "parse_command",
]
