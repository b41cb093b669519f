"""A section class whose texts hold what its output schema must not: commands, a comment,
placeholders and braces (DESIGN D11), for the tests of the schema's text and of the schema
a model receives."""

from pydantic import Field

from langtree import TreeNode


class Section(TreeNode):
    """
    ! @sequential
    ! count=2  # an assembly variable
    One section, titled {title}.

    {PROMPT_SUBTREE}
    """

    title: str = Field(description="! # a comment line\nThe title, in {{braces}} style.")
