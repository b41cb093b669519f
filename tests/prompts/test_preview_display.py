"""How a ``StepPrompt`` shows in a notebook (``_repr_markdown_``) and in ``repr``."""

import pytest
from pydantic import Field

from langtree import Asset, RunStructure, TreeNode
from langtree.prompts._preview import StepPrompt


class TaskGreet(TreeNode):
    """Greet the guest. A JSON example: ```{"name": "Ada"}```"""

    guest: str = Field(description="Who comes.")
    greeting: str = Field(description='! llm("fast")\nOne line.')


class TaskDescribe(TreeNode):
    """Describe the product shown in {photo}."""

    photo: Asset = Field(description="The product photo.")
    caption: str = Field(description="One sentence for the shop.")


def greeting_prompt(budget: int | None = None) -> StepPrompt:
    structure = RunStructure({"token_budget": budget} if budget else None)
    structure.add(TaskGreet)
    (prompt,) = structure.prompts({TaskGreet: {"guest": "Ada"}})
    return prompt


SYSTEM = (
    "**system**\n"
    "\n"
    "```markdown\n"
    "You write one part of a larger structured document. The task below describes the whole\n"
    "document down to the part you write; the context holds what is already known. Write only\n"
    "the requested fields, as structured output.\n"
    "```"
)
# The docstring's ``` example makes the human message's fence one backtick longer.
HUMAN = (
    "**human**\n"
    "\n"
    "````markdown\n"
    "# Greet\n"
    "\n"
    'Greet the guest. A JSON example: ```{"name": "Ada"}```\n'
    "\n"
    "## Greeting\n"
    "\n"
    "One line.\n"
    "\n"
    "# Context\n"
    "\n"
    "## Guest\n"
    "\n"
    "Ada\n"
    "\n"
    "# Output\n"
    "\n"
    "Write Greeting.\n"
    "\n"
    "````"
)


def test_a_prompt_shows_its_step_model_tokens_and_messages() -> None:
    assert greeting_prompt()._repr_markdown_() == (
        "**Prompt** of `task.greet:greeting` at `task.greet`\n"
        "\n"
        "model `fast` · 89 tokens (cl100k_base) · fields `greeting`\n"
        f"\n{SYSTEM}\n\n{HUMAN}"
    )


@pytest.mark.parametrize(
    ("budget", "tokens"),
    [
        (1000, "89 tokens (cl100k_base) of a budget of 1,000"),
        (10, "**89 tokens (cl100k_base), over the budget of 10**"),
    ],
    ids=["within", "over"],
)
def test_a_prompt_shows_its_token_budget(budget: int, tokens: str) -> None:
    facts = greeting_prompt(budget)._repr_markdown_().split("\n")[2]

    assert facts == f"model `fast` · {tokens} · fields `greeting`"


def test_a_prompt_names_its_assets_and_the_default_model() -> None:
    structure = RunStructure()
    structure.add(TaskDescribe)
    (prompt,) = structure.prompts({TaskDescribe: {"photo": "https://example.com/a.jpg"}})

    facts = prompt._repr_markdown_().split("\n")[2]

    assert facts == (
        "default model · 167 tokens (cl100k_base) · fields `caption` · assets `TaskDescribe.photo`"
    )


def test_a_prompt_repr_is_one_line() -> None:
    assert repr(greeting_prompt()) == (
        "StepPrompt(step_id='task.greet:greeting', node_path='task.greet', token_count=89)"
    )
