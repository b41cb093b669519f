"""Digest a long report: summarise every section, then write a digest of the summaries.

The caller supplies the sections and their paragraphs; a model writes each section's
summary, and a second task turns the summaries into a digest for a busy reader.

Model keys: ``MODEL_KEYS`` (``LLMProvider({"default": ...})``).
Check it, and preview its prompts offline (no model is called)::

    langtree check examples/report_digest.py
    langtree prompts examples/report_digest.py:TaskSummarizeReport --input REPORT.json

where ``REPORT.json`` holds the ``TaskSummarizeReport`` entry of
``examples/inputs/report_digest.json`` (``--input`` takes one task's values).
"""

from pydantic import Field

from langtree import TreeNode

MODEL_KEYS = ("default",)


class Paragraph(TreeNode):
    text: str = Field(description="The paragraph as written in the report.")


class Section(TreeNode):
    """
    ! @sequential
    Summarise one section of the report in plain language.
    """

    title: str = Field(description="The section's heading.")
    paragraphs: list[Paragraph] = Field(default=[], description="The section's paragraphs.")
    summary: str = Field(description="Two sentences that capture the section's argument.")


class TaskSummarizeReport(TreeNode):
    """
    You are summarising a technical report for a reader who has five minutes.

    {PROMPT_SUBTREE}
    """

    sections: list[Section] = Field(
        default=[],
        description="""
        The report's sections, in order.

        ! @each[sections]->task.write_digest@{{
            value.section_summaries=sections.summary,  # one entry per section
        }}*
        """,
    )


class TaskWriteDigest(TreeNode):
    """
    ! together
    Write a digest of the report from its section summaries.
    """

    section_summaries: list[str] = Field(default=[], description="One summary per section.")
    headline: str = Field(description="A headline of at most ten words.")
    digest: str = Field(description="One paragraph that a reader can act on.")
