"""``@context[...]``: the entries a node declares for its steps' context, checked at
``validate()`` (docs/dsl.md, "@context rules"). What the steps then show is pinned in
tests/prompts/test_declared_context.py."""

import pytest
from pydantic import Field

from langtree import TreeNode
from langtree.errors import Diagnostic
from tests.structure.validated import diagnostics, line_in, problems


def marked(diagnostic: Diagnostic) -> str:
    """The text the diagnostic's marker stands under."""
    start = diagnostic.column - 1
    return diagnostic.source_line[start : start + diagnostic.length]


class Paragraph(TreeNode):
    text: str = Field(description="The paragraph as written.")
    summary: str = Field(description="One sentence.")
    sentiment: str = Field(description="positive, neutral or negative.")


class Meta(TreeNode):
    author: str = Field(description="Who wrote the section.")


# --- what is accepted ----------------------------------------------------------------


class Section(TreeNode):
    """
    ! @context[heading, paragraphs.*.summary, paragraphs.**.sentiment, meta.author, summary]
    Summarise one section.
    """

    heading: str = Field(description="The heading.")
    meta: Meta = Field(description="About the section.")
    paragraphs: list[Paragraph] = Field(description="The paragraphs.")
    summary: str = Field(description="Two sentences.")


class TaskReport(TreeNode):
    """! @context[]"""

    sections: list[Section] = Field(description="The sections.")


class TaskEverything(TreeNode):
    """! @context[*]"""

    title: str
    body: str


class Chapter(TreeNode):
    """
    ! @parallel
    ! @context[sections.*.paragraphs.***.text, verdict]
    """

    sections: list[Section] = Field(description="The sections.")
    verdict: str = Field(description="Generated with the sections: never known to the step.")


class TaskBook(TreeNode):
    chapters: list[Chapter]


@pytest.mark.parametrize(
    "task",
    [
        pytest.param(TaskReport, id="fields-plucks-node-path-and-generated-field"),
        pytest.param(TaskEverything, id="every-value"),
        pytest.param(TaskBook, id="nested-plucks-and-a-never-known-field"),
    ],
)
def test_valid_declarations_give_no_diagnostic(task: type[TreeNode]) -> None:
    assert diagnostics(task) == ()


# --- a path whose first name is not a field ------------------------------------------


class TaskUnknownEntry(TreeNode):
    """! @context[heading, headng.text]"""

    heading: str
    summary: str


def test_unknown_first_name_suggests_the_closest_field() -> None:
    assert problems(TaskUnknownEntry) == [
        (
            "error",
            "@context names 'headng', which is not a field of 'TaskUnknownEntry'",
            "did you mean 'heading'? its fields are 'heading', 'summary'",
        )
    ]


def test_unknown_first_name_is_marked_in_its_line() -> None:
    (diagnostic,) = diagnostics(TaskUnknownEntry)

    assert (diagnostic.class_name, diagnostic.field_name, diagnostic.line, marked(diagnostic)) == (
        "TaskUnknownEntry",
        None,
        line_in(TaskUnknownEntry, "! @context[heading, headng"),
        "headng",
    )


class TaskNothingClose(TreeNode):
    """! @context[verdict]"""

    heading: str


def test_unknown_first_name_without_a_close_field_lists_the_fields() -> None:
    assert problems(TaskNothingClose) == [
        (
            "error",
            "@context names 'verdict', which is not a field of 'TaskNothingClose'",
            "its fields are 'heading'",
        )
    ]


# --- a path that does not lead anywhere -------------------------------------------------


class TaskThroughValue(TreeNode):
    """! @context[heading.text]"""

    heading: str


class TaskUnknownDeeper(TreeNode):
    """! @context[meta.autor]"""

    meta: Meta


@pytest.mark.parametrize(
    ("task", "message", "hint"),
    [
        pytest.param(
            TaskThroughValue,
            "@context path 'heading.text' does not resolve: Field 'heading' holds a value, "
            "not a node: 'text' cannot be reached through it",
            "paths can only go through fields whose type is a TreeNode or a list of them",
            id="through-a-value",
        ),
        pytest.param(
            TaskUnknownDeeper,
            "@context path 'meta.autor' does not resolve: 'Meta' (task.unknown_deeper.meta) "
            "has no field 'autor'",
            "its fields are 'author'",
            id="unknown-deeper-name",
        ),
    ],
)
def test_path_that_does_not_resolve(task: type[TreeNode], message: str, hint: str) -> None:
    assert problems(task) == [("error", message, hint)]


def test_path_that_does_not_resolve_marks_the_whole_path() -> None:
    (diagnostic,) = diagnostics(TaskThroughValue)

    assert marked(diagnostic) == "heading.text"


# --- lists and pluck operators ---------------------------------------------------------


class TaskUnplucked(TreeNode):
    """! @context[paragraphs.summary]"""

    paragraphs: list[Paragraph]


class Book(TreeNode):
    chapters: list[Chapter]


class TaskInnerUnplucked(TreeNode):
    """! @context[books.*.chapters.verdict]"""

    books: list[Book]


class TaskPluckValue(TreeNode):
    """! @context[heading.*.text]"""

    heading: str


