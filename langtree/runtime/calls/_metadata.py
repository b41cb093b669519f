"""Names LangTree puts into LangChain run metadata, so models and callbacks see the tree."""

from __future__ import annotations

__all__ = ["NODE_PATH_KEY"]

NODE_PATH_KEY = "langtree_node_path"
"""The metadata key holding the node instance a model call generates for."""
