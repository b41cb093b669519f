"""``llm``/``resample`` inside a node generated whole take effect: a node field whose class
declares them gets a step of its own, and a field with its own command inside such a
node gets a step after the step that creates the node (DESIGN D3, D13; the spec's "Model
Inheritance Rules")."""

from enum import Enum
from pathlib import Path

import pytest
from pydantic import Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.structure.planning._plan import ExecutionPlan
from langtree.testing import FakeChatModel
from tests.structure.validated import refused

FILE = __file__
SOURCE_LINES = Path(FILE).read_text().splitlines()


def line_of(snippet: str) -> int:
    return next(i for i, line in enumerate(SOURCE_LINES, 1) if snippet in line)


class Verse(TreeNode):
    """A verse of the poem."""

    words: str = Field(description="The words.")
    mood: str = Field(description="! resample(3)\nOne word for the mood of the words.")


class Poem(TreeNode):
    """! llm("smart")
    Write a poem."""

    title: str = Field(description='! llm("fast")\nThe title.')
    verses: list[Verse] = Field(description="The verses.")


class TaskAnthology(TreeNode):
    """Collect poems."""

    theme: str = Field(description="The theme.")
    poem: Poem = Field(description="A poem.")
    known_poem: Poem = Field(
        default_factory=lambda: Poem.model_construct(verses=[]), description="Another poem."
    )


def provider() -> LLMProvider:
    """A provider of the models the trees here choose."""
    return LLMProvider(
        {"default": FakeChatModel(), "fast": FakeChatModel(), "smart": FakeChatModel()}
    )


def structure(*tasks: type[TreeNode]) -> RunStructure:
    result = RunStructure(provider=provider())
    for task in tasks or (TaskAnthology,):
        result.add(task)
    return result


def table(plan: ExecutionPlan) -> list[tuple[str, str | None, int, tuple[str, ...]]]:
    """Each step's id, model, resample count and prerequisites, in plan order."""
    return [(step.id, step.model, step.resample, step.depends_on) for step in plan.steps]


def test_commands_inside_a_node_generated_whole_give_steps_of_their_own() -> None:
    plan = structure().plan()

    assert table(plan) == [
        ("task.anthology:theme", None, 1, ()),
        ("task.anthology:poem", "smart", 1, ("task.anthology:theme",)),
        (
            "task.anthology.poem:title",
            "fast",
            1,
            ("task.anthology:poem", "task.anthology:theme"),
        ),
        (
            "task.anthology.known_poem:title",
            "fast",
            1,
            ("task.anthology:poem", "task.anthology:theme"),
        ),
        (
            "task.anthology.poem.verses:mood",
            "smart",
            3,
            ("task.anthology.poem:title", "task.anthology:poem", "task.anthology:theme"),
        ),
        (
            "task.anthology.known_poem:verses",
            "smart",
            1,
            ("task.anthology.known_poem:title", "task.anthology:poem", "task.anthology:theme"),
        ),
        (
            "task.anthology.known_poem.verses:mood",
            "smart",
            3,
            (
                "task.anthology.known_poem:title",
                "task.anthology.known_poem:verses",
                "task.anthology:poem",
                "task.anthology:theme",
            ),
        ),
    ]
    assert [(step.id, step.creator) for step in plan.steps if step.creator] == [
        ("task.anthology.poem:title", "task.anthology:poem"),
        ("task.anthology.poem.verses:mood", "task.anthology:poem"),
        ("task.anthology.known_poem.verses:mood", "task.anthology.known_poem:verses"),
    ]
    assert plan.step("task.anthology.poem.verses:mood").element_path == (
        "task.anthology.poem.verses[*]"
    )
    assert plan.step("task.anthology.poem.verses:mood").list_levels == 1


def test_the_steps_they_give_leave_no_warning() -> None:
    assert structure().validate() == ()


def test_a_split_step_waits_for_the_step_that_creates_its_node_in_the_graph() -> None:
    mermaid = structure().plan().to_mermaid()

    # A box's label runs over several lines: each statement starts on a new line, indented.
    statements = mermaid.split("\n    ")
    assert statements[1:4] == [
        's0["task.anthology\ntheme"]',
        's1["task.anthology\npoem\nmodel: smart"]',
        's2["task.anthology.poem\ntitle\nmodel: fast"]',
    ]
    assert (
        statements[5] == 's4["task.anthology.poem.verses[#42;]\nmood\nmodel: smart, resample: 3"]'
    )
    assert {"s1 --> s2", "s1 --> s4", "s2 --> s4"} <= set(statements)


