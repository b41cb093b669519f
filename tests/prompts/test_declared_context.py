"""What a step's ``# Context`` holds when its node declares ``@context[...]``
(docs/prompts.md, "Declared context").

The shape is the report workload's: a section's summary step needs its heading and its
paragraphs' summaries, not each paragraph's full text and sentiment.
"""

import inspect

import pytest
from pydantic import Field

from langtree import ExecutionError, LLMProvider, RunStructure, TreeNode
from langtree.prompts._preview import StepPrompt
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest

SYSTEM = """\
You write one part of a larger structured document. The task below describes the whole
document down to the part you write; the context holds what is already known. Write only
the requested fields, as structured output.

"""
TASK = """\
# Report

You summarise a report for {audience}.

## Sections

The sections, in order.

### Section

Summarise the section '{heading}'.

#### Summary

Two sentences.
"""
OUTPUT = """
# Output

Write Summary.
"""


class Paragraph(TreeNode):
    text: str = Field(description="The paragraph as written.")
    summary: str = Field(description="One sentence on the paragraph.")
    sentiment: str = Field(description="positive, neutral or negative.")


def report_task(*declaration: str) -> type[TreeNode]:
    """``TaskReport`` whose ``Section`` docstring starts with the ``declaration`` lines."""

    class Section(TreeNode):
        __doc__ = "\n".join([*declaration, "Summarise the section '{heading}'."])

        heading: str = Field(description="The heading.")
        paragraphs: list[Paragraph] = Field(description="The paragraphs.")
        summary: str = Field(description="Two sentences.")

    class TaskReport(TreeNode):
        """You summarise a report for {audience}."""

        audience: str = Field(description="Who reads the report.")
        sections: list[Section] = Field(description="The sections, in order.")

    return TaskReport


INPUTS = {
    "audience": "engineers",
    "sections": [
        {
            "heading": "Tides",
            "paragraphs": [
                {"text": "The moon pulls the sea.", "summary": "The moon.", "sentiment": "calm"},
                {"text": "The sun helps a little.", "summary": "The sun.", "sentiment": "warm"},
            ],
        }
    ],
}


def section_prompt(task: type[TreeNode], inputs: dict[str, object] = INPUTS) -> StepPrompt:
    structure = RunStructure()
    structure.add(task)
    structure.validate()
    (prompt,) = structure.prompts({task: inputs})
    assert prompt.node_path == "task.report.sections[0]"
    return prompt


def expected(context: str) -> str:
    task = TASK.format(audience="engineers", heading="Tides")
    return SYSTEM + task + (f"\n# Context\n\n{context}" if context else "") + OUTPUT


EVERY_VALUE = """\
## Heading

Tides

## Paragraphs

[
  {
    "text": "The moon pulls the sea.",
    "summary": "The moon.",
    "sentiment": "calm"
  },
  {
    "text": "The sun helps a little.",
    "summary": "The sun.",
    "sentiment": "warm"
  }
]
"""


def test_star_shows_every_known_value() -> None:
    prompt = section_prompt(report_task("! @context[*]"))

    assert prompt.text == expected(EVERY_VALUE)


def test_star_is_what_a_node_without_the_command_shows() -> None:
    assert section_prompt(report_task("! @context[*]")).text == section_prompt(report_task()).text


def test_declared_entries_only_in_the_order_written() -> None:
    prompt = section_prompt(report_task("! @context[paragraphs.*.summary, heading]"))

    assert prompt.text == expected(
        '## Paragraphs Summary\n\n[\n  "The moon.",\n  "The sun."\n]\n\n## Heading\n\nTides\n'
    )


def test_nothing_declared_keeps_outputs_entries_and_named_values() -> None:
    task = report_task(
        "! @context[]",
        "! @each[paragraphs]->summary@{{outputs.sentiments=paragraphs.sentiment}}*",
    )

    prompt = section_prompt(task)

    assert prompt.text == expected('## Sentiments\n\n[\n  "calm",\n  "warm"\n]\n')


def test_nothing_declared_and_nothing_sent_leaves_no_context_section() -> None:
    prompt = section_prompt(report_task("! @context[]"))

    assert prompt.text == expected("")


def test_outputs_entries_come_first_whatever_is_declared() -> None:
    task = report_task(
        "! @context[heading]",
        "! @each[paragraphs]->summary@{{outputs.sentiments=paragraphs.sentiment}}*",
    )

    prompt = section_prompt(task)

    assert prompt.text == expected(
        '## Sentiments\n\n[\n  "calm",\n  "warm"\n]\n\n## Heading\n\nTides\n'
    )