class TaskPluckStrings(TreeNode):
    """! @context[tags.*.text]"""

    tags: list[str]


class TaskPluckUnknown(TreeNode):
    """! @context[paragraphs.*.summry]"""

    paragraphs: list[Paragraph]


@pytest.mark.parametrize(
    ("task", "message", "hint"),
    [
        pytest.param(
            TaskUnplucked,
            "@context path 'paragraphs.summary' crosses a list without a pluck operator",
            "mark every list a pluck path crosses, e.g. 'paragraphs.*.summary'",
            id="list-without-pluck",
        ),
        pytest.param(
            TaskInnerUnplucked,
            "@context path 'books.*.chapters.verdict' crosses a list without a pluck operator",
            "mark every list a pluck path crosses, e.g. 'books.*.chapters.*.verdict'",
            id="inner-list-without-pluck",
        ),
        pytest.param(
            TaskPluckValue,
            "Cannot pluck from 'heading' in 'heading.*.text': it is 'str', not a list",
            "pluck from a list of nodes, e.g. 'items.*.id' where 'items' is a list",
            id="pluck-from-a-value",
        ),
        pytest.param(
            TaskPluckStrings,
            "Cannot pluck 'text' from the elements of 'tags' in 'tags.*.text': they are "
            "'str' values, not nodes",
            "pluck from a list of nodes, or send the list itself: 'tags'",
            id="pluck-from-strings",
        ),
        pytest.param(
            TaskPluckUnknown,
            "Cannot pluck 'summry' from the elements of 'paragraphs' in "
            "'paragraphs.*.summry': 'Paragraph' has no field 'summry'",
            "did you mean 'summary'? Its fields are 'text', 'summary', 'sentiment'",
            id="pluck-unknown-field",
        ),
    ],
)
def test_pluck_rules(task: type[TreeNode], message: str, hint: str) -> None:
    assert problems(task) == [("error", message, hint)]


# --- '*', repeats, and where the command stands ------------------------------------------


class TaskStarWithNames(TreeNode):
    """! @context[heading, *, summary]"""

    heading: str
    summary: str


def test_star_with_names_is_an_error_at_the_star() -> None:
    (diagnostic,) = diagnostics(TaskStarWithNames)

    assert (diagnostic.message, diagnostic.hint, marked(diagnostic)) == (
        "'*' in @context means every known value: it cannot be listed with other entries",
        "write '! @context[*]' for every known value, or '! @context[heading, summary]' for "
        "these entries only",
        "*",
    )


class TaskTwice(TreeNode):
    """! @context[
        heading,
        summary,
        heading,
    ]"""

    heading: str
    summary: str


def test_the_same_entry_twice_is_an_error_at_the_second() -> None:
    (diagnostic,) = diagnostics(TaskTwice)

    assert (diagnostic.message, diagnostic.hint, diagnostic.line, marked(diagnostic)) == (
        "@context lists 'heading' twice",
        "remove the second 'heading'",
        line_in(TaskTwice, "heading,") + 2,
        "heading",
    )


class TaskTwoContexts(TreeNode):
    """! @context[heading]
    ! @context[summary]"""

    heading: str
    summary: str


def test_two_context_commands_are_an_error_at_the_second() -> None:
    (diagnostic,) = diagnostics(TaskTwoContexts)

    assert (diagnostic.message, diagnostic.hint, diagnostic.line) == (
        "'TaskTwoContexts' has more than one @context command",
        "keep one @context[...] that lists every entry",
        line_in(TaskTwoContexts, "! @context[summary]"),
    )


class TaskContextInField(TreeNode):
    heading: str
    summary: str = Field(description="Two sentences.\n! @context[heading]")


def test_context_in_a_field_description_is_an_error() -> None:
    (diagnostic,) = diagnostics(TaskContextInField)

    assert (diagnostic.message, diagnostic.hint, diagnostic.field_name) == (
        "A @context command belongs in the class docstring, not in a field's description",
        "move it to the docstring of 'TaskContextInField'",
        "summary",
    )


def test_every_problem_of_a_declaration_is_reported_at_once() -> None:
    class TaskManyProblems(TreeNode):
        """! @context[headng, heading, heading, paragraphs.summary]"""

        heading: str
        paragraphs: list[Paragraph]

    assert [message for _, message, _ in problems(TaskManyProblems)] == [
        "@context names 'headng', which is not a field of 'TaskManyProblems'",
        "@context lists 'heading' twice",
        "@context path 'paragraphs.summary' crosses a list without a pluck operator",
    ]


def test_error_renders_the_line_with_a_marker_and_the_hint() -> None:
    (diagnostic,) = diagnostics(TaskUnknownEntry)

    assert diagnostic.render() == (
        "error: @context names 'headng', which is not a field of 'TaskUnknownEntry'\n"
        '        """! @context[heading, headng.text]"""\n'
        "                               ^~~~~~\n"
        f"  in TaskUnknownEntry ({__file__}:{line_in(TaskUnknownEntry, '! @context')})\n"
        "  hint: did you mean 'heading'? its fields are 'heading', 'summary'"
    )
