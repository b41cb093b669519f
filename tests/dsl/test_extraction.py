"""Finding commands in docstrings and descriptions, and the prompt text left around them."""

import functools

import pytest

from langtree import CommandParseError
from langtree.dsl import NodeModifierCommand
from langtree.dsl._extraction import StrayCommand, extract_commands, find_stray_commands
from langtree.structure.call_commands._table import call_signatures
from tests.dsl.parsed import each, text_type_error, to

SIGNATURES = call_signatures()
"""LangTree's call-style commands, which the texts here call."""

DOCSTRING = """
    You analyse a report.

    ! @sequential  # fields in order
    ! @each[sections]->task.digest@{{
        value.summaries=sections.summary,  # one per section
    }}*

    {PROMPT_SUBTREE}

    ! # a note for maintainers
    Be concise.
    """


def test_commands_come_with_their_lines_and_source_text() -> None:
    extraction = extract_commands(DOCSTRING, signatures=SIGNATURES)

    assert [(c.line, c.end_line) for c in extraction.commands] == [(4, 4), (5, 7), (11, 11)]
    assert extraction.commands[1].text == (
        "    ! @each[sections]->task.digest@{{\n"
        "        value.summaries=sections.summary,  # one per section\n"
        "    }}*"
    )
    assert extraction.commands[1].command == each(
        "sections", "task.digest", to("value.summaries", "sections.summary")
    )


def test_text_is_dedented_with_command_lines_removed() -> None:
    extraction = extract_commands(DOCSTRING, signatures=SIGNATURES)

    assert extraction.text == "You analyse a report.\n\n{PROMPT_SUBTREE}\n\nBe concise."


@pytest.mark.parametrize(
    ("text", "clean"),
    [
        pytest.param(None, "", id="none"),
        pytest.param("", "", id="empty"),
        pytest.param("! @sequential", "", id="only-a-command"),
        pytest.param("Plain description.", "Plain description.", id="no-commands"),
        pytest.param("First.\n! @parallel\nSecond.", "First.\nSecond.", id="command-between-lines"),
        pytest.param("First.\n\n\nSecond.", "First.\n\n\nSecond.", id="author-blank-lines-kept"),
        pytest.param(
            "First.\n\n! @parallel\n\nSecond.", "First.\n\nSecond.", id="blank-run-collapsed"
        ),
        pytest.param(
            'Use {"a": [1, 2]} as JSON.\n    ! @parallel',
            'Use {"a": [1, 2]} as JSON.',
            id="braces-in-prose-untouched",
        ),
        pytest.param(
            "Title\n    indented\n      more\n    ! together",
            "Title\nindented\n  more",
            id="relative-indentation-kept",
        ),
        pytest.param("Wow! Not a command.", "Wow! Not a command.", id="bang-inside-a-line"),
    ],
)
def test_clean_text(text: str | None, clean: str) -> None:
    assert extract_commands(text, signatures=SIGNATURES).text == clean


def test_brackets_inside_strings_and_comments_do_not_continue_a_command() -> None:
    extraction = extract_commands('! name="[("  # {{ open?\nText after.', signatures=SIGNATURES)

    assert len(extraction.commands) == 1
    assert extraction.text == "Text after."


def test_error_line_counts_from_the_start_of_the_text() -> None:
    text = "Intro.\n\n    ! @each[items]->task@{{\n        value.a=items . a\n    }}*"

    with pytest.raises(CommandParseError) as caught:
        extract_commands(text, signatures=SIGNATURES)

    assert (caught.value.line, caught.value.column) == (4, 17)
    assert caught.value.source_line == "        value.a=items . a"


def test_unclosed_command_swallowing_prose_names_the_opening() -> None:
    with pytest.raises(CommandParseError) as caught:
        extract_commands(
            "Text.\n! @each[items]->task@{{value.a=items\nmore text", signatures=SIGNATURES
        )

    assert caught.value.message == (
        "Expected '}}' to close '{{' opened at line 2, column 22, got 'more'"
    )
    assert (caught.value.line, caught.value.column) == (3, 1)


def test_commands_keep_their_order() -> None:
    extraction = extract_commands("! @parallel\n! @sequential", signatures=SIGNATURES)

    assert [c.command for c in extraction.commands] == [
        NodeModifierCommand(modifier="parallel"),
        NodeModifierCommand(modifier="sequential"),
    ]


