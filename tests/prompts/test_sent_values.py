"""Where the values ``prompt`` and ``outputs`` mappings send are shown (DESIGN D6; the
spec's "External Forwarding Override" and "Cross-Node Dependencies"; docs/dsl.md,
"Scopes").

A ``prompt.x`` that no text of its destination writes as ``{x}`` is a context entry of
the destination, as ``outputs.x`` is. A destination with no steps of its own passes its
entries to the steps below it; one that a step generates whole shows them in that step.
"""

from typing import Any

from pydantic import Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.prompts._preview import StepPrompt
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest, ResponderResult


def prompts(*tasks: type[TreeNode], inputs: Any) -> list[StepPrompt]:
    structure = RunStructure()
    for task in tasks:
        structure.add(task)
    assert structure.validate() == ()
    return structure.prompts(inputs)


def human(prompt: StepPrompt) -> str:
    return str(prompt.messages[1].content)


# -- the specification's example: a prompt value no text names ----------------------------


class SummaryNode(TreeNode):
    """! @sequential"""

    overview: str = Field(description="The overview.")
    details: str = Field(description="The details.")


class ReportSection(TreeNode):
    title: str = Field(description="The title.")


class TaskReport(TreeNode):
    """! @each[sections]->summary@{{prompt.section_titles=sections.title}}*

    Summarise the report.
    """

    sections: list[ReportSection] = Field(description="The sections.")
    summary: SummaryNode = Field(description="The summary.")


def test_a_prompt_value_no_text_names_is_a_context_entry_of_the_step_generating_it() -> None:
    inputs = {TaskReport: {"sections": [{"title": "Methods"}, {"title": "Results"}]}}

    (prompt,) = prompts(TaskReport, inputs=inputs)

    assert prompt.step_id == "task.report:summary"
    assert human(prompt) == (
        "# Report\n"
        "\n"
        "Summarise the report.\n"
        "\n"
        "## Summary\n"
        "\n"
        "The summary.\n"
        "\n"
        "### Overview\n"
        "\n"
        "The overview.\n"
        "\n"
        "### Details\n"
        "\n"
        "The details.\n"
        "\n"
        "# Context\n"
        "\n"
        "## Section Titles\n"
        "\n"
        "[\n"
        '  "Methods",\n'
        '  "Results"\n'
        "]\n"
        "\n"
        "## Sections\n"
        "\n"
        "[\n"
        "  {\n"
        '    "title": "Methods"\n'
        "  },\n"
        "  {\n"
        '    "title": "Results"\n'
        "  }\n"
        "]\n"
        "\n"
        "# Output\n"
        "\n"
        "Write Summary.\n"
    )


# -- a prompt value into a node with steps of its own -------------------------------------


class TaskAuditor(TreeNode):
    """! @all->task.memo@{{prompt.auditor=auditor, prompt.signature=auditor}}"""

    auditor: str = Field(description="Who audits.")


class TaskMemo(TreeNode):
    """Write a memo."""

    message: str = Field(description="One paragraph, signed by {signature}.")


def test_a_prompt_value_shows_where_a_text_names_it_and_in_the_context_where_none_does() -> None:
    (prompt,) = prompts(TaskAuditor, TaskMemo, inputs={TaskAuditor: {"auditor": "Grace"}})

    assert human(prompt) == (
        "# Memo\n"
        "\n"
        "Write a memo.\n"
        "\n"
        "## Message\n"
        "\n"
        "One paragraph, signed by Grace.\n"
        "\n"
        "# Context\n"
        "\n"
        "## Auditor\n"
        "\n"
        "Grace\n"
        "\n"
        "# Output\n"
        "\n"
        "Write Message.\n"
    )
    assert prompt.variables == {"prompt__task__memo__signature": "Grace"}


# -- outputs into a node whose steps are all below it --------------------------------------


class Paragraph(TreeNode):
    text: str = Field(description="The translated text.")


class Chapter(TreeNode):
    heading: str = Field(default="Chapter", description="The heading.")
    paragraphs: list[Paragraph] = Field(description="The paragraphs.")


class TaskTranslation(TreeNode):
    """! @all->chapter@{{outputs.glossary=glossary}}

    Translate the book.
    """

    glossary: str = Field(default="", description="The glossary.")
    chapter: Chapter = Field(description="The chapter.")


