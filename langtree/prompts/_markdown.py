"""Markdown helpers for assembly: heading levels, shifting, and template-variable slots.

Lines inside fenced code blocks (```` ``` ```` or ``~~~``) are never headings: a ``#`` comment
in a code example stays as written.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

__all__ = [
    "heading",
    "heading_level_before",
    "join_blocks",
    "shift_headings",
]

_HEADING = re.compile(r"^(#{1,6})(?=\s|$)")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")


def heading(level: int, title: str) -> str:
    """A Markdown heading, ``level`` clamped to 1–6.

    Examples:
        >>> heading(2, "Main Analysis")
        '## Main Analysis'
    """
    return "#" * max(1, min(level, 6)) + " " + title


def _prose_lines(lines: list[str]) -> Iterator[tuple[int, str]]:
    """The lines outside fenced code blocks, with their indices.

    A block closes at a fence of the same character at least as long as the one that
    opened it, with nothing after it (CommonMark); an unclosed block runs to the end.
    """
    fence = ""
    for index, line in enumerate(lines):
        match = _FENCE.match(line)
        if fence:
            if match and match.group(1).startswith(fence) and not line[match.end() :].strip():
                fence = ""
        elif match:
            fence = match.group(1)
        else:
            yield index, line


def _levels(text: str) -> list[int]:
    lines = text.split("\n")
    return [
        len(match.group(1)) for _, line in _prose_lines(lines) if (match := _HEADING.match(line))
    ]


@functools.lru_cache(maxsize=4096)
def shift_headings(text: str, base: int) -> str:
    """Shift the headings of ``text`` so that its top level becomes ``base + 1``.

    Levels below the top keep their distance to it; nothing goes past level 6. Cached:
    every instance of a step shifts the same docstrings and descriptions.

    Examples:
        >>> shift_headings("# Aim\\nText.\\n## Detail", 2)
        '### Aim\\nText.\\n#### Detail'
    """
    levels = _levels(text)
    if not levels:
        return text
    offset = base + 1 - min(levels)
    lines = text.split("\n")
    for index, line in list(_prose_lines(lines)):
        match = _HEADING.match(line)
        if match:
            level = max(1, min(len(match.group(1)) + offset, 6))
            lines[index] = "#" * level + line[match.end() :]
    return "\n".join(lines)


def heading_level_before(text: str, position: int, default: int) -> int:
    """The level of the last heading before character ``position`` (``default`` if none)."""
    levels = _levels(text[:position])
    return levels[-1] if levels else default


def join_blocks(*blocks: str) -> str:
    """Join non-empty blocks with one blank line between them."""
    return "\n\n".join(block.strip("\n") for block in blocks if block.strip())
