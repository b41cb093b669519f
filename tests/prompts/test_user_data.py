"""User data is always data: what the caller or a model supplies reaches the prompt as
written, and text no prompt can carry is refused before any call (DESIGN D9, D10)."""

import pytest
from pydantic import Field

from langtree import ExecutionError, RunStructure, TreeNode
from langtree.runtime import LLMProvider
from langtree.runtime.calls._provider import ModelConfig
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest, ResponderResult


class TaskNote(TreeNode):
    """
    ! @sequential
    You write a note about {topic}.

    {COLLECTED_CONTEXT}

    {PROMPT_SUBTREE}

    Keep it short.
    """

    topic: str = Field(description="The topic.")
    source: str = Field(description="Where the topic comes from.")
    tags: list[str] = Field(default=[], description="Labels.")
    draft: str = Field(description="A first draft about {topic}.")
    note: str = Field(description="The final note, better than {draft}.")


def note_structure(model: FakeChatModel | None = None) -> RunStructure:
    provider = LLMProvider({"fake": model}) if model is not None else None
    structure = RunStructure(provider=provider)
    structure.add(TaskNote)
    return structure


def draft_prompt(topic: str) -> str:
    """The human message of the draft step, ``topic`` put in where it belongs."""
    return (
        f"# Note\n\nYou write a note about {topic}.\n\n"
        f"## Topic\n\n{topic}\n\n## Source\n\nthe press\n\n## Tags\n\n[]\n\n"
        f"## Draft\n\nA first draft about {topic}.\n\n"
        "Keep it short.\n\n# Output\n\nWrite Draft.\n"
    )


# Each of these strings was a mark the assembler once used inside the text it built: a
# value holding one moved the context, cut the document or vanished.
LOOKALIKES = [
    pytest.param("a \x00COLLECTED_CONTEXT 0 2\x00 b", id="context-mark"),
    pytest.param("a \x00COLLECTED_CONTEXT 0 2\x00\n\nb", id="context-mark-and-blank-line"),
    pytest.param("a \x00PROMPT_SUBTREE\x00 b", id="subtree-mark"),
    pytest.param("a \x00DROP\x00\n\nb", id="drop-mark"),
    pytest.param("{COLLECTED_CONTEXT} {PROMPT_SUBTREE} {source}", id="placeholders"),
    pytest.param("\x00 nul \x00", id="nul"),
]


@pytest.mark.parametrize("topic", LOOKALIKES)
def test_an_input_that_looks_like_structure_is_shown_as_written(topic: str) -> None:
    prompts = note_structure().prompts({TaskNote: {"topic": topic, "source": "the press"}})

    assert [p.step_id for p in prompts] == ["task.note:draft", "task.note:note"]
    assert prompts[0].messages[1].content == draft_prompt(topic)


@pytest.mark.parametrize("topic", LOOKALIKES)
def test_an_external_variable_that_looks_like_structure_is_shown_as_written(
    topic: str,
) -> None:
    class TaskCard(TreeNode):
        """
        Write a card for {audience}.

        {COLLECTED_CONTEXT}
        """

        sender: str = Field(description="Who sends it.")
        card: str = Field(description="The card.")

    structure = RunStructure()
    structure.add(TaskCard)

    (prompt,) = structure.prompts({TaskCard: {"sender": "Ada"}}, {"audience": topic})

    assert prompt.messages[1].content == (
        f"# Card\n\nWrite a card for {topic}.\n\n## Sender\n\nAda\n\n"
        "## Card\n\nThe card.\n\n# Output\n\nWrite Card.\n"
    )


@pytest.mark.parametrize("draft", LOOKALIKES)
def test_a_model_value_that_looks_like_structure_reaches_the_next_step_as_written(
    draft: str,
) -> None:
    def responder(request: FakeRequest) -> ResponderResult:
        return {"draft": draft} if request.fields == ("draft",) else {"note": "done"}

    model = FakeChatModel(responder=responder)

    result = note_structure(model).run({TaskNote: {"topic": "owls", "source": "the press"}})

    assert result[TaskNote].note == "done"
    assert [call.fields for call in model.calls] == [("draft",), ("note",)]
    assert model.calls[1].messages[1].content == (
        "# Note\n\nYou write a note about owls.\n\n"
        "## Topic\n\nowls\n\n## Source\n\nthe press\n\n## Tags\n\n[]\n\n"
        f"## Draft\n\n{draft}\n\n"
        f"## Note\n\nThe final note, better than {draft}.\n\n"
        "Keep it short.\n\n# Output\n\nWrite Note.\n"
    )


