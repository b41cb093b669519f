"""Classes become nodes: the node tree, its registry and the texts of each class.

`TreeNode` (`tree_node`), the tree built from the root task classes (`tree`,
`registry`, `discovery`, `references`, `shapes`), and the docstrings and field
descriptions with where they stand in the source (`texts`, `origins`,
`unicode_texts`).
"""

# The room's modules serve its own stage, which imports them directly; what other
# stages and users may import, the stage's __init__ exports.
__all__: list[str] = []
