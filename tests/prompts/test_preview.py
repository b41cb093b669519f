"""``RunStructure.prompts()``: every step's messages, offline (DESIGN D9, D10)."""

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import Field

from langtree import ExecutionError, RunStructure, StructureError, TreeNode
from langtree.prompts._preview import StepPrompt


class TaskGreeting(TreeNode):
    """
    Greet {name} in {language}; sign as {sender}.
    """

    name: str = Field(description="Who is greeted.")
    greeting: str = Field(description="One sentence.")


def structure(*tasks: type[TreeNode], config: dict[str, object] | None = None) -> RunStructure:
    result = RunStructure(config)
    for task in tasks:
        result.add(task)
    return result


def greeting_prompt(**variables: object) -> StepPrompt:
    (prompt,) = structure(TaskGreeting).prompts({TaskGreeting: {"name": "Ada"}}, variables)
    return prompt


def test_step_prompt_fields() -> None:
    prompt = greeting_prompt(language="French", sender="Grace")

    assert prompt.step_id == "task.greeting:greeting"
    assert prompt.node_path == "task.greeting"
    assert prompt.fields == ("greeting",)
    assert prompt.encoding == "cl100k_base"
    assert prompt.token_count > 0
    assert prompt.model is None


def test_messages_are_system_then_human_and_text_joins_them() -> None:
    prompt = greeting_prompt(language="French", sender="Grace")

    system, human = prompt.messages
    assert isinstance(system, SystemMessage)
    assert isinstance(human, HumanMessage)
    assert prompt.text == f"{system.content}\n\n{human.content}"
    assert str(human.content).endswith("# Output\n\nWrite Greeting.\n")


def test_external_variables_are_substituted_and_reported() -> None:
    prompt = greeting_prompt(language="French", sender="Grace")

    assert "Greet Ada in French; sign as Grace." in prompt.text
    assert prompt.variables == {
        "prompt__task__greeting__name": "Ada",
        "prompt__external__language": "French",
        "prompt__external__sender": "Grace",
    }


def test_missing_external_variables_are_all_named() -> None:
    with pytest.raises(ExecutionError) as raised:
        greeting_prompt(language="French")

    assert str(raised.value) == (
        "Missing external variable(s) 'sender': the texts of 'task.greeting' use them and "
        "nothing supplies them\n"
        "  hint: pass variables={'sender': ...} to prompts() or run()"
    )


def test_every_missing_external_variable_is_named() -> None:
    with pytest.raises(ExecutionError) as raised:
        greeting_prompt()

    assert str(raised.value).splitlines()[0] == (
        "Missing external variable(s) 'language', 'sender': the texts of 'task.greeting' use "
        "them and nothing supplies them"
    )


def test_prompt_external_mappings_supply_external_variables() -> None:
    class TaskSender(TreeNode):
        """! @all->prompt.external@{{sender=signature}}"""

        signature: str = Field(description="How to sign.")

    prompts = structure(TaskGreeting, TaskSender).prompts(
        {TaskGreeting: {"name": "Ada"}, TaskSender: {"signature": "G."}}, {"language": "Dutch"}
    )

    assert [p.step_id for p in prompts] == ["task.greeting:greeting"]
    assert "sign as G." in prompts[0].text


def test_a_custom_template() -> None:
    template = (
        "{% block system %}Fill {{ field_names | join('+') }} of {{ node_path }}."
        "{% endblock %}{% block human %}[{{ step_id }}]\n{{ document }}{% endblock %}"
    )
    custom = structure(TaskGreeting, config={"prompt_template": template})

    (prompt,) = custom.prompts({TaskGreeting: {"name": "Ada"}}, {"language": "x", "sender": "y"})

    assert prompt.messages[0].content == "Fill greeting of task.greeting."
    assert str(prompt.messages[1].content).startswith("[task.greeting:greeting]\n# Greeting\n")


def test_a_template_without_a_block_is_an_error() -> None:
    with pytest.raises(StructureError) as raised:
        structure(TaskGreeting, config={"prompt_template": "{% block system %}S{% endblock %}"})

    assert str(raised.value) == (
        "LangTree found 1 problem:\n\n"
        "error: The prompt template lacks the block(s) ['human']\n"
        "  hint: define '{% block system %}...{% endblock %}' and "
        "'{% block human %}...{% endblock %}'; see langtree.prompts._template.DEFAULT_TEMPLATE"
    )


def test_a_template_that_fails_to_render_is_an_error() -> None:
    template = "{% block system %}{{ nope }}{% endblock %}{% block human %}H{% endblock %}"
    custom = structure(TaskGreeting, config={"prompt_template": template})

    with pytest.raises(StructureError) as raised:
        custom.prompts({TaskGreeting: {"name": "Ada"}}, {"language": "x", "sender": "y"})

    assert str(raised.value) == (
        "LangTree found 1 problem:\n\n"
        "error: The prompt template fails to render at line 1: 'nope' is undefined\n"
        f"    {template}\n"
        f"    ^{'~' * (len(template) - 1)}\n"
        "  hint: the template receives context, document, field_names, fields, instructions, "
        "node_path, step_id"
    )


