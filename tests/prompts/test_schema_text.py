"""The output schema's text (DESIGN D11): descriptions without command lines or
placeholders, braces read as the prompt reads them, and no titles but the tool's."""

from pydantic import BaseModel, Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.prompts._schema_text import clean_description, tool_schema
from langtree.testing import FakeChatModel
from tests.outline_sections import Section


def test_clean_description_drops_commands_and_placeholders() -> None:
    text = "! resample(3)  # x\nRate {item} in {{curly}}.\n\n{COLLECTED_CONTEXT}\n! @sequential"

    assert clean_description(text) == "Rate item in {curly}."


def test_clean_description_leaves_the_braces_the_prompt_leaves() -> None:
    text = 'Answer like {{"score": 1}}, keyed by {section.title}, or {{title}} for {title}.'

    assert clean_description(text) == (
        'Answer like {{"score": 1}}, keyed by {section.title}, or {title} for title.'
    )


class TaskScore(TreeNode):
    """Score the essay."""

    score: str = Field(description='Answer like {{"score": 1}}, keyed by {essay.part}.')


def test_a_description_without_variables_reads_the_same_in_the_schema_and_the_prompt() -> None:
    model = FakeChatModel()
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskScore)

    structure.run()

    (call,) = model.calls
    assert call.schema is not None
    properties = call.schema["properties"]
    assert isinstance(properties, dict)
    description = 'Answer like {{"score": 1}}, keyed by {essay.part}.'
    assert properties["score"]["description"] == description
    assert "## Score\n\n" + description + "\n" in call.text


def test_tool_schema_cleans_nested_descriptions_and_keeps_the_rest() -> None:
    class Step(BaseModel):
        sections: list[Section] = Field(description="The sections.")

    schema = tool_schema(Step)

    assert schema["$defs"]["Section"]["description"] == "One section, titled title."
    assert schema["$defs"]["Section"]["properties"]["title"] == {
        "description": "The title, in {braces} style.",
        "type": "string",
    }
    assert schema["properties"]["sections"]["items"] == {"$ref": "#/$defs/Section"}


def test_tool_schema_keeps_only_its_own_title_which_names_the_tool() -> None:
    class Step(BaseModel):
        title: str = Field(description="A field named title keeps its name.")
        sections: list[Section] = Field(description="The sections.")

    schema = tool_schema(Step)

    assert schema == {
        "$defs": {
            "Section": {
                "description": "One section, titled title.",
                "properties": {
                    "title": {"description": "The title, in {braces} style.", "type": "string"}
                },
                "required": ["title"],
                "type": "object",
            }
        },
        "properties": {
            "title": {"description": "A field named title keeps its name.", "type": "string"},
            "sections": {
                "description": "The sections.",
                "items": {"$ref": "#/$defs/Section"},
                "type": "array",
            },
        },
        "required": ["title", "sections"],
        "title": "Step",
        "type": "object",
    }
