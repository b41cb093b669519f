"""The exceptions LangTree raises, and how they render.

Every error LangTree raises on purpose is a :class:`LangTreeError`::

    LangTreeError
     ├── CommandParseError (also ValueError)   a DSL command that cannot be parsed
     ├── StructureError (also ValueError)      every problem found in a tree of classes
     └── ExecutionError (also RuntimeError)    a run that failed

Messages follow one format: what is wrong (names quoted with ``repr``), the source line
with a ``^~~~`` marker under the offending span, where it is, and a ``hint:`` naming the fix.
"""

from __future__ import annotations

__all__ = [
    "CommandParseError",
    "ExecutionError",
    "LangTreeError",
    "StructureError",
    "render_marker",
]


class LangTreeError(Exception):
    """Base class of every error LangTree raises on purpose."""


def render_marker(source_line: str, column: int, length: int = 1) -> str:
    """Render a source line with a marker under a span.

    Args:
        source_line: The physical line the span lies on.
        column: 1-based column where the span starts.
        length: Number of characters the span covers (at least one is marked).

    Returns:
        Two lines: the source line, then ``^~~`` under the span, both indented by four.
    """
    width = max(1, min(length, len(source_line) - column + 1))
    marker = " " * (column - 1) + "^" + "~" * (width - 1)
    return f"    {source_line}\n    {marker}"


class CommandParseError(LangTreeError, ValueError):
    """A DSL command that cannot be parsed.

    Attributes:
        message: What is wrong; starts with the specification's wording where it has one.
        line: 1-based line of the offending span in the text given to the parser.
        column: 1-based column of the offending span.
        length: Number of characters the span covers.
        source_line: The physical line that holds the span.
        hint: How to fix it.
        location: Where the text came from (class, field, file:line), when known.
    """

    def __init__(
        self,
        message: str,
        *,
        line: int,
        column: int,
        source_line: str,
        hint: str,
        length: int = 1,
        location: str | None = None,
    ) -> None:
        self.message = message
        self.line = line
        self.column = column
        self.length = length
        self.source_line = source_line
        self.hint = hint
        self.location = location
        super().__init__(message)

    def __str__(self) -> str:
        where = f"line {self.line}, column {self.column}"
        if self.location:
            where = f"{self.location}, {where}"
        marker = render_marker(self.source_line, self.column, self.length)
        return f"{self.message}\n{marker}\n  at {where}\n  hint: {self.hint}"

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_parse_error, (self.message, self.__dict__))

    def with_location(self, location: str, *, line_offset: int = 0) -> CommandParseError:
        """Return a copy that names where the text came from.

        Args:
            location: The origin, e.g. ``"TaskReport.sections (report.py:12)"``.
            line_offset: Added to :attr:`line`, for text that starts inside a larger one.
        """
        return CommandParseError(
            self.message,
            line=self.line + line_offset,
            column=self.column,
            source_line=self.source_line,
            hint=self.hint,
            length=self.length,
            location=location,
        )


def _rebuild_parse_error(message: str, state: dict[str, object]) -> CommandParseError:
    error = CommandParseError.__new__(CommandParseError)
    error.__dict__.update(state)
    Exception.__init__(error, message)
    return error


class StructureError(LangTreeError, ValueError):
    """Every problem found while checking a tree of ``TreeNode`` classes."""


class ExecutionError(LangTreeError, RuntimeError):
    """A run that failed."""
