"""Finding commands in docstrings and descriptions, and the prompt text left around them."""

import pytest

from langtree import CommandParseError
from langtree.dsl import EachCommand, NodeModifierCommand, VariableMapping
from langtree.dsl.extraction import extract_commands

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
    extraction = extract_commands(DOCSTRING)

    assert [(c.line, c.end_line) for c in extraction.commands] == [(4, 4), (5, 7), (11, 11)]
    assert extraction.commands[1].text == (
        "    ! @each[sections]->task.digest@{{\n"
        "        value.summaries=sections.summary,  # one per section\n"
        "    }}*"
    )
    assert extraction.commands[1].command == EachCommand(
        inclusion_path="sections",
        destination_path="task.digest",
        mappings=(VariableMapping(target_path="value.summaries", source_path="sections.summary"),),
    )


def test_text_is_dedented_with_command_lines_removed() -> None:
    extraction = extract_commands(DOCSTRING)

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
    assert extract_commands(text).text == clean


def test_brackets_inside_strings_and_comments_do_not_continue_a_command() -> None:
    extraction = extract_commands('! name="[("  # {{ open?\nText after.')

    assert len(extraction.commands) == 1
    assert extraction.text == "Text after."


def test_error_line_counts_from_the_start_of_the_text() -> None:
    text = "Intro.\n\n    ! @each[items]->task@{{\n        value.a=items . a\n    }}*"

    with pytest.raises(CommandParseError) as caught:
        extract_commands(text)

    assert (caught.value.line, caught.value.column) == (4, 17)
    assert caught.value.source_line == "        value.a=items . a"


def test_unclosed_command_swallowing_prose_names_the_opening() -> None:
    with pytest.raises(CommandParseError) as caught:
        extract_commands("Text.\n! @each[items]->task@{{value.a=items\nmore text")

    assert caught.value.message == (
        "Expected '}}' to close '{{' opened at line 2, column 22, got 'more'"
    )
    assert (caught.value.line, caught.value.column) == (3, 1)


def test_commands_keep_their_order() -> None:
    extraction = extract_commands("! @parallel\n! @sequential")

    assert [c.command for c in extraction.commands] == [
        NodeModifierCommand(modifier="parallel"),
        NodeModifierCommand(modifier="sequential"),
    ]