class Summary(TreeNode):
    """! llm("smart")
    ! resample(2)
    A summary of the report."""

    text: str = Field(description="Three sentences.")


class TaskReport(TreeNode):
    """! @parallel
    Report on the quarter."""

    title: str = Field(description="The title.")
    summary: Summary = Field(description="The summary.")
    tags: list[str] = Field(description="Keywords.")


def test_a_node_field_whose_class_declares_its_model_is_a_step_of_its_own() -> None:
    assert table(structure(TaskReport).plan()) == [
        ("task.report:title+tags", None, 1, ()),
        ("task.report:summary", "smart", 2, ()),
    ]


class TaskOverride(TreeNode):
    """! llm("fast", override=true)
    ! @parallel"""

    title: str = Field(description="The title.")
    summary: Summary = Field(description="The summary.")


class TaskFieldChoice(TreeNode):
    """! @parallel"""

    title: str = Field(description="The title.")
    summary: Summary = Field(description='! llm("fast")\n! resample(4)\nThe summary.')


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        pytest.param(
            TaskOverride,
            [("task.override:title", "fast", 1, ()), ("task.override:summary", "fast", 2, ())],
            id="override-above-wins",
        ),
        pytest.param(
            TaskFieldChoice,
            [
                ("task.field_choice:title", None, 1, ()),
                ("task.field_choice:summary", "fast", 4, ()),
            ],
            id="the-field-s-own-choice-wins",
        ),
    ],
)
def test_which_choice_a_node_field_of_its_own_takes(
    task: type[TreeNode], expected: list[tuple[str, str | None, int, tuple[str, ...]]]
) -> None:
    assert table(structure(task).plan()) == expected


class Chapter(TreeNode):
    """! @parallel"""

    heading: str = Field(description="The heading.")
    blurb: str = Field(description='! llm("fast")\nOne line.')
    teaser: str = Field(description='! llm("smart")\nA question.')


class TaskBook(TreeNode):
    """Write a book."""

    preface: str = Field(description="The preface.")
    chapters: list[Chapter] = Field(description="The chapters.")
    afterword: str = Field(description="The afterword.")


def test_split_steps_keep_the_order_of_their_nodes() -> None:
    assert table(structure(TaskBook).plan()) == [
        ("task.book:preface", None, 1, ()),
        ("task.book:chapters", None, 1, ("task.book:preface",)),
        ("task.book.chapters:blurb", "fast", 1, ("task.book:chapters", "task.book:preface")),
        ("task.book.chapters:teaser", "smart", 1, ("task.book:chapters", "task.book:preface")),
        (
            "task.book:afterword",
            None,
            1,
            ("task.book.chapters:blurb", "task.book.chapters:teaser", "task.book:chapters"),
        ),
    ]


class Label(Enum):
    SPAM = "spam"
    HAM = "ham"


class Vote(TreeNode):
    """! resample(5)
    ! @resampled[label]->mode
    A vote."""

    label: Label = Field(description="The label.")


class TaskBallot(TreeNode):
    vote: Vote = Field(description="The vote.")


def test_resampled_in_a_class_its_step_generates_whole_is_a_warning() -> None:
    [warning] = structure(TaskBallot).validate()

    assert (warning.class_name, warning.field_name, warning.line) == (
        "Vote",
        None,
        line_of("! @resampled[label]->mode"),
    )
    assert warning.message == (
        "@resampled[label] has no effect: 'Vote' is generated whole by the step of "
        "'TaskBallot.vote', whose samples are combined field by field of 'TaskBallot' "
        "('vote' takes its first valid sample)"
    )
    assert warning.hint == (
        "give 'vote' a value (a default, or a partial node in the inputs) so that the fields "
        "of 'Vote' get steps of their own, whose samples @resampled combines"
    )


def test_the_same_class_descended_into_takes_its_commands() -> None:
    plan = structure().plan({TaskAnthology: {"theme": "Rain", "poem": {"title": "Known"}}})

    assert table(plan) == [
        ("task.anthology.poem:verses", "smart", 1, ()),
        ("task.anthology.known_poem:title", "fast", 1, ()),
        ("task.anthology.poem.verses:mood", "smart", 3, ("task.anthology.poem:verses",)),
        ("task.anthology.known_poem:verses", "smart", 1, ("task.anthology.known_poem:title",)),
        (
            "task.anthology.known_poem.verses:mood",
            "smart",
            3,
            ("task.anthology.known_poem:title", "task.anthology.known_poem:verses"),
        ),
    ]