def test_outputs_into_a_node_without_steps_reach_every_step_below_it() -> None:
    inputs = {TaskTranslation: {"glossary": "cat = Katze", "chapter": {"paragraphs": [{}, {}]}}}

    first, second = prompts(TaskTranslation, inputs=inputs)

    assert (first.node_path, second.node_path) == (
        "task.translation.chapter.paragraphs[0]",
        "task.translation.chapter.paragraphs[1]",
    )
    assert (
        human(first)
        == human(second)
        == (
            "# Translation\n"
            "\n"
            "Translate the book.\n"
            "\n"
            "## Chapter\n"
            "\n"
            "The chapter.\n"
            "\n"
            "### Paragraphs\n"
            "\n"
            "The paragraphs.\n"
            "\n"
            "#### Paragraph\n"
            "\n"
            "##### Text\n"
            "\n"
            "The translated text.\n"
            "\n"
            "# Context\n"
            "\n"
            "## Glossary\n"
            "\n"
            "cat = Katze\n"
            "\n"
            "# Output\n"
            "\n"
            "Write Text.\n"
        )
    )


class Stanza(TreeNode):
    """! @all->lines@{{outputs.rhyme=rhyme}}"""

    rhyme: str = Field(default="ABAB", description="The rhyme scheme.")
    lines: list[Paragraph] = Field(description="The lines.")


class TaskPoem(TreeNode):
    """! @all->stanza@{{outputs.theme=theme}}"""

    theme: str = Field(default="", description="The theme.")
    stanza: Stanza = Field(description="The stanza.")


def test_entries_passed_down_come_first_from_the_top() -> None:
    inputs = {TaskPoem: {"theme": "rain", "stanza": {"lines": [{}]}}}

    (prompt,) = prompts(TaskPoem, inputs=inputs)

    context = human(prompt).split("# Context\n\n", 1)[1]
    assert context == "## Theme\n\nrain\n\n## Rhyme\n\nABAB\n\n# Output\n\nWrite Text.\n"


# -- outputs into a node generated whole -----------------------------------------------------


class Verdict(TreeNode):
    label: str = Field(description="Accept or reject.")
    reason: str = Field(description="Why.")


class TaskReview(TreeNode):
    """! @all->verdict@{{outputs.house_rules=rules}}
    ! @all->verdict.reason@{{outputs.tone=style}}
    """

    rules: str = Field(default="", description="The rules.")
    style: str = Field(default="", description="The style.")
    verdict: Verdict = Field(description="The verdict.")


def test_outputs_into_a_node_generated_whole_reach_the_step_generating_it() -> None:
    inputs = {TaskReview: {"rules": "Be fair.", "style": "One sentence."}}

    (prompt,) = prompts(TaskReview, inputs=inputs)

    context = human(prompt).split("# Context\n\n", 1)[1]
    assert context == (
        "## House Rules\n\nBe fair.\n\n## Tone\n\nOne sentence.\n\n"
        "## Rules\n\nBe fair.\n\n## Style\n\nOne sentence.\n\n# Output\n\nWrite Verdict.\n"
    )


# -- at run time, from a value a step generates ---------------------------------------------


class TaskBook(TreeNode):
    """! @sequential
    ! @all->chapter@{{outputs.glossary=glossary}}
    """

    glossary: str = Field(description="The glossary.")
    chapter: Chapter = Field(description="The chapter.")


def test_a_passed_down_entry_from_a_generated_value_reaches_the_steps_below() -> None:
    def respond(request: FakeRequest) -> ResponderResult:
        return {name: f"{name} of {request.node_path}" for name in request.fields}

    model = FakeChatModel(responder=respond)
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskBook)

    structure.run({TaskBook: {"chapter": {"paragraphs": [{}, {}]}}})

    texts = {call.node_path: call.text for call in model.calls}
    assert sorted(texts) == [
        "task.book",
        "task.book.chapter.paragraphs[0]",
        "task.book.chapter.paragraphs[1]",
    ]
    for path in ("task.book.chapter.paragraphs[0]", "task.book.chapter.paragraphs[1]"):
        assert "# Context\n\n## Glossary\n\nglossary of task.book\n\n# Output" in texts[path]
