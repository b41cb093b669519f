"""Assembled step prompts, pinned as Markdown snapshots (DESIGN D9, D10; the spec's
"Template Variables", "Field Type Resolution" and "Prompt Context Assembly").

Each snapshot file under ``__snapshots__/test_assembly/`` holds the human message of one
step, after a comment naming the step and its node instance. Regenerate them with
``pytest tests/prompts/test_assembly.py --snapshot-update`` and read every change.
"""

from typing import Any

import pytest
from pydantic import Field
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from langtree import RunStructure, TreeNode
from langtree.prompts._preview import StepPrompt


class MarkdownSnapshot(SingleFileSnapshotExtension):
    """One ``.md`` file per snapshot, written as text."""

    file_extension = "md"
    _write_mode = WriteMode.TEXT


@pytest.fixture
def markdown(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(MarkdownSnapshot)


def prompts(*tasks: type[TreeNode], inputs: Any) -> list[StepPrompt]:
    structure = RunStructure()
    for task in tasks:
        structure.add(task)
    structure.validate()
    return structure.prompts(inputs)


def shown(prompt: StepPrompt) -> str:
    """The human message, after a comment naming the step and its instance."""
    header = f"<!-- step {prompt.step_id} at {prompt.node_path} -->\n\n"
    return header + str(prompt.messages[1].content)


def step(all_prompts: list[StepPrompt], step_id: str, node_path: str | None = None) -> StepPrompt:
    return next(
        prompt
        for prompt in all_prompts
        if prompt.step_id == step_id and node_path in (None, prompt.node_path)
    )


# -- a root-level step --------------------------------------------------------------------


class TaskGreeting(TreeNode):
    """
    You write a short greeting card.
    """

    recipient: str = Field(description="Who receives the card.")
    message: str = Field(description="One warm sentence for the recipient.")


def test_root_level_step(markdown: SnapshotAssertion) -> None:
    (prompt,) = prompts(TaskGreeting, inputs={TaskGreeting: {"recipient": "Ada"}})

    assert shown(prompt) == markdown


# -- a sequential step with earlier values ----------------------------------------------


class TaskArticle(TreeNode):
    """
    ! @sequential
    Write a short article about {topic}.
    """

    topic: str = Field(description="The article's subject.")
    title: str = Field(description="A title of at most eight words.")
    audience: str = Field(default="engineers", description="Who reads the article.")
    body: str = Field(description="Three paragraphs for {audience}.")
    conclusion: str = Field(description="One closing sentence.")
    sources: list[str] = Field(description="The works the article cites.")


def test_sequential_step_sees_known_then_earlier_values(markdown: SnapshotAssertion) -> None:
    inputs = {TaskArticle: {"topic": "tides", "sources": ["Tide tables, 2024"]}}

    prompt = step(prompts(TaskArticle, inputs=inputs), "task.article:conclusion")

    assert shown(prompt) == markdown


# -- a list element step with its ancestors ----------------------------------------------


class Paragraph(TreeNode):
    text: str = Field(description="The paragraph as written.")


class Section(TreeNode):
    """
    ! @sequential
    Summarise one section of the report for {audience}, in plain language.
    """

    title: str = Field(description="The section's heading.")
    paragraphs: list[Paragraph] = Field(default=[], description="The section's paragraphs.")
    summary: str = Field(description="Two sentences that capture the section.")
    keywords: list[str] = Field(description="Three keywords for the section.")


class TaskReport(TreeNode):
    """
    You summarise a technical report for a reader with five minutes.

    {PROMPT_SUBTREE}

    Keep the reader's time in mind.
    """

    audience: str = Field(description="Who reads the summary.")
    sections: list[Section] = Field(default=[], description="The report's sections, in order.")


REPORT = {
    TaskReport: {
        "audience": "managers",
        "sections": [
            {"title": "Intro", "paragraphs": [{"text": "Tides rise twice a day."}]},
            {"title": "Method", "paragraphs": [{"text": "We measured for a year."}]},
        ],
    }
}


def test_list_element_step_with_its_ancestors(markdown: SnapshotAssertion) -> None:
    all_prompts = prompts(TaskReport, inputs=REPORT)

    prompt = step(all_prompts, "task.report.sections:keywords", "task.report.sections[1]")

    assert [p.node_path for p in all_prompts] == [
        "task.report.sections[0]",
        "task.report.sections[1]",
        "task.report.sections[0]",
        "task.report.sections[1]",
    ]
    assert shown(prompt) == markdown


# -- outputs and prompt mappings ----------------------------------------------------------


class Finding(TreeNode):
    claim: str = Field(description="The claim.")
    severity: int = Field(description="1 (minor) to 3 (critical).")


class TaskAudit(TreeNode):
    """
    ! @all->task.memo@{{prompt.auditor=auditor}}
    Audit the report.
    """

    auditor: str = Field(description="Who audits.")
    findings: list[Finding] = Field(
        default=[],
        description="! @each[findings]->task.memo@{{outputs.findings=findings, "
        "prompt.claims=findings.claim}}*",
    )


class TaskMemo(TreeNode):
    """
    Write a memo from {auditor} about these claims:

    {claims}
    """

    message: str = Field(description="One paragraph, signed by {auditor}.")


def test_outputs_become_context_and_prompt_values_fill_variables(
    markdown: SnapshotAssertion,
) -> None:
    inputs = {
        TaskAudit: {
            "auditor": "Grace",
            "findings": [{"claim": "No backups", "severity": 3}, {"claim": "Old TLS"}],
        }
    }

    prompt = step(prompts(TaskAudit, TaskMemo, inputs=inputs), "task.memo:message")

    assert prompt.variables == {
        "prompt__task__memo__auditor": "Grace",
        "prompt__task__memo__claims": ["No backups", "Old TLS"],
    }
    assert shown(prompt) == markdown


# -- several sources for one prompt variable ----------------------------------------------


class TaskSources(TreeNode):
    """
    ! @all->task.compare@{{prompt.text=first}}
    ! @all->task.compare@{{prompt.text=second}}
    """

    first: str = Field(description="The first text.")
    second: str = Field(description="The second text.")


class TaskCompare(TreeNode):
    """
    Compare the first text:

    {text_1}

    with the second text:

    {text_2}
    """

    verdict: str = Field(description="Which text is clearer, and why.")


def test_several_sources_are_numbered(markdown: SnapshotAssertion) -> None:
    inputs = {TaskSources: {"first": "Boil the water.", "second": "Heat water to 100 °C."}}

    prompt = step(prompts(TaskSources, TaskCompare, inputs=inputs), "task.compare:verdict")

    assert shown(prompt) == markdown


# -- heading shifting -------------------------------------------------------------------


class Chapter(TreeNode):
    """
    One chapter of the guide.

    ## Style

    Short sentences.

    ### Examples

    ```python
    # a comment, not a heading
    ## also a comment
    print("hi")
    ```
    """

    heading: str = Field(description="The chapter's heading.")
    text: str = Field(
        description="""
        The chapter's text.

        # Length

        At most 200 words.
        """
    )


class TaskGuide(TreeNode):
    """
    Write a beginner's guide.

    # Chapters to write

    {PROMPT_SUBTREE}

    # Tone

    Friendly.

    ## Words

    Plain ones.
    """

    chapters: list[Chapter] = Field(default=[], description="The guide's chapters.")


def test_headings_nest_where_they_are_inserted_and_code_stays(
    markdown: SnapshotAssertion,
) -> None:
    inputs = {TaskGuide: {"chapters": [{"heading": "Install"}]}}

    prompt = step(prompts(TaskGuide, inputs=inputs), "task.guide.chapters:text")

    assert shown(prompt) == markdown


# -- brace literals ---------------------------------------------------------------------


class TaskFormat(TreeNode):
    """
    Answer about {subject} as JSON, for example {"a": 1, "b": [2, 3]}.

    Write placeholders as {{name}}, never as {{ name }}.
    """

    subject: str = Field(description="The subject.")
    answer: str = Field(description='The JSON answer, like {"answer": "..."}.')


def test_brace_literals_survive_and_double_braces_become_single(
    markdown: SnapshotAssertion,
) -> None:
    inputs = {TaskFormat: {"subject": "a {value} with braces"}}

    (prompt,) = prompts(TaskFormat, inputs=inputs)

    assert shown(prompt) == markdown


# -- {COLLECTED_CONTEXT} placed in the docstring ------------------------------------------


class TaskReview(TreeNode):
    """
    ! @sequential
    You review a pull request.

    ## What we know

    {COLLECTED_CONTEXT}

    ## Your task

    {PROMPT_SUBTREE}

    Be kind.
    """

    diff: str = Field(description="The change.")
    risks: str = Field(description="What could break.")
    verdict: str = Field(description="Approve or request changes, with one reason.")


def test_collected_context_placed_in_the_docstring(markdown: SnapshotAssertion) -> None:
    inputs = {TaskReview: {"diff": "- x = 1\n+ x = 2"}}

    prompt = step(prompts(TaskReview, inputs=inputs), "task.review:verdict")

    assert shown(prompt) == markdown


# -- node fields generated whole ---------------------------------------------------------


class Ingredient(TreeNode):
    """
    One ingredient, as a shop sells it.

    # Units

    Metric only.
    """

    name: str = Field(description="The ingredient.")
    amount: str = Field(description="How much, with its unit.")


class Chef(TreeNode):
    """The person the recipe is credited to."""

    name: str = Field(description="Full name.")
    country: str = Field(description="Where they cook.")


class TaskRecipe(TreeNode):
    """
    ! @parallel
    Write a recipe for {dish}.
    """

    dish: str = Field(description="The dish.")
    ingredients: list[Ingredient] = Field(description="Everything to buy.")
    chef: Chef = Field(description="Who the recipe is credited to.")


def test_generated_list_of_nodes_shows_the_element_class(markdown: SnapshotAssertion) -> None:
    (prompt,) = prompts(TaskRecipe, inputs={TaskRecipe: {"dish": "soup"}})

    assert prompt.fields == ("ingredients", "chef")
    assert shown(prompt) == markdown


class TaskCredit(TreeNode):
    """Credit the recipe for {dish}."""

    dish: str = Field(description="The dish.")
    chef: Chef = Field(description="Who the recipe is credited to.")


def test_generated_single_node_has_no_class_title(markdown: SnapshotAssertion) -> None:
    (prompt,) = prompts(TaskCredit, inputs={TaskCredit: {"dish": "soup"}})

    assert shown(prompt) == markdown


# -- determinism ------------------------------------------------------------------------


def test_same_input_gives_the_same_bytes() -> None:
    inputs = {
        TaskAudit: {"auditor": "Grace", "findings": [{"claim": "x", "severity": 1}]},
    }

    first = [p.text.encode() for p in prompts(TaskAudit, TaskMemo, inputs=inputs)]
    second = [p.text.encode() for p in prompts(TaskAudit, TaskMemo, inputs=inputs)]

    assert first == second


# -- context order and placement ---------------------------------------------------------


def context_titles(prompt: StepPrompt) -> list[str]:
    """The titles of the context entries of a prompt with a ``# Context`` section."""
    document = str(prompt.messages[1].content)
    context = document.split("\n# Context\n", 1)[1].split("\n# Output\n", 1)[0]
    return [line.removeprefix("## ") for line in context.splitlines() if line.startswith("## ")]


class TaskPanel(TreeNode):
    """
    ! @parallel
    ! @each[notes]->verdict@{{outputs.note_list=notes}}*
    Review the proposal.
    """

    notes: list[str] = Field(default=[], description="Notes from the reviewers.")
    risks: str = Field(description="The main risks.")
    verdict: str = Field(description="Accept or reject, weighing {benefits}.")
    benefits: str = Field(description="The main benefits.")
    budget: int = Field(default=100, description="The budget.")


def test_context_order_outputs_known_earlier_then_later_generated() -> None:
    all_prompts = prompts(TaskPanel, inputs={TaskPanel: {"notes": ["cheap"]}})

    first, verdict = all_prompts
    assert first.fields == ("risks", "benefits")
    assert verdict.fields == ("verdict",)
    assert context_titles(verdict) == ["Note List", "Notes", "Budget", "Risks", "Benefits"]


def test_outputs_sent_to_a_field_appear_only_in_its_step() -> None:
    first, verdict = prompts(TaskPanel, inputs={TaskPanel: {"notes": ["cheap"]}})

    assert "Note List" not in context_titles(first)
    assert '## Note List\n\n[\n  "cheap"\n]' in verdict.text


class Step(TreeNode):
    """
    One step.

    {COLLECTED_CONTEXT}

    {PROMPT_SUBTREE}
    """

    action: str = Field(description="What to do.")
    done: bool = Field(default=False, description="Whether it is done.")


class TaskChecklist(TreeNode):
    """
    A checklist.

    # Known

    {COLLECTED_CONTEXT}

    # Steps

    {PROMPT_SUBTREE}
    """

    owner: str = Field(description="Who owns the list.")
    steps: list[Step] = Field(default=[], description="The steps.")


def test_context_goes_to_the_placeholder_nearest_the_node() -> None:
    inputs = {TaskChecklist: {"owner": "Ada", "steps": [{}]}}

    (prompt,) = prompts(TaskChecklist, inputs=inputs)

    assert prompt.messages[1].content == (
        "# Checklist\n\nA checklist.\n\n## Known\n\n## Steps\n\n### Steps\n\nThe steps.\n\n"
        "#### Step\n\nOne step.\n\n##### Done\n\nfalse\n\n##### Action\n\nWhat to do.\n\n"
        "# Output\n\nWrite Action.\n"
    )


def test_a_placeholder_with_nothing_known_is_removed() -> None:
    class TaskBlank(TreeNode):
        """
        Intro.

        {COLLECTED_CONTEXT}

        Outro.
        """

        answer: str = Field(description="The answer.")

    (prompt,) = prompts(TaskBlank, inputs={})

    assert prompt.messages[1].content == (
        "# Blank\n\nIntro.\n\nOutro.\n\n## Answer\n\nThe answer.\n\n# Output\n\nWrite Answer.\n"
    )


class Option(TreeNode):
    """
    An option for {topic}.

    # Criteria

    {PROMPT_SUBTREE}

    {COLLECTED_CONTEXT}

    Literal {{braces}}.
    """

    label: str = Field(description="A label.")


class TaskChoice(TreeNode):
    topic: str = Field(description="The topic.")
    options: list[Option] = Field(description="Two options.")


def test_nested_node_texts_resolve_variables_and_their_subtree() -> None:
    (prompt,) = prompts(TaskChoice, inputs={TaskChoice: {"topic": "lunch"}})

    assert prompt.messages[1].content == (
        "# Choice\n\n## Options\n\nTwo options.\n\n### Option\n\nAn option for lunch.\n\n"
        "#### Criteria\n\n##### Label\n\nA label.\n\nLiteral {braces}.\n\n"
        "# Context\n\n## Topic\n\nlunch\n\n# Output\n\nWrite Options.\n"
    )


def test_values_are_never_read_as_template_text() -> None:
    inputs = {TaskFormat: {"subject": "{PROMPT_SUBTREE} {{x}} {COLLECTED_CONTEXT}"}}

    (prompt,) = prompts(TaskFormat, inputs=inputs)

    content = str(prompt.messages[1].content)
    assert content.startswith(
        "# Format\n\nAnswer about {PROMPT_SUBTREE} {{x}} {COLLECTED_CONTEXT} as JSON"
    )
    assert content.count("## Answer") == 1


def test_headings_inside_values_do_not_move_the_fields() -> None:
    class TaskBrief(TreeNode):
        """
        Background:

        {background}

        {PROMPT_SUBTREE}
        """

        background: str = Field(description="What happened.")
        answer: str = Field(description="The answer.")

    inputs = {TaskBrief: {"background": "### Timeline\n\n# Outcome"}}

    (prompt,) = prompts(TaskBrief, inputs=inputs)

    assert str(prompt.messages[1].content).startswith(
        "# Brief\n\nBackground:\n\n### Timeline\n\n# Outcome\n\n## Answer\n\nThe answer.\n\n"
    )


class Dish(TreeNode):
    """One dish."""

    name: str = Field(description="The dish's name.")
    cuisine: str = Field(description="Its cuisine.")
    servings: int = Field(default=2, description="How many it serves.")


class TaskMenu(TreeNode):
    cuisine: str = Field(description="! @all->dishes@{{value.cuisine=cuisine}}*")
    dishes: list[Dish] = Field(description="Three dishes.")


def test_known_fields_of_a_generated_node_are_not_asked_for() -> None:
    (prompt,) = prompts(TaskMenu, inputs={TaskMenu: {"cuisine": "Thai"}})

    assert prompt.messages[1].content == (
        "# Menu\n\n## Dishes\n\nThree dishes.\n\n### Dish\n\nOne dish.\n\n"
        "#### Name\n\nThe dish's name.\n\n"
        "# Context\n\n## Cuisine\n\nThai\n\n# Output\n\nWrite Dishes.\n"
    )