def test_blank_lines_around_the_text_are_dropped_with_their_line_numbers() -> None:
    extraction = extract_commands("\n\n\nText.\n\n! @parallel\n\n", signatures=SIGNATURES)

    assert (extraction.text, extraction.line_map) == ("Text.", (4,))


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        pytest.param(
            5,
            "extract_commands() takes a docstring or description as a str (or None), "
            "got an object of type 'int'\n"
            "  hint: pass the text itself, e.g. extract_commands(cls.__doc__)",
            id="int",
        ),
        pytest.param(
            b"Text.",
            "extract_commands() takes a docstring or description as a str (or None), "
            "got an object of type 'bytes'\n"
            "  hint: decode the bytes first, e.g. extract_commands(data.decode())",
            id="bytes",
        ),
    ],
)
def test_text_that_is_not_a_str_is_a_type_error(text: object, rendered: str) -> None:
    read = functools.partial(extract_commands, signatures=SIGNATURES)

    assert str(text_type_error(read, text)) == rendered


@pytest.mark.parametrize(
    ("text", "stray"),
    [
        pytest.param(
            "Summarise the text. ! @all->task.x@{{value.y=z}}",
            [(1, 21, "! @all->task.x@{{value.y=z}}")],
            id="all-after-prose",
        ),
        pytest.param('Note: ! llm("fast")', [(1, 7, '! llm("fast")')], id="call-after-prose"),
        pytest.param(
            "Intro.\n    Then:! @each[items]->task.x@{{value.y=items}}*  ",
            [(2, 10, "! @each[items]->task.x@{{value.y=items}}*")],
            id="each-no-space-trailing-blanks",
        ),
        pytest.param(
            "Go! @->task.x@{{prompt.y=*}}", [(1, 3, "! @->task.x@{{prompt.y=*}}")], id="at"
        ),
        pytest.param("Fields: ! @sequential", [(1, 9, "! @sequential")], id="modifier"),
        pytest.param("Fields: !@parallel # note", [(1, 9, "!@parallel # note")], id="no-space"),
        pytest.param("Fields: ! together", [(1, 9, "! together")], id="together-alone"),
        pytest.param(
            "Vote: ! @resampled[rating]->mode",
            [(1, 7, "! @resampled[rating]->mode")],
            id="resampled",
        ),
        pytest.param("Only: ! @context[heading]", [(1, 7, "! @context[heading]")], id="context"),
        pytest.param("Again! resample(3)", [(1, 6, "! resample(3)")], id="resample"),
        pytest.param("Set: ! count=5", [(1, 6, "! count=5")], id="assignment"),
        pytest.param(
            "Set: ! a=1 and ! b=2",
            [(1, 6, "! a=1 and ! b=2"), (1, 16, "! b=2")],
            id="two-on-a-line",
        ),
    ],
)
def test_command_after_other_text_is_stray(text: str, stray: list[tuple[int, int, str]]) -> None:
    extraction = extract_commands(text, signatures=SIGNATURES)

    assert find_stray_commands(extraction, signatures=SIGNATURES) == tuple(
        StrayCommand(line=line, column=column, text=command) for line, column, command in stray
    )


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Great! Now summarise the text.", id="exclamation"),
        pytest.param("Stop!!! Read this first.", id="exclamations"),
        pytest.param("Check that a != b.", id="not-equal"),
        pytest.param("Work together! together we stand.", id="together-in-prose"),
        pytest.param("Mail us! @support or @eachother", id="at-words"),
        pytest.param("Thanks! @all of you, and @each of them.", id="at-command-words"),
        pytest.param("Done! @parallel work is fine.", id="modifier-word-in-prose"),
        pytest.param("Run them side by side! parallel", id="bare-modifier-name"),
        pytest.param("Hello! x = 5 is not spaced like a command.", id="spaced-equals"),
        pytest.param("Try it! llm is not a call here.", id="bare-call-name"),
        pytest.param("Mind the @context! @context of a word", id="context-word-in-prose"),
        pytest.param("! @parallel\n! llm(\n    'fast'\n)", id="command-lines-only"),
        pytest.param('! name="a ! @all->x@{{y}}"', id="inside-a-command-string"),
    ],
)
def test_prose_and_command_lines_are_not_stray(text: str) -> None:
    assert (
        find_stray_commands(extract_commands(text, signatures=SIGNATURES), signatures=SIGNATURES)
        == ()
    )
