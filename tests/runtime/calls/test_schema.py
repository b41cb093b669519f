"""The step's output class and the schema a model receives with each call (DESIGN D11)."""

import json
from typing import Annotated, Any

import pytest
from pydantic import Field, create_model

from langtree import RunStructure, StructureError, TreeNode
from langtree.runtime import LLMProvider
from langtree.testing import FakeChatModel
from tests.outline_sections import Section


class TaskOutline(TreeNode):
    """
    Outline {topic}.
    """

    sections: list[Section] = Field(description="The sections.")


def test_the_model_gets_a_clean_schema_and_the_output_validates_as_the_users_class() -> None:
    model = FakeChatModel()
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskOutline)

    result = structure.run({TaskOutline: {}}, variables={"topic": "rivers"})

    schema = model.calls[0].schema
    assert schema is not None
    text = json.dumps(schema)
    assert "!" not in text
    assert "{title}" not in text
    assert "PROMPT_SUBTREE" not in text
    assert all(isinstance(s, Section) for s in result[TaskOutline].sections)
    assert model.calls[0].tool_name == "TaskOutline_sections"


def test_invalid_arguments_are_still_rejected_by_the_step_class() -> None:
    replies = iter([{"sections": [{"name": "x"}]}, {"sections": [{"title": "ok"}]}])
    model = FakeChatModel(responder=lambda request: next(replies))
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskOutline)

    result = structure.run({TaskOutline: {}}, variables={"topic": "rivers"})

    assert [record.error is None for record in result.trace] == [False, True]
    assert "sections.0.title" in (result.trace[0].error or "")
    assert result[TaskOutline].sections[0].title == "ok"


def test_nodes_generated_whole_too_deep_for_pydantic_are_refused_before_any_call() -> None:
    nested: type[TreeNode] = create_model(
        "Level0", __base__=TreeNode, text=(str, Field(description="The text."))
    )
    for level in range(1, 300):
        nested = create_model(
            f"Level{level}", __base__=TreeNode, child=(nested, Field(description="Deeper."))
        )
    task = create_model("TaskDeep", __base__=TreeNode, child=(nested, Field(description="All.")))
    model = FakeChatModel()
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(task)

    with pytest.raises(StructureError) as caught:
        structure.run()

    (problem,) = caught.value.diagnostics
    assert (problem.class_name, problem.message, problem.hint) == (
        "TaskDeep",
        "The output of step 'task.deep:child' nests too deep for pydantic to build its JSON schema",
        "give 'child' a value (a default, or a partial node in the inputs) so that the nodes "
        "below are generated step by step, or nest the classes less deeply",
    )
    assert model.calls == []


class TaskTagged(TreeNode):
    """! together"""

    tags: Annotated[list[str], Field(max_length=1)] = Field(description="Tags.")
    score: int = Field(ge=0, le=10, description="Score.")


def test_field_constraints_reach_the_schema_and_an_answer_that_breaks_them_is_retried() -> None:
    answers = iter([{"tags": ["a", "b"], "score": 11}, {"tags": ["a"], "score": 3}])
    model = FakeChatModel(responder=lambda _: next(answers))
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskTagged)

    result = structure.run()

    schema = model.calls[0].schema
    assert schema is not None
    properties: Any = schema["properties"]
    assert properties["tags"]["maxItems"] == 1
    assert (properties["score"]["minimum"], properties["score"]["maximum"]) == (0, 10)
    assert [(r.attempt, r.failure) for r in result.trace] == [(1, "invalid_output"), (2, None)]
    assert result.trace[0].error == (
        "- tags: List should have at most 1 item after validation, not 2\n"
        "- score: Input should be less than or equal to 10"
    )
    assert (result[TaskTagged].tags, result[TaskTagged].score) == (["a"], 3)
