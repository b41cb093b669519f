"""``RunStructure({"outline": ..., "field_descriptions": ...})``: which texts of the
classes a step's prompt carries — the levels that lead to its node, and its fields'
descriptions, which the output schema also carries."""

from __future__ import annotations

import pytest
from pydantic import Field

from langtree import ExecutionError, LLMProvider, RunStructure, StructureError, TreeNode
from langtree.prompts._template import LEAN_TEMPLATE
from langtree.testing import FakeChatModel


class Paragraph(TreeNode):
    """
    ! together
    Summarise one paragraph of {heading} and judge its tone.
    """

    text: str = Field(description="The paragraph as written.")
    summary: str = Field(description="One sentence that captures the paragraph.")
    sentiment: str = Field(description="positive, neutral or negative.")


class Section(TreeNode):
    """Summarise one section from its paragraph summaries."""

    heading: str = Field(description="The section's heading.")
    paragraphs: list[Paragraph] = Field(default=[], description="The section's paragraphs.")
    summary: str = Field(description="Two sentences on the section's argument.")


class TaskReport(TreeNode):
    """
    You are summarising a technical report for a busy reader.

    {PROMPT_SUBTREE}

    Keep every answer short.
    """

    sections: list[Section] = Field(default=[], description="The report's sections, in order.")


DOCUMENT = {
    "sections": [{"heading": "Method", "paragraphs": [{"text": "We measured twice."}]}],
}

CONTEXT_AND_REQUEST = """\
# Context

## Text

We measured twice.

# Output

Write Summary, Sentiment.
"""


def paragraph_prompt(config: dict[str, object]) -> str:
    structure = RunStructure(config)
    structure.add(TaskReport)
    prompt = structure.prompts({TaskReport: DOCUMENT})[0]
    assert prompt.step_id == "task.report.sections.paragraphs:summary+sentiment"
    return prompt.messages[1].text


def test_the_root_outline_keeps_the_root_tasks_text_and_the_nodes() -> None:
    assert paragraph_prompt({"outline": "root"}) == (
        """\
# Report

You are summarising a technical report for a busy reader.

## Paragraph

Summarise one paragraph of Method and judge its tone.

### Summary

One sentence that captures the paragraph.

### Sentiment

positive, neutral or negative.

Keep every answer short.

"""
        + CONTEXT_AND_REQUEST
    )


def test_the_node_outline_keeps_the_nodes_text_alone() -> None:
    assert paragraph_prompt({"outline": "node"}) == (
        """\
# Paragraph

Summarise one paragraph of Method and judge its tone.

## Summary

One sentence that captures the paragraph.

## Sentiment

positive, neutral or negative.

"""
        + CONTEXT_AND_REQUEST
    )


def test_the_path_outline_is_the_default() -> None:
    full = paragraph_prompt({})

    assert paragraph_prompt({"outline": "path"}) == full
    assert "## Sections\n\nThe report's sections, in order.\n\n### Section\n" in full
    assert "#### Paragraphs\n\nThe section's paragraphs.\n\n##### Paragraph\n" in full


def test_a_root_tasks_own_step_is_the_same_in_every_outline() -> None:
    class TaskTitle(TreeNode):
        """Name the report."""

        title: str = Field(description="At most ten words.")

    def prompt(outline: str) -> str:
        structure = RunStructure({"outline": outline})
        structure.add(TaskTitle)
        return structure.prompts({TaskTitle: {}})[0].messages[1].text

    assert prompt("root") == prompt("node") == prompt("path")
    assert prompt("node").startswith("# Title\n\nName the report.\n\n## Title\n\nAt most ten")


def test_a_node_below_a_single_node_field_is_titled_by_its_class() -> None:
    class Verdict(TreeNode):
        """Judge the claim."""

        ruling: str = Field(description="Upheld or rejected.")

    class TaskCase(TreeNode):
        """You are a careful judge."""

        verdict: Verdict = Field(description="The court's decision.")

    structure = RunStructure({"outline": "root"})
    structure.add(TaskCase)
    [prompt] = structure.prompts({TaskCase: {"verdict": {}}})

    assert prompt.messages[1].text == (
        "# Case\n\nYou are a careful judge.\n\n## Verdict\n\nJudge the claim.\n\n"
        "### Ruling\n\nUpheld or rejected.\n\n# Output\n\nWrite Ruling.\n"
    )


def test_a_context_placed_in_a_level_left_out_becomes_a_context_section() -> None:
    class Note(TreeNode):
        """Write the note."""

        topic: str
        text: str

    class TaskNotes(TreeNode):
        """
        Known so far:

        {COLLECTED_CONTEXT}
        """

        notes: list[Note]

    structure = RunStructure({"outline": "node"})
    structure.add(TaskNotes)
    [prompt] = structure.prompts({TaskNotes: {"notes": [{"topic": "Tides"}]}})

    assert prompt.messages[1].text == (
        "# Note\n\nWrite the note.\n\n## Text\n\n# Context\n\n## Topic\n\nTides\n\n"
        "# Output\n\nWrite Text.\n"
    )


def test_variables_of_a_level_left_out_are_not_asked_for() -> None:
    class Line(TreeNode):
        """Write one line."""

        text: str

    class TaskPoem(TreeNode):
        """Write a poem for {audience}."""

        lines: list[Line]

    def prompts(outline: str):
        structure = RunStructure({"outline": outline})
        structure.add(TaskPoem)
        return structure.prompts({TaskPoem: {"lines": [{}]}})

    assert prompts("node")[0].variables == {}
    with pytest.raises(ExecutionError, match=r"Missing external variable.*audience"):
        prompts("root")


