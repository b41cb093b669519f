"""Heading levels in assembled Markdown: shifting, the level-6 ceiling, fenced code."""

import pytest

from langtree.prompts._markdown import heading, heading_level_before, join_blocks, shift_headings


@pytest.mark.parametrize(
    ("text", "base", "expected"),
    [
        pytest.param("# Aim\nText.", 1, "## Aim\nText.", id="top-level-moves-under-base"),
        pytest.param("# A\n## B\n### C", 2, "### A\n#### B\n##### C", id="keeps-distances"),
        pytest.param("### Deep\n#### Deeper", 0, "# Deep\n## Deeper", id="moves-up-to-base"),
        pytest.param("## A\n# B", 1, "### A\n## B", id="top-is-the-smallest-level"),
        pytest.param("# A\n### C", 1, "## A\n#### C", id="skipped-level-kept-as-written"),
        pytest.param("Plain text.\nNo headings.", 3, "Plain text.\nNo headings.", id="no-heading"),
        pytest.param("#hashtag\n# A", 1, "#hashtag\n## A", id="hash-without-space-is-text"),
        pytest.param("  # indented\n# A", 1, "  # indented\n## A", id="indented-is-not-heading"),
        pytest.param("#\n# A", 1, "##\n## A", id="empty-heading"),
    ],
)
def test_shift_headings(text: str, base: int, expected: str) -> None:
    assert shift_headings(text, base) == expected


@pytest.mark.parametrize(
    ("text", "base", "expected"),
    [
        pytest.param("# A\n## B", 5, "###### A\n###### B", id="clamped-at-six"),
        pytest.param("# A\n###### F", 2, "### A\n###### F", id="six-stays-six"),
        pytest.param("# A", 9, "###### A", id="base-beyond-six"),
    ],
)
def test_shift_headings_never_goes_past_level_six(text: str, base: int, expected: str) -> None:
    assert shift_headings(text, base) == expected


def test_fenced_code_is_never_shifted() -> None:
    text = "# Usage\n\n```python\n# a comment\n## another\n```\n\n## After"

    shifted = shift_headings(text, 2)

    assert shifted == "### Usage\n\n```python\n# a comment\n## another\n```\n\n#### After"


def test_tilde_fence_and_longer_fences_close_only_on_their_own_kind() -> None:
    text = "~~~~\n# inside\n```\n# still inside\n~~~~\n# outside"

    assert shift_headings(text, 1) == "~~~~\n# inside\n```\n# still inside\n~~~~\n## outside"


def test_headings_in_code_do_not_count_for_the_top_level() -> None:
    text = "```\n# comment\n```\n### Real"

    assert shift_headings(text, 1) == "```\n# comment\n```\n## Real"


def test_unclosed_fence_runs_to_the_end() -> None:
    text = "# Before\n```\n# inside"

    assert shift_headings(text, 1) == "## Before\n```\n# inside"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("# A\ntext\n## B\nmore\n{X}", 2, id="last-heading"),
        pytest.param("text only\n{X}", 7, id="default-without-heading"),
        pytest.param("## B\n```\n# code\n```\n{X}", 2, id="code-is-not-a-heading"),
        pytest.param("# A\n{X}\n### C", 1, id="only-headings-before-position"),
    ],
)
def test_heading_level_before(text: str, expected: int) -> None:
    assert heading_level_before(text, text.index("{X}"), 7) == expected


@pytest.mark.parametrize(
    ("level", "expected"),
    [(0, "# T"), (1, "# T"), (3, "### T"), (6, "###### T"), (8, "###### T")],
)
def test_heading_clamps_its_level(level: int, expected: str) -> None:
    assert heading(level, "T") == expected


def test_join_blocks_drops_empty_blocks_and_separates_with_one_blank_line() -> None:
    assert join_blocks("\nA\n", "", "  ", "B\n\n") == "A\n\nB"
