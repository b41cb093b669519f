"""``RunStructure({"instructions": "system"})``: a step's instructions in the system
message, byte-identical for every call of the step, the context in the human message."""

from __future__ import annotations

import pytest
from pydantic import Field

from langtree import LLMProvider, RunStructure, StructureError, TreeNode
from langtree.prompts._template import DEFAULT_TEMPLATE
from langtree.testing import FakeChatModel


class Paragraph(TreeNode):
    """
    ! together
    Summarise one paragraph and judge its tone.
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
    """You are summarising a technical report for a busy reader."""

    sections: list[Section] = Field(default=[], description="The report's sections, in order.")


DOCUMENT = {
    "sections": [
        {
            "heading": f"Section {s}",
            "paragraphs": [{"text": f"Paragraph {p} of section {s}."} for p in (1, 2)],
        }
        for s in (1, 2)
    ]
}

PARAGRAPH_SYSTEM = """\
You write one part of a larger structured document. The task below describes the whole
document down to the part you write; the next message holds what is already known. Write
only the requested fields, as structured output.

# Report

You are summarising a technical report for a busy reader.

## Sections

The report's sections, in order.

### Section

Summarise one section from its paragraph summaries.

#### Paragraphs

The section's paragraphs.

##### Paragraph

Summarise one paragraph and judge its tone.

###### Summary

One sentence that captures the paragraph.

###### Sentiment

positive, neutral or negative."""


def structure(config: dict[str, object] | None = None, model: FakeChatModel | None = None):
    provider = LLMProvider({"default": model}) if model is not None else None
    built = RunStructure(config, provider=provider)
    built.add(TaskReport)
    return built


def test_the_instructions_are_the_system_message_and_the_context_the_human_one() -> None:
    prompts = structure({"instructions": "system"}).prompts({TaskReport: DOCUMENT})

    first = prompts[0]
    assert first.step_id == "task.report.sections.paragraphs:summary+sentiment"
    assert first.messages[0].content == PARAGRAPH_SYSTEM
    assert first.messages[1].content == (
        "# Context\n\n## Text\n\nParagraph 1 of section 1.\n\n# Output\n\n"
        "Write Summary, Sentiment.\n"
    )


def test_the_system_message_is_byte_identical_across_a_step_kinds_calls() -> None:
    model = FakeChatModel()
    structure({"instructions": "system"}, model).run({TaskReport: DOCUMENT})

    by_step: dict[str | None, set[str]] = {}
    for call in model.calls:
        by_step.setdefault(call.tool_name, set()).add(call.messages[0].text)
    assert sorted((name, len(texts)) for name, texts in by_step.items()) == [
        ("Paragraph_summary_sentiment", 1),
        ("Section_summary", 1),
    ]
    assert by_step["Paragraph_summary_sentiment"] == {PARAGRAPH_SYSTEM}
    assert len(model.calls) == 6
    assert len({call.messages[1].text for call in model.calls}) == 6


def test_by_default_the_instructions_and_the_context_share_the_human_message() -> None:
    [inline, system] = (
        structure(config).prompts({TaskReport: DOCUMENT})[0]
        for config in (None, {"instructions": "system"})
    )

    assert inline.messages[1].content.startswith("# Report\n\nYou are summarising")
    assert "# Context\n\n## Text\n\nParagraph 1 of section 1." in inline.messages[1].content
    assert structure({"instructions": "human"}).prompts({TaskReport: DOCUMENT})[0] == inline
    instructions = system.messages[0].content.split("\n\n", 1)[1]
    assert inline.messages[1].content.startswith(instructions)


def test_a_context_placed_in_a_docstring_stays_in_the_instructions() -> None:
    class Note(TreeNode):
        """
        Known so far:

        {COLLECTED_CONTEXT}

        Write the note.
        """

        topic: str
        text: str

    class TaskNotes(TreeNode):
        notes: list[Note]

    built = RunStructure({"instructions": "system"})
    built.add(TaskNotes)
    [prompt] = built.prompts({TaskNotes: {"notes": [{"topic": "Tides"}]}})

    assert "### Topic\n\nTides\n\nWrite the note." in prompt.messages[0].content
    assert prompt.messages[1].content == "# Output\n\nWrite Text.\n"


def test_a_template_receives_the_instructions_and_the_context_apart() -> None:
    template = DEFAULT_TEMPLATE.replace("{{ document }}", "{{ context }}---\n{{ instructions }}")
    prompt = structure({"prompt_template": template}).prompts({TaskReport: DOCUMENT})[0]

    assert prompt.messages[1].content.startswith(
        "# Context\n\n## Text\n\nParagraph 1 of section 1.\n---\n# Report\n"
    )


@pytest.mark.parametrize(
    ("config", "message", "hint"),
    [
        (
            {"instructions": "assistant"},
            "'instructions' must be 'human' or 'system', got 'assistant'",
            "pass 'human' (the default: instructions and context in one message) or 'system' "
            "(instructions in the system message, the same for every call of a step)",
        ),
        (
            {"instructions": "system", "prompt_template": DEFAULT_TEMPLATE},
            "'instructions' chooses between LangTree's default templates, and "
            "'prompt_template' replaces them",
            "drop 'instructions' and put {{ instructions }} and {{ context }} where your "
            "template wants them (see docs/prompts.md, 'Instructions in the system message')",
        ),
    ],
    ids=["unknown-value", "with-a-template"],
)
def test_a_bad_instructions_setting_is_an_error(
    config: dict[str, object], message: str, hint: str
) -> None:
    with pytest.raises(StructureError) as caught:
        RunStructure(config)

    assert [(d.message, d.hint) for d in caught.value.diagnostics] == [(message, hint)]
