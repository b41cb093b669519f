"""``@context[...]``: what the context of a node's steps holds (docs/dsl.md, "@context").

The entries stand inside the brackets as written, in order: ``*`` (every known value),
field paths with the pluck operators of mapping sources, or nothing at all. Whether an
entry names a field is the structure stage's business (tests/structure/commands/test_context.py).
"""

import pytest

from langtree import parse_command
from langtree.dsl import ContextCommand, Span
from langtree.dsl._fastpath import parse_fast
from tests.dsl.parsed import parse_error


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        pytest.param("! @context[*]", ("*",), id="every-value"),
        pytest.param("! @context[]", (), id="nothing"),
        pytest.param("! @context[ ]", (), id="nothing-spaced"),
        pytest.param("! @context[heading]", ("heading",), id="one-field"),
        pytest.param(
            "! @context[heading, paragraphs.*.summary]",
            ("heading", "paragraphs.*.summary"),
            id="field-and-pluck",
        ),
        pytest.param(
            "! @context[meta.author,items.**.id , items.***.id]",
            ("meta.author", "items.**.id", "items.***.id"),
            id="node-path-and-every-operator",
        ),
        pytest.param(
            "! @context[sections.*.paragraphs.*.text]",
            ("sections.*.paragraphs.*.text",),
            id="nested-plucks",
        ),
        pytest.param("! @context[ heading , ]", ("heading",), id="trailing-comma"),
        pytest.param("!@context[*, heading]", ("*", "heading"), id="star-with-names-parses"),
        pytest.param("! @context[a, a]", ("a", "a"), id="twice-parses"),
    ],
)
def test_context_entries_are_kept_as_written_in_order(text: str, paths: tuple[str, ...]) -> None:
    assert parse_command(text) == ContextCommand(paths=paths)


def test_inline_comment_is_kept() -> None:
    command = parse_command("! @context[heading]  # the section's own")

    assert command == ContextCommand(paths=("heading",), comment="the section's own")


def test_multiline_context_with_comments() -> None:
    text = """! @context[
        heading,               # the section's own
        # a comment on its own line, with a ] and a , in it
        paragraphs.*.summary,
    ]"""

    command = parse_command(text)

    assert command == ContextCommand(paths=("heading", "paragraphs.*.summary"))


def test_entry_spans_point_into_the_source() -> None:
    command = parse_command("! @context[\n    heading,\n    paragraphs.*.summary]", first_line=4)

    assert isinstance(command, ContextCommand)
    assert command.path_spans == (
        Span(line=5, column=5, length=7),
        Span(line=6, column=5, length=20),
    )


@pytest.mark.parametrize(
    ("command", "text"),
    [
        pytest.param(ContextCommand(paths=("*",)), "! @context[*]", id="every-value"),
        pytest.param(ContextCommand(paths=()), "! @context[]", id="nothing"),
        pytest.param(
            ContextCommand(paths=("a", "b.*.c"), comment="why"),
            "! @context[a, b.*.c] # why",
            id="entries-and-comment",
        ),
    ],
)
def test_to_text_is_canonical_and_parses_back(command: ContextCommand, text: str) -> None:
    assert command.to_text() == text
    assert parse_command(text) == command


def test_fast_path_leaves_context_to_the_full_parser() -> None:
    assert parse_fast("! @context[heading, paragraphs.*.summary]", 1) is None


@pytest.mark.parametrize(
    ("text", "message", "column", "hint"),
    [
        pytest.param(
            "! @context",
            "Expected '[' after '@context', got the end of the command",
            11,
            "write '@context[field, ...]', '@context[*]' or '@context[]'",
            id="no-brackets",
        ),
        pytest.param(
            "! @context [heading]",
            "Space before '[' not allowed - use '@context[heading]' not '@context [heading]'",
            11,
            "write '@context[' with no space",
            id="space-before-bracket",
        ),
        pytest.param(
            "! @context\n[heading]",
            "A command may continue on the next line only inside [...], {{...}} or (...)",
            11,
            "join the lines, or break the line inside the brackets",
            id="line-break-before-bracket",
        ),
        pytest.param(
            "! @context[heading",
            "Unclosed '[' opened at line 1, column 11",
            11,
            "add ']' to close it",
            id="missing-bracket",
        ),
        pytest.param(
            "! @context[heading,",
            "Unclosed '[' opened at line 1, column 11",
            11,
            "add ']' to close it",
            id="missing-bracket-after-comma",
        ),
        pytest.param(
            "! @context[heading summary]",
            "Expected ']' to close '[' opened at line 1, column 11, got 'summary'",
            20,
            "separate items with ',' and close with ']'",
            id="missing-comma",
        ),
        pytest.param(
            "! @context[heading,,summary]",
            "Empty entry in @context",
            20,
            "write a field path where the entry is missing, or remove the extra ','",
            id="empty-between-commas",
        ),
        pytest.param(
            "! @context[, heading]",
            "Empty entry in @context",
            12,
            "write a field path where the entry is missing, or remove the extra ','",
            id="empty-before-first-comma",
        ),
        pytest.param(
            "! @context[heading] summary",
            "Unexpected text after the command, got 'summary'",
            21,
            "start a comment with '#', or put each command on its own '!' line",
            id="trailing-text",
        ),
        pytest.param(
            "! @context[heading]->task.x",
            "Unexpected text after the command, got '->'",
            20,
            "start a comment with '#', or put each command on its own '!' line",
            id="trailing-arrow",
        ),
        pytest.param(
            "! @context[*.summary]",
            "A @context entry cannot start with a pluck operator",
            12,
            "write '*' alone for every known value, or name the list before the pluck, "
            "e.g. 'paragraphs.*.summary'",
            id="leading-pluck",
        ),
        pytest.param(
            "! @context[**]",
            "A @context entry cannot start with a pluck operator",
            12,
            "write '*' alone for every known value, or name the list before the pluck, "
            "e.g. 'paragraphs.*.summary'",
            id="double-star-alone",
        ),
        pytest.param(
            "! @context[2nd]",
            "Expected a field path or '*' in @context, got '2nd'",
            12,
            "write field paths such as 'heading' or 'paragraphs.*.summary'",
            id="not-a-name",
        ),
        pytest.param(
            "! @context[paragraphs.*]",
            "Expected a field name to pluck after 'paragraphs.*'",
            22,
            "name the field to take from each element, e.g. 'paragraphs.*.id'",
            id="pluck-without-field",
        ),
        pytest.param(
            "! @context[meta.]",
            "Empty path component after 'meta.'",
            16,
            "name a field after '.', or remove the trailing '.' (e.g. 'sections.title')",
            id="trailing-dot",
        ),
        pytest.param(
            "! @contxt[heading]",
            "Unknown command '@contxt'",
            3,
            "did you mean '@context'?",
            id="misspelled",
        ),
    ],
)
def test_context_errors(text: str, message: str, column: int, hint: str) -> None:
    error = parse_error(text)

    assert (error.message, error.line, error.column, error.hint) == (
        message,
        1,
        column,
        hint,
    )


def test_context_error_renders_line_marker_location_and_hint() -> None:
    error = parse_error("! @context[heading,,summary]")

    assert str(error) == (
        "Empty entry in @context\n"
        "    ! @context[heading,,summary]\n"
        "                       ^\n"
        "  at line 1, column 20\n"
        "  hint: write a field path where the entry is missing, or remove the extra ','"
    )
