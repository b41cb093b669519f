"""``llm``/``resample`` inside a node generated whole cannot take effect: ``validate()``
warns (DESIGN D3, D13; the spec's "Model Inheritance Rules")."""

from pathlib import Path

from pydantic import Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.errors import Diagnostic
from langtree.testing import FakeChatModel

FILE = __file__
SOURCE_LINES = Path(FILE).read_text().splitlines()


def line_of(snippet: str) -> int:
    return next(i for i, line in enumerate(SOURCE_LINES, 1) if snippet in line)


class Verse(TreeNode):
    """A verse.

    ! resample(3)
    """

    words: str = Field(description="The words.")


class Poem(TreeNode):
    """! llm("smart")
    Write a poem."""

    title: str = Field(description='! llm("fast")\nThe title.')
    verses: list[Verse] = Field(description="The verses.")


class TaskAnthology(TreeNode):
    """Collect poems."""

    poem: Poem = Field(description="A poem.")
    known_poem: Poem = Field(
        default_factory=lambda: Poem.model_construct(verses=[]), description="Another poem."
    )


def structure() -> RunStructure:
    models = {"fast": FakeChatModel(), "smart": FakeChatModel()}
    structure = RunStructure(provider=LLMProvider(models))
    structure.add(TaskAnthology)
    return structure


def hint(call: str, holder: str = "TaskAnthology.poem", field: str = "poem") -> str:
    return (
        f"put {call} in the description of {holder!r} to apply it to that step, or give "
        f"{field!r} a value (a default, or a partial node in the inputs) so that the fields "
        "below it get steps of their own"
    )


def message(call: str, name: str, tag: str, holder: str = "TaskAnthology.poem") -> str:
    return (
        f"{call} has no effect: {name!r} is generated whole at {tag}, inside the step of "
        f"{holder!r}, with that step's settings"
    )


def found(warnings: tuple[Diagnostic, ...]) -> list[tuple[str, str | None, int, str, str]]:
    assert all(w.severity == "warning" for w in warnings)
    return [(w.class_name or "", w.field_name, w.line or 0, w.message, w.hint) for w in warnings]


RESAMPLE_LINE = line_of("! resample(3)")
VERSES_IN_KNOWN_POEM = (
    "Verse",
    None,
    RESAMPLE_LINE,
    message("resample(3)", "Verse", "task.anthology.known_poem.verses", "Poem.verses"),
    hint("resample(3)", "Poem.verses", "verses"),
)


def test_every_llm_and_resample_below_a_node_generated_whole_is_a_warning() -> None:
    assert found(structure().validate()) == [
        VERSES_IN_KNOWN_POEM,
        (
            "Verse",
            None,
            RESAMPLE_LINE,
            message("resample(3)", "Verse", "task.anthology.poem.verses"),
            hint("resample(3)"),
        ),
        (
            "Poem",
            None,
            line_of('"""! llm("smart")'),
            message('llm("smart")', "Poem", "task.anthology.poem"),
            hint('llm("smart")'),
        ),
        (
            "Poem",
            "title",
            line_of('! llm("fast")\\nThe title.'),
            message('llm("fast")', "Poem", "task.anthology.poem"),
            hint('llm("fast")'),
        ),
    ]


def test_the_same_class_descended_into_takes_its_commands() -> None:
    plan = structure().plan({TaskAnthology: {"poem": {"title": "Known"}}})

    assert [(step.id, step.model) for step in plan.steps] == [
        ("task.anthology.poem:verses", "smart"),
        ("task.anthology.known_poem:title", "fast"),
        ("task.anthology.known_poem:verses", "smart"),
    ]


def test_supplying_part_of_the_node_leaves_only_the_warnings_below_what_is_still_whole() -> None:
    warnings = structure().validate({TaskAnthology: {"poem": {"title": "Known"}}})

    assert found(warnings) == [
        VERSES_IN_KNOWN_POEM,
        (
            "Verse",
            None,
            RESAMPLE_LINE,
            message("resample(3)", "Verse", "task.anthology.poem.verses", "Poem.verses"),
            hint("resample(3)", "Poem.verses", "verses"),
        ),
    ]