class Stanza(TreeNode):
    """! @sequential"""

    line: str = Field(description="! transform(\"'x'\")")


class TaskVerses(TreeNode):
    stanza: Stanza = Field(description='! llm("fast")\nThe stanza.')


def test_a_transform_in_a_node_generated_whole_stays_an_error() -> None:
    [error] = refused(TaskVerses, provider=provider())

    assert error.message == (
        "transform() cannot compute 'Stanza.line': 'Stanza' is generated whole at "
        "task.verses.stanza, inside the step of 'TaskVerses.stanza', whose model generates "
        "every field of it"
    )


class Note(TreeNode):
    text: str = Field("draft", description='! llm("fast")\nThe text.')
    score: int = Field(description="A score.")


class TaskNotes(TreeNode):
    note: Note = Field(description="A note.")


def test_a_choice_on_a_field_known_inside_a_node_generated_whole_is_a_warning() -> None:
    [warning] = structure(TaskNotes).validate()

    assert (warning.class_name, warning.field_name, warning.line) == (
        "Note",
        "text",
        line_of("""text: str = Field("draft", description='! llm("fast")"""),
    )
    assert warning.message == (
        "llm(\"fast\") has no effect: 'text' at task.notes.note has a value before the run "
        "(a default, or an '@all ... *' value) inside the node that the step of "
        "'TaskNotes.note' generates whole, so no step of its own generates it"
    )
    assert warning.hint == (
        "remove llm(\"fast\"), or remove the value of 'text' so that a step of its own "
        'generates it with llm("fast")'
    )


class Shelf(TreeNode):
    """A shelf of the library."""

    label: str = Field(description="The label.")
    poem: Poem = Field(description="The poem on it.")


class TaskLibrary(TreeNode):
    """! @parallel"""

    name: str = Field(description="The name.")
    shelf: Shelf = Field(description="One shelf.")


def test_split_steps_nest_each_after_the_step_that_creates_its_node() -> None:
    plan = structure(TaskLibrary).plan()

    assert [(step.id, step.model, step.resample, step.creator) for step in plan.steps] == [
        ("task.library:name+shelf", None, 1, None),
        ("task.library.shelf:poem", "smart", 1, "task.library:name+shelf"),
        ("task.library.shelf.poem:title", "fast", 1, "task.library.shelf:poem"),
        ("task.library.shelf.poem.verses:mood", "smart", 3, "task.library.shelf:poem"),
    ]
    assert plan.step("task.library.shelf.poem.verses:mood").depends_on == (
        "task.library.shelf.poem:title",
        "task.library.shelf:poem",
    )


class Tag(TreeNode):
    """! llm("fast")"""

    code: str = Field(description="! input()")
    label: str = Field(description="The label.")


class Crate(TreeNode):
    tag: Tag = Field(description="The crate's tag.")


class TaskCellar(TreeNode):
    crate: Crate = Field(description="A crate.")


def test_what_cannot_work_inside_a_split_step_names_the_outermost_node_generated_whole() -> None:
    [error] = refused(TaskCellar, provider=provider())

    assert (error.message, error.hint) == (
        "input() cannot mark 'Tag.code' as given by the caller: 'Tag' is generated whole at "
        "task.cellar.crate.tag, inside the step of 'TaskCellar.crate', whose model writes "
        "every field of it",
        "give 'crate' a value (a default, or a partial node in the inputs) so that the fields "
        "below it get steps of their own and the inputs give 'code', or remove input() to "
        "have the model write 'code'",
    )


class Article(TreeNode):
    """An article hooked on {hook}."""

    body: str = Field(description="The body.")
    blurb: str = Field(description='! llm("fast")\nOne line.')


class TaskMagazine(TreeNode):
    article: Article = Field(description="The article.")


class TaskSource(TreeNode):
    hook: str = Field(description="! @all->task.magazine.article@{{prompt.hook=hook}}\nA hook.")


def test_data_sent_into_a_node_with_split_steps_is_waited_for_by_its_creator_too() -> None:
    plan = structure(TaskMagazine, TaskSource).plan()

    assert {step.id: step.depends_on for step in plan.steps} == {
        "task.source:hook": (),
        "task.magazine:article": ("task.source:hook",),
        "task.magazine.article:blurb": ("task.magazine:article", "task.source:hook"),
    }
