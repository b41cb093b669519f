"""Markdown pieces of the notebook displays, and ``StructureError``'s display."""

from dataclasses import replace

import pytest
from report_diagnostic import REPORT_DIAGNOSTIC

from langtree import StructureError
from langtree._display import clipped, code, fenced, table
from langtree.errors import Diagnostic


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", "```\nplain\n```"),
        ('a ```{"json": 1}``` example', '````\na ```{"json": 1}``` example\n````'),
        ("`````", "``````\n`````\n``````"),
    ],
    ids=["no backticks", "a fence inside", "five backticks"],
)
def test_a_fence_is_longer_than_any_backticks_inside(text: str, expected: str) -> None:
    assert fenced(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("tag", "`tag`"), ("a``b", "```a``b```"), ("`x", "`` `x ``")],
    ids=["plain", "backticks inside", "backtick at the edge"],
)
def test_inline_code_holds_any_text(text: str, expected: str) -> None:
    assert code(text) == expected


def test_a_table_cell_keeps_pipes_and_loses_line_breaks() -> None:
    assert table(["a", "b"], [["x|y", "one\ntwo"]]) == (
        "| a | b |\n| --- | --- |\n| x\\|y | one two |"
    )


@pytest.mark.parametrize(
    ("max_lines", "expected"),
    [(3, "1\n2\n3"), (1, "1\n… 2 more lines (see all)")],
    ids=["fits", "clipped"],
)
def test_clipped_says_how_many_lines_it_left_out(max_lines: int, expected: str) -> None:
    assert clipped("1\n2\n3", max_lines, "see all") == expected


PROBLEMS = StructureError(
    [
        # The same place as the pinned diagnostic, another problem.
        replace(
            REPORT_DIAGNOSTIC,
            message="Path 'task.digest' does not resolve",
            hint="add the class 'TaskDigest'",
            source_line="! @all->task.digest@{{value.x=y}}",
            length=11,
        ),
        Diagnostic(severity="error", message="Name '__x' holds '__'", hint="rename it"),
    ]
)


def test_a_structure_error_shows_each_problem_in_a_code_block() -> None:
    assert PROBLEMS._repr_markdown_() == (
        "**LangTree found 2 problems**\n"
        "\n"
        "```text\n"
        "error: Path 'task.digest' does not resolve\n"
        "    ! @all->task.digest@{{value.x=y}}\n"
        "            ^~~~~~~~~~~\n"
        "  in TaskReport.sections (report.py:12)\n"
        "  hint: add the class 'TaskDigest'\n"
        "```\n"
        "\n"
        "```text\n"
        "error: Name '__x' holds '__'\n"
        "  hint: rename it\n"
        "```"
    )


def test_a_structure_error_repr_is_one_line() -> None:
    assert repr(PROBLEMS) == "StructureError('LangTree found 2 problems')"
