"""The notes that the dataset and journal tests run: one call per paragraph and one for
the digest, each answer recorded on its own in a journal."""

from pydantic import Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.testing import FakeChatModel


class Paragraph(TreeNode):
    """Summarise the paragraph."""

    text: str = Field(description="The paragraph.")
    summary: str = Field(description="One sentence.")


class TaskNotes(TreeNode):
    """Summarise the notes."""

    paragraphs: list[Paragraph] = Field(default=[], description="The paragraphs.")
    digest: str = Field(description="One paragraph.")


def notes(count: int) -> dict[object, object]:
    """The inputs of notes of ``count`` paragraphs, ``p0`` and on."""
    return {TaskNotes: {"paragraphs": [{"text": f"p{i}"} for i in range(count)]}}


def notes_structure(model: FakeChatModel) -> RunStructure:
    """The notes' structure, its calls answered by ``model`` (the provider's ``fake``)."""
    structure = RunStructure(provider=LLMProvider({"fake": model}))
    structure.add(TaskNotes)
    return structure
