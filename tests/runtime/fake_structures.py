"""Structures of tasks whose calls a fake model answers, as the runtime tests build them."""

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.testing import FakeChatModel


def structure_for(*tasks: type[TreeNode], model: FakeChatModel, **config: object) -> RunStructure:
    """A structure of `tasks` with the settings `config`, its calls answered by `model`
    (the provider's `default`)."""
    structure = RunStructure(config or None, LLMProvider({"default": model}))
    for task in tasks:
        structure.add(task)
    return structure
