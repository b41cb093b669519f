"""A ``TreeNode`` subclass shows pydantic its texts without commands; LangTree reads them whole."""

from __future__ import annotations

from typing import Annotated, Generic, TypeVar

import pytest
from pydantic import Field, create_model

from langtree import CommandParseError, RunStructure, TreeNode
from langtree.structure.tree._texts import read_class_texts
from langtree.structure.tree._tree_node import WrittenTexts, without_commands, written_texts

SECTION_DOC = """
    ! @sequential
    One section of the report.

    ! resample(2)  # two drafts
    Keep it short.
    """


class Section(TreeNode):
    """
    ! @sequential
    One section of the report.

    ! resample(2)  # two drafts
    Keep it short.
    """

    title: str = Field(description="! llm('fast')\nThe section's title.")
    body: Annotated[str, Field(description="! llm('slow')\nThe section's text.")]
    note: str = Field(default="", description="A plain description\n    kept as written.")


class TaskReport(TreeNode):
    """
    Write a report about {topic}.
    ! @each[sections]->task.report.sections@{{value.title=sections.title}}*
    """

    topic: str = Field(description="What the report is about.")
    sections: list[Section] = Field(description="! llm('fast')\nThe report's sections.")
    verdict: str = Field(description="! llm('slow')")


def test_the_json_schema_shows_no_command_lines() -> None:
    schema = TaskReport.model_json_schema()

    assert schema["description"] == "Write a report about {topic}."
    assert [schema["properties"][name].get("description") for name in TaskReport.model_fields] == [
        "What the report is about.",
        "The report's sections.",
        None,
    ]
    section = schema["$defs"]["Section"]
    assert section["description"] == "One section of the report.\n\nKeep it short."
    assert {name: value["description"] for name, value in section["properties"].items()} == {
        "title": "The section's title.",
        "body": "The section's text.",
        "note": "A plain description\n    kept as written.",
    }


def test_model_fields_show_descriptions_without_commands() -> None:
    assert {name: info.description for name, info in TaskReport.model_fields.items()} == {
        "topic": "What the report is about.",
        "sections": "The report's sections.",
        "verdict": None,
    }


def test_the_docstring_stays_as_written() -> None:
    assert Section.__doc__ == SECTION_DOC


def test_written_texts_hold_the_commands() -> None:
    assert written_texts(Section) == WrittenTexts(
        docstring=SECTION_DOC,
        descriptions={
            "title": "! llm('fast')\nThe section's title.",
            "body": "! llm('slow')\nThe section's text.",
            "note": "A plain description\n    kept as written.",
        },
    )


def test_langtree_reads_the_commands() -> None:
    texts = read_class_texts(Section)

    assert [len(text.extraction.commands) for text in texts] == [2, 1, 1, 0]
    assert texts[1].extraction.text == "The section's title."


class Subsection(Section):
    """A smaller section."""

    title: str = Field(description="A plain title.")
    depth: int = Field(description="! llm('fast')\nHow deep it lies.")


def test_a_subclass_keeps_its_bases_texts_and_its_own() -> None:
    assert written_texts(Subsection).descriptions == {
        "title": "A plain title.",
        "body": "! llm('slow')\nThe section's text.",
        "note": "A plain description\n    kept as written.",
        "depth": "! llm('fast')\nHow deep it lies.",
    }
    assert Subsection.model_fields["body"].description == "The section's text."
    assert Subsection.model_fields["depth"].description == "How deep it lies."


def test_create_model_keeps_its_bases_texts_and_its_own() -> None:
    model = create_model(
        "Extended", __base__=Section, extra=(str, Field(description="! resample(3)\nMore."))
    )

    assert written_texts(model).descriptions["title"] == "! llm('fast')\nThe section's title."
    assert written_texts(model).descriptions["extra"] == "! resample(3)\nMore."
    assert model.model_fields["extra"].description == "More."


T = TypeVar("T")


class Box(TreeNode, Generic[T]):
    item: T = Field(description="! llm('fast')\nThe item.")


def test_a_parametrised_generic_keeps_the_texts() -> None:
    assert written_texts(Box[int]).descriptions == {"item": "! llm('fast')\nThe item."}
    assert Box[int].model_json_schema()["properties"]["item"]["description"] == "The item."


def test_a_class_completed_by_model_rebuild_keeps_showing_the_prose() -> None:
    class TaskLater(TreeNode):
        part: Later = Field(description="! llm('fast')\nThe part.")

    class Later(TreeNode):
        text: str

    assert not TaskLater.__pydantic_complete__
    assert TaskLater.model_fields["part"].description == "The part."
    TaskLater.model_rebuild()

    assert TaskLater.model_fields["part"].description == "The part."
    assert written_texts(TaskLater).descriptions == {"part": "! llm('fast')\nThe part."}
    assert TaskLater.model_json_schema()["properties"]["part"]["description"] == "The part."


def test_runs_see_the_commands_of_an_inherited_field() -> None:
    class TaskSub(Section):
        pass

    structure = RunStructure()
    structure.add(TaskSub)

    assert [(step.fields, step.model) for step in structure.plan().steps] == [
        (("title",), "fast"),
        (("body",), "slow"),
    ]


class Shouting(TreeNode):
    """Great! Now summarise.

    ! @each [items]->task.x@{{value.a=items}}*
    """

    items: list[str] = Field(description="Items!\n! llm(\nThe items.")


def test_a_command_that_does_not_parse_loses_its_lines_and_fails_on_add() -> None:
    assert Shouting.model_json_schema()["description"] == "Great! Now summarise."
    assert Shouting.model_fields["items"].description == "Items!\nThe items."
    with pytest.raises(CommandParseError):
        read_class_texts(Shouting)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param(None, None, id="none"),
        pytest.param("  Plain\n    text.", "  Plain\n    text.", id="no-commands-as-is"),
        pytest.param("Great! @all of you", "Great! @all of you", id="bang-inside-prose"),
        pytest.param("! @parallel", None, id="only-commands"),
        pytest.param("Intro.\n    ! @parallel\n    More.", "Intro.\nMore.", id="dedented"),
        pytest.param(
            "! @each[items]->task.x@{{\n    value.a=items\n}}*\nText.", "Text.", id="multiline"
        ),
    ],
)
def test_without_commands(text: str | None, shown: str | None) -> None:
    assert without_commands(text) == shown
