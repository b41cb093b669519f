"""The catalogue that many runtime tests run: one call per item, so that a test chooses
how many calls its run makes (and scripts run in a fresh process import it too)."""

from pydantic import Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.testing import FakeChatModel


class Item(TreeNode):
    """Describe one item."""

    name: str
    blurb: str = Field(description="One sentence about the item.")


class TaskCatalogue(TreeNode):
    """Describe every item of a catalogue."""

    items: list[Item] = Field(default=[], description="The items.")


def catalogue(model: FakeChatModel, config: dict[str, object] | None = None) -> RunStructure:
    """The catalogue's structure on ``model`` (the provider's default)."""
    built = RunStructure(config, provider=LLMProvider({"default": model}))
    built.add(TaskCatalogue)
    return built


def catalogue_inputs(count: int) -> dict[object, object]:
    """The inputs of a catalogue of ``count`` items, named ``item 0`` and on."""
    return {TaskCatalogue: {"items": [{"name": f"item {i}"} for i in range(count)]}}
