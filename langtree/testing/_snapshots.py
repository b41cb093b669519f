"""Prompts as stable text, for snapshot tests: `prompt_text()`.

Prompts are deterministic (same classes and values, same bytes), so the text of every
prompt a run would send, assembled offline by ``RunStructure.prompts()``, pins what each
model would see. A docstring edit then shows up as a diff in review.
"""

from __future__ import annotations

from collections.abc import Iterable

from langtree.prompts import StepPrompt

__all__ = ["prompt_text"]


def prompt_text(prompts: Iterable[StepPrompt]) -> str:
    """The prompts as Markdown: per prompt, a comment naming its step and node instance
    (and its model key, when not the default), then each message under a comment naming
    its role (its trailing newlines trimmed).

    Args:
        prompts: What ``RunStructure.prompts(inputs)`` returns, or some of it.

    Returns:
        The text, ending with a newline; the same for the same prompts.

    Examples:
        >>> from pydantic import Field
        >>> from langtree import RunStructure, TreeNode
        >>> class TaskTitle(TreeNode):
        ...     '''Write a title for the article.'''
        ...     article: str = Field(description="The article.")
        ...     title: str = Field(description="At most eight words.")
        >>> structure = RunStructure()
        >>> structure.add(TaskTitle)
        >>> text = prompt_text(structure.prompts({TaskTitle: {"article": "Cats sleep."}}))
        >>> print(text.splitlines()[0])
        <!-- step task.title:title at task.title -->
    """
    return "\n\n".join(_prompt_text(prompt) for prompt in prompts) + "\n"


def _prompt_text(prompt: StepPrompt) -> str:
    model = "" if prompt.model is None else f", model {prompt.model!r}"
    blocks = [f"<!-- step {prompt.step_id} at {prompt.node_path}{model} -->"]
    for message in prompt.messages:
        # Trailing newlines trimmed: one blank line parts every block.
        blocks += [f"<!-- {message.type} -->", message.text.rstrip("\n")]
    return "\n\n".join(blocks)