# -- text no prompt can carry -----------------------------------------------------------

INPUT_HINT = (
    "  hint: decode the text strictly where it is read (a lone surrogate comes from "
    "errors='surrogateescape' or a broken '\\ud800' escape); LangTree never alters the "
    "values it is given"
)


def refused(where: str, surrogate: str, index: int, hint: str = INPUT_HINT) -> str:
    return (
        f"{where} holds the lone surrogate {surrogate!r} at index {index}: it is not "
        f"Unicode text, and no prompt can carry it\n{hint}"
    )


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        pytest.param(
            {"topic": "owl\ud800s", "source": "x"},
            refused("The value of 'task.note.topic'", "\ud800", 3),
            id="field",
        ),
        pytest.param(
            {"topic": "owls", "source": "x", "tags": ["ok", "b\udfffad"]},
            refused("The value of 'task.note.tags[1]'", "\udfff", 1),
            id="list-element",
        ),
    ],
)
def test_a_lone_surrogate_in_the_inputs_is_refused_by_prompts(
    inputs: dict[str, object], message: str
) -> None:
    with pytest.raises(ExecutionError) as raised:
        note_structure().prompts({TaskNote: inputs})

    assert str(raised.value) == message


def test_a_lone_surrogate_in_a_default_is_refused() -> None:
    class TaskSign(TreeNode):
        signature: str = Field(default="\udcff", description="How to sign.")
        card: str = Field(description="The card.")

    structure = RunStructure()
    structure.add(TaskSign)

    with pytest.raises(ExecutionError) as raised:
        structure.prompts({})

    assert str(raised.value) == refused("The value of 'task.sign.signature'", "\udcff", 0)


def test_a_lone_surrogate_in_the_inputs_is_refused_by_run_before_any_call() -> None:
    model = FakeChatModel()

    with pytest.raises(ExecutionError) as raised:
        note_structure(model).run({TaskNote: {"topic": "owl\ud800s", "source": "x"}})

    assert str(raised.value) == refused("The value of 'task.note.topic'", "\ud800", 3)
    assert model.calls == []


def test_a_lone_surrogate_in_an_external_variable_is_refused_before_any_call() -> None:
    class TaskCard(TreeNode):
        """Write a card for {audience}."""

        card: str = Field(description="The card.")

    model = FakeChatModel()
    structure = RunStructure(provider=LLMProvider({"fake": model}))
    structure.add(TaskCard)

    with pytest.raises(ExecutionError) as from_prompts:
        structure.prompts({}, {"audience": "\udc80ll"})
    with pytest.raises(ExecutionError) as from_run:
        structure.run({}, {"audience": "\udc80ll"})

    expected = refused("The external variable 'audience'", "\udc80", 0)
    assert str(from_prompts.value) == str(from_run.value) == expected
    assert model.calls == []


def test_a_lone_surrogate_from_a_model_is_invalid_output_and_asked_again() -> None:
    answers = ['{"draft": "bad\\ud800"}', '{"draft": "good"}', '{"note": "done"}']

    def responder(request: FakeRequest) -> ResponderResult:
        return answers.pop(0)

    model = FakeChatModel(responder=responder)
    structure = RunStructure(
        provider=LLMProvider({"fake": ModelConfig(model, method="json_schema")})
    )
    structure.add(TaskNote)

    result = structure.run({TaskNote: {"topic": "owls", "source": "x"}})

    assert (result[TaskNote].draft, result.trace[0].failure, result.trace[0].error) == (
        "good",
        "invalid_output",
        "- " + refused("The answer's value 'answer.draft'", "\ud800", 3).split("\n")[0],
    )
