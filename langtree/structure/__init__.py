"""Stage 2 of the pipeline: node classes, their texts, validation and the execution plan."""

from langtree.structure.tree.tree_node import TreeNode

__all__ = ["TreeNode"]