# --- field descriptions -------------------------------------------------------------------


def test_schema_descriptions_leave_the_fields_to_the_output_schema() -> None:
    assert paragraph_prompt({"outline": "root", "field_descriptions": "schema"}) == (
        """\
# Report

You are summarising a technical report for a busy reader.

## Paragraph

Summarise one paragraph of Method and judge its tone.

Keep every answer short.

"""
        + CONTEXT_AND_REQUEST
    )


def test_the_model_still_receives_the_descriptions_in_the_schema() -> None:
    model = FakeChatModel()
    structure = RunStructure(
        {"field_descriptions": "schema"}, provider=LLMProvider({"default": model})
    )
    structure.add(TaskReport)
    structure.run({TaskReport: DOCUMENT})

    [paragraph_call] = [c for c in model.calls if c.tool_name == "Paragraph_summary_sentiment"]
    assert paragraph_call.schema is not None
    assert paragraph_call.schema["properties"]["summary"] == {
        "description": "One sentence that captures the paragraph.",
        "type": "string",
    }
    assert "One sentence that captures" not in paragraph_call.messages[1].text


def test_a_field_the_schema_cannot_carry_as_written_keeps_its_section() -> None:
    class Claim(TreeNode):
        """A claim and its source."""

        text: str = Field(description="The claim.")
        source: str = Field(description="Where it comes from.")

    class TaskBrief(TreeNode):
        """
        ! together
        Brief {reader}.
        """

        reader: str
        summary: str = Field(description="Three lines for {reader}.")
        verdict: str = Field(description="Go or no-go.")
        claims: list[Claim] = Field(description="The claims the brief rests on.")

    structure = RunStructure({"field_descriptions": "schema"})
    structure.add(TaskBrief)
    [prompt] = structure.prompts({TaskBrief: {"reader": "the board"}})

    assert prompt.messages[1].text == (
        "# Brief\n\nBrief the board.\n\n## Summary\n\nThree lines for the board.\n\n"
        "## Claims\n\nThe claims the brief rests on.\n\n### Claim\n\n"
        "A claim and its source.\n\n#### Text\n\nThe claim.\n\n"
        "#### Source\n\nWhere it comes from.\n\n# Context\n\n## Reader\n\nthe board\n\n"
        "# Output\n\nWrite Summary, Verdict, Claims.\n"
    )


def test_a_template_with_an_empty_system_block_sends_the_human_message_alone() -> None:
    template = "{% block system %}{% endblock %}{% block human %}{{ document }}{% endblock %}"
    structure = RunStructure({"prompt_template": template})
    structure.add(TaskReport)
    prompt = structure.prompts({TaskReport: DOCUMENT})[0]

    assert [message.type for message in prompt.messages] == ["human"]
    assert prompt.text == prompt.messages[0].text


# --- bad settings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "message", "hint"),
    [
        (
            {"outline": "ancestors"},
            "'outline' must be 'path', 'root' or 'node', got 'ancestors'",
            "pass 'path' (the default: every level from the root task down), 'root' (the "
            "root task's text, then the node's) or 'node' (the node's text alone)",
        ),
        (
            {"field_descriptions": True},
            "'field_descriptions' must be 'text' or 'schema', got True",
            "pass 'text' (the default: in the prompt and in the output schema) or "
            "'schema' (in the output schema alone)",
        ),
        (
            {"outline": "rooot"},
            "'outline' must be 'path', 'root' or 'node', got 'rooot'",
            "did you mean 'root'? pass 'path' (the default: every level from the root task "
            "down), 'root' (the root task's text, then the node's) or 'node' (the node's "
            "text alone)",
        ),
    ],
    ids=["outline", "field-descriptions", "misspelt-outline"],
)
def test_a_bad_shape_setting_is_an_error(
    config: dict[str, object], message: str, hint: str
) -> None:
    with pytest.raises(StructureError) as caught:
        RunStructure(config)

    assert [(d.message, d.hint) for d in caught.value.diagnostics] == [(message, hint)]


def test_a_misspelt_shape_setting_is_suggested() -> None:
    with pytest.raises(StructureError) as caught:
        RunStructure({"outlines": "root"})

    [diagnostic] = caught.value.diagnostics
    assert diagnostic.message == "Unknown setting 'outlines'"
    assert diagnostic.hint == "did you mean 'outline'?"


# --- the lean template ----------------------------------------------------------------------


def test_the_lean_template_sends_the_instructions_and_the_context_alone() -> None:
    structure = RunStructure(
        {"outline": "root", "field_descriptions": "schema", "prompt_template": LEAN_TEMPLATE}
    )
    structure.add(TaskReport)
    paragraph = structure.prompts({TaskReport: DOCUMENT})[0]

    assert [(message.type, message.text) for message in paragraph.messages] == [
        (
            "system",
            "# Report\n\nYou are summarising a technical report for a busy reader.\n\n"
            "## Paragraph\n\nSummarise one paragraph of Method and judge its tone.\n\n"
            "Keep every answer short.",
        ),
        ("human", "# Context\n\n## Text\n\nWe measured twice.\n"),
    ]


def test_the_lean_template_names_the_fields_when_nothing_is_known() -> None:
    class TaskTitle(TreeNode):
        """Name a report on tides."""

        title: str = Field(description="At most ten words.")

    structure = RunStructure({"prompt_template": LEAN_TEMPLATE})
    structure.add(TaskTitle)
    [prompt] = structure.prompts({TaskTitle: {}})

    assert [(message.type, message.text) for message in prompt.messages] == [
        ("system", "# Title\n\nName a report on tides.\n\n## Title\n\nAt most ten words."),
        ("human", "Write Title.\n"),
    ]
