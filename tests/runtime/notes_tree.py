"""The notes that the dataset and journal tests run: one call per paragraph and one for
the digest, each answer recorded on its own in a journal."""

from pydantic import Field

from langtree import TreeNode


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