def test_values_a_model_writes_first_show_as_pending_in_the_dry_run() -> None:
    structure = RunStructure()
    task = report_task("! @context[heading, paragraphs.*.summary]")
    structure.add(task)
    inputs = {
        "audience": "engineers",
        "sections": [{"heading": "Tides", "paragraphs": [{"text": "Moon."}, {"text": "Sun."}]}],
    }

    prompt = structure.prompts({task: inputs})[-1]

    pending = '"[pending: produced by step task.report.sections.paragraphs:summary]"'
    assert prompt.step_id == "task.report.sections:summary"
    assert prompt.text == expected(
        f"## Heading\n\nTides\n\n## Paragraphs Summary\n\n[\n  {pending},\n  {pending}\n]\n"
    )


def context_of(prompt: StepPrompt) -> str:
    """The ``# Context`` section's entries ("" without one)."""
    if "\n# Context\n\n" not in prompt.text:
        return ""
    return prompt.text.split("\n# Context\n\n")[1].split("\n# Output\n")[0]


def test_values_not_known_and_the_steps_own_fields_are_left_out() -> None:
    # {heading} in the docstring makes the summary wait for a step of its own.
    task = report_task("! @parallel", "! @context[summary, heading]")
    structure = RunStructure()
    structure.add(task)
    inputs = {"audience": "engineers", "sections": [{"paragraphs": []}]}

    first, second = structure.prompts({task: inputs})

    assert (first.fields, context_of(first)) == (("heading",), "")
    pending = "[pending: produced by step task.report.sections:heading]"
    assert (second.fields, context_of(second)) == (("summary",), f"## Heading\n\n{pending}\n")


class Note(TreeNode):
    text: str = Field(description="The note.")
    tag: str | None = Field(default="none", description="A tag, if any.")


class TaskNotes(TreeNode):
    """! @context[notes.***.tag]"""

    notes: list[Note] = Field(description="The notes.")
    verdict: str = Field(description="One word.")


def test_a_strict_pluck_that_finds_no_value_fails_naming_the_command() -> None:
    structure = RunStructure()
    structure.add(TaskNotes)
    inputs = {TaskNotes: {"notes": [{"text": "a", "tag": "x"}, {"text": "b", "tag": None}]}}

    with pytest.raises(ExecutionError) as caught:
        structure.prompts(inputs)

    assert str(caught.value) == (
        "Pluck 'notes.***.tag' found no value at 'notes[1].tag' (element 1): '.***.' requires "
        "every element to have one\n"
        '        """! @context[notes.***.tag]"""\n'
        "                      ^~~~~~~~~~~~~\n"
        f"  in TaskNotes ({__file__}:{inspect.getsourcelines(TaskNotes)[1] + 1})\n"
        "  hint: use '.**.' to leave out missing values, or '.*.' to keep them as None"
    )


# -- a run ------------------------------------------------------------------------------


def answer(request: FakeRequest) -> dict[str, object]:
    """Each paragraph's summary names its text; the section's summary is fixed."""
    if request.node_path == "task.report.sections[0]":
        return {"summary": "Moon and sun."}
    text = request.text.split("## Text\n\n")[1].split("\n")[0]
    return {"summary": f"About: {text}", "sentiment": "calm"}


def test_the_section_call_sees_only_the_summaries() -> None:
    model = FakeChatModel(responder=answer)
    task = report_task("! @context[heading, paragraphs.*.summary]")
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(task)
    inputs = {
        "audience": "engineers",
        "sections": [
            {
                "heading": "Tides",
                "paragraphs": [{"text": "The moon pulls."}, {"text": "The sun helps."}],
            }
        ],
    }

    result = structure.run({task: inputs})

    (section_call,) = [c for c in model.calls if c.node_path == "task.report.sections[0]"]
    assert section_call.text.split("\n# Context\n\n")[1] == (
        "## Heading\n\nTides\n\n"
        "## Paragraphs Summary\n\n"
        '[\n  "About: The moon pulls.",\n  "About: The sun helps."\n]\n'
        "\n# Output\n\nWrite Summary.\n"
    )
    assert "The moon pulls.\n" not in section_call.text
    assert "calm" not in section_call.text
    assert result[task].sections[0].summary == "Moon and sun."  # type: ignore[attr-defined]