def test_steps_whose_fields_are_supplied_are_left_out() -> None:
    prompts = structure(TaskGreeting).prompts(
        {TaskGreeting: {"name": "Ada", "greeting": "Hi"}}, {"language": "x", "sender": "y"}
    )

    assert prompts == []


# -- lists known only after earlier steps -------------------------------------------------


class Item(TreeNode):
    """Describe {name}."""

    name: str = Field(description="The name.")
    blurb: str = Field(description="A blurb about {name}.")


class TaskNames(TreeNode):
    names: list[str] = Field(
        description="A few names.\n! @each[names]->task.catalogue@{{value.items.name=names}}*"
    )


class TaskCatalogue(TreeNode):
    """
    ! @sequential
    A catalogue.
    """

    intro: str = Field(description="An introduction.")
    items: list[Item] = Field(description="The items.")


def test_elements_created_from_a_generated_list_appear_once_at_star() -> None:
    prompts = structure(TaskNames, TaskCatalogue).prompts({})

    # The intro shows the items in its context: it waits for the names they are made of.
    assert [(p.step_id, p.node_path) for p in prompts] == [
        ("task.names:names", "task.names"),
        ("task.catalogue:intro", "task.catalogue"),
        ("task.catalogue.items:blurb", "task.catalogue.items[*]"),
    ]
    item = prompts[2].text
    assert "Describe [pending: produced by step task.names:names]." in item
    assert "## Name\n\n[pending: produced by step task.names:names]\n" in item


def test_elements_created_from_supplied_values_are_indexed() -> None:
    prompts = structure(TaskNames, TaskCatalogue).prompts({TaskNames: {"names": ["a", "b"]}})

    assert [(p.step_id, p.node_path) for p in prompts] == [
        ("task.catalogue:intro", "task.catalogue"),
        ("task.catalogue.items:blurb", "task.catalogue.items[0]"),
        ("task.catalogue.items:blurb", "task.catalogue.items[1]"),
    ]
    assert "A blurb about b." in prompts[2].text


def test_a_pending_value_fills_a_variable_of_a_later_step() -> None:
    class TaskStory(TreeNode):
        """! @sequential"""

        hero: str = Field(description="The hero.")
        story: str = Field(description="A story about {hero}.")

    _, story = structure(TaskStory).prompts({})

    assert "A story about [pending: produced by step task.story:hero]." in story.text


def test_variables_from_the_caller_win_over_prompt_external_mappings() -> None:
    class TaskSender(TreeNode):
        """! @all->prompt.external@{{sender=signature}}"""

        signature: str = Field(description="How to sign.")

    (prompt,) = structure(TaskGreeting, TaskSender).prompts(
        {TaskGreeting: {"name": "Ada"}, TaskSender: {"signature": "G."}},
        {"language": "Dutch", "sender": "Grace"},
    )

    assert "sign as Grace." in prompt.text


class TaskBudgeted(TreeNode):
    """Answer briefly."""

    question: str = Field(description="The question.")
    answer: str = Field(description="The answer.")


@pytest.mark.parametrize(
    ("budget", "expected"),
    [
        pytest.param(10, (10, True), id="single-number-exceeded"),
        pytest.param(10_000, (10_000, False), id="single-number-enough"),
        pytest.param({"*": 10}, (10, True), id="any-model"),
        pytest.param({"other": 10}, (None, False), id="another-model-only"),
    ],
)
def test_token_budget_marks_prompts_over_it(
    budget: object, expected: tuple[int | None, bool]
) -> None:
    structure = RunStructure({"token_budget": budget})
    structure.add(TaskBudgeted)

    [prompt] = structure.prompts({TaskBudgeted: {"question": "Why?"}})

    assert (prompt.token_budget, prompt.over_budget) == expected


@pytest.mark.parametrize(
    "budget",
    [
        pytest.param(0, id="zero"),
        pytest.param(True, id="bool"),
        pytest.param({"x": "5"}, id="text"),
    ],
)
def test_token_budget_must_be_tokens(budget: object) -> None:
    with pytest.raises(StructureError) as caught:
        RunStructure({"token_budget": budget})

    assert [(d.message, d.hint) for d in caught.value.diagnostics] == [
        (
            "'token_budget' must be a positive number of tokens or a dict of them by model "
            f"key, got {budget!r}",
            "e.g. RunStructure({'token_budget': 4000}) or "
            "RunStructure({'token_budget': {'fast': 4000, '*': 16000}})",
        )
    ]
