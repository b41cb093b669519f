"""Known fields inside a node generated whole are not asked for and keep their known values
(DESIGN D2, D8, D9)."""

from collections.abc import Mapping

from pydantic import Field, field_validator

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest


class Item(TreeNode):
    """Write one item."""

    topic: str = Field(description="The item's topic.")
    text: str = Field(description="The item's text.")


class TaskList(TreeNode):
    """
    ! @all->task.list.items@{{value.topic=theme}}*
    Write a list of items.
    """

    theme: str = Field(description="The theme.")
    items: list[Item] = Field(description="Three items.")


def run(task: type[TreeNode], inputs: Mapping[object, object], model: FakeChatModel):
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(task)
    return structure.run(inputs)


def item_schema(model: FakeChatModel, step: int = 0) -> dict[str, object]:
    schema = model.calls[step].schema
    assert schema is not None
    definitions = schema["$defs"]
    assert isinstance(definitions, dict)
    return definitions["Item"]


def test_a_broadcast_target_is_left_out_of_the_elements_a_model_generates() -> None:
    model = FakeChatModel()

    result = run(TaskList, {TaskList: {"theme": "owls"}}, model)

    assert list(item_schema(model)["properties"]) == ["text"]  # type: ignore[call-overload]
    assert [(i.topic, i.text) for i in result[TaskList].items] == [
        ("owls", "text 1"),
        ("owls", "text 2"),
    ]


def test_a_value_the_model_sends_for_a_broadcast_target_does_not_win() -> None:
    def responder(request: FakeRequest) -> dict[str, object]:
        return {"items": [{"topic": "cats", "text": "one"}, {"text": "two"}]}

    result = run(TaskList, {TaskList: {"theme": "owls"}}, FakeChatModel(responder=responder))

    assert [(i.topic, i.text) for i in result[TaskList].items] == [("owls", "one"), ("owls", "two")]


def test_a_generated_broadcast_source_reaches_the_generated_elements() -> None:
    model = FakeChatModel()

    result = run(TaskList, {}, model)

    assert [call.fields for call in model.calls] == [("theme",), ("items",)]
    assert {item.topic for item in result[TaskList].items} == {"theme 1"}


class Part(TreeNode):
    """Write a part about {style} in the {tone} tone."""

    style: str = Field(default="plain", description="The style.")
    tone: str = Field(default_factory=lambda: "warm", description="The tone.")
    text: str = Field(description="The text.")

    @field_validator("text")
    @classmethod
    def not_shouting(cls, text: str) -> str:
        if text.isupper():
            raise ValueError("the text must not be all capitals")
        return text


class TaskDocument(TreeNode):
    """Write a document."""

    parts: list[Part] = Field(description="Two parts.")


def test_defaults_inside_a_node_generated_whole_are_known() -> None:
    answers = iter(
        [
            {"parts": [{"text": "LOUD"}]},
            {"parts": [{"style": "ornate", "tone": "cold", "text": "quiet"}]},
        ]
    )
    model = FakeChatModel(responder=lambda request: next(answers))

    result = run(TaskDocument, {}, model)

    schema = model.calls[0].schema
    assert schema is not None
    part = schema["$defs"]["Part"]  # type: ignore[index]
    assert (list(part["properties"]), part["required"]) == (["text"], ["text"])
    assert "Write a part about plain in the warm tone." in model.calls[0].text
    # The user's validator still checks the step's output; the known values stay.
    assert [call.attempt for call in result.trace] == [1, 2]
    assert "the text must not be all capitals" in (result.trace[0].error or "")
    assert [(p.style, p.tone, p.text) for p in result[TaskDocument].parts] == [
        ("plain", "warm", "quiet")
    ]


def test_the_preview_shows_the_defaults_too() -> None:
    structure = RunStructure()
    structure.add(TaskDocument)

    (prompt,) = structure.prompts()

    assert "### Part\n\nWrite a part about plain in the warm tone.\n\n#### Text\n" in prompt.text


class Inner(TreeNode):
    score: float = Field(description="A score.")


class Scored(TreeNode):
    inner: Inner = Field(default_factory=Inner.model_construct, description="Partial.")
    text: str = Field(description="The text.")


class TaskScored(TreeNode):
    parts: list[Scored] = Field(description="The parts.")


def test_a_partial_default_node_inside_a_node_generated_whole_is_generated() -> None:
    model = FakeChatModel()

    result = run(TaskScored, {}, model)

    schema = model.calls[0].schema
    assert schema is not None
    assert list(schema["$defs"]["Scored"]["properties"]) == ["inner", "text"]  # type: ignore[index]
    assert [part.inner.score for part in result[TaskScored].parts] == [1.0, 2.0]
