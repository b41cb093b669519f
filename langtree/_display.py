"""Markdown pieces for the notebook displays (``_repr_markdown_``) of LangTree's results.

``RunResult``, ``StepPrompt``, ``ExecutionPlan`` and ``StructureError`` show as Markdown
in Jupyter. They offer Markdown only, no ``_repr_html_``: JupyterLab and Notebook 7 rank
HTML above Markdown, so an HTML display would hide the Markdown one, and with it the
plan's ```` ```mermaid ```` diagram, which they draw from Markdown since version 4.1. A
frontend that does not draw Mermaid shows the diagram's text, and the plan's table says
the same. Values and prompt texts go into fenced code blocks, so that nothing in them is
read as Markdown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["clipped", "code", "counted", "fenced", "table"]

_BACKTICKS = re.compile(r"`+")


def fenced(text: str, language: str = "") -> str:
    """A fenced code block holding ``text`` as it is.

    The fence is longer than any run of backticks in ``text``, so a fence inside (a JSON
    example in a docstring) does not end the block.

    Examples:
        >>> print(fenced('{"a": 1}', "json"))
        ```json
        {"a": 1}
        ```
    """
    fence = "`" * max(3, _longest_backticks(text) + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def code(text: str) -> str:
    """An inline code span holding ``text`` (which may hold backticks itself).

    Examples:
        >>> code("task.report")
        '`task.report`'
        >>> code("a`b")
        '``a`b``'
    """
    ticks = "`" * (_longest_backticks(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table; ``|`` in a cell is escaped and line breaks become spaces.

    Examples:
        >>> print(table(["step", "waits for"], [["`a|b`", "—"]]))
        | step | waits for |
        | --- | --- |
        | `a\\|b` | — |
    """
    lines = [_row(header), _row(["---"] * len(header))]
    lines.extend(_row(row) for row in rows)
    return "\n".join(lines)


def clipped(text: str, max_lines: int, hint: str) -> str:
    """``text`` cut after ``max_lines`` lines, with a last line that tells how many lines
    were left out and where to see them all (``hint``).

    Examples:
        >>> clipped("1\\n2\\n3", 2, "print it")
        '1\\n2\\n… 1 more line (print it)'
    """
    lines = text.split("\n")
    if len(lines) <= max_lines:
        return text
    left = len(lines) - max_lines
    more = f"… {left} more line{'s' if left != 1 else ''} ({hint})"
    return "\n".join([*lines[:max_lines], more])


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """``number`` and ``noun``, the noun in the plural (``plural``, else with an ``s``)
    unless the number is 1.

    Examples:
        >>> counted(1, "call"), counted(1200, "call"), counted(2, "retry", "retries")
        ('1 call', '1,200 calls', '2 retries')
    """
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"


def _row(cells: Sequence[str]) -> str:
    escaped = (cell.replace("|", "\\|").replace("\n", " ") for cell in cells)
    return "| " + " | ".join(escaped) + " |"


def _longest_backticks(text: str) -> int:
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)
