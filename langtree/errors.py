"""The exceptions LangTree raises, and how they render.

Every error LangTree raises on purpose is a `LangTreeError`, and also the builtin
exception it refines, so that ``except ValueError`` still catches a parse error. The one
exception outside the tree is `RunInterrupted`: it is what Ctrl-C raises during a
synchronous run, so it is a ``KeyboardInterrupt``, never caught by ``except Exception``.

```text
LangTreeError
 ├── CommandParseError (also ValueError)     a DSL command that cannot be parsed
 ├── CommandTextTypeError (also TypeError)   DSL text that is not a str
 ├── StructureError (also ValueError)        every problem in a tree of classes
 ├── ShapeError (also TypeError)             a field type the tree cannot hold
 ├── ConversionError (also ValueError)       a value a field's type cannot take
 ├── UnknownPathError (also KeyError)        a path no write of a run recorded
 ├── OutputError (also OSError)              the command line's output refused a write
 └── ExecutionError (also RuntimeError)      a run that failed
      ├── MissingVariablesError              external variables nobody gave a value
      ├── StepFailedError                    a step instance got no usable output
      ├── RunLimitError                      a deadline or usage limit reached
      └── JournalWriteError                  a journal that cannot record an answer
KeyboardInterrupt
 └── RunInterrupted                          Ctrl-C stopped a synchronous run
```

`ShapeError` becomes a diagnostic of the `StructureError` that `validate()` raises, and
`ConversionError` the message of an `ExecutionError`, where users meet them;
`UnknownPathError` comes from `RunResult.provenance()`, `OutputError` from the
``langtree`` command (``langtree.cli._output``). Every `ExecutionError` raised
once a run has started, and `RunInterrupted`, carry what the run had finished
(``.result``).

Messages follow one format: what is wrong (names quoted with ``repr``), the source line
with a ``^~~~`` marker under the offending span, where it is, and a ``hint:`` naming the fix.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from langtree._display import fenced

__all__ = [
    "CommandParseError",
    "CommandTextTypeError",
    "ConversionError",
    "Diagnostic",
    "ExecutionError",
    "LangTreeError",
    "MissingVariablesError",
    "StructureError",
    "rebuilt_error",
    "render_marker",
]

_Error = TypeVar("_Error", bound=BaseException)


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
        return (rebuilt_error, (CommandParseError, self.args, self.__dict__))

    def with_location(self, location: str) -> CommandParseError:
        """Return a copy that names where the text came from.

        Args:
            location: The origin, e.g. ``"TaskReport.sections (report.py:12)"``.
        """
        # A copy goes through `__reduce__`, which keeps every attribute as it is.
        located = copy.copy(self)
        located.location = location
        return located


def rebuilt_error(cls: type[_Error], args: tuple[object, ...], state: dict[str, object]) -> _Error:
    """An error of ``cls`` with ``args`` and the attributes in ``state``, made without its
    ``__init__``: what the ``__reduce__`` of an error whose ``__init__`` takes keywords
    names, as pickle would otherwise call ``cls(*args)`` with the message alone."""
    error = cls.__new__(cls)
    BaseException.__init__(error, *args)
    error.__dict__.update(state)
    return error


class CommandTextTypeError(LangTreeError, TypeError):
    """DSL text that is not a ``str``: ``parse_command(None)``, ``extract_commands(5)``.

    Attributes:
        message: Which function got what.
        hint: How to fix it.
    """

    def __init__(self, message: str, hint: str) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message, hint)

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnostic:
    """One problem (or warning) found in a user's classes, with where it stands.

    Attributes:
        severity: ``"error"`` or ``"warning"``.
        message: What is wrong, names quoted.
        hint: How to fix it.
        class_name: The class that holds the text (``None`` when unknown).
        field_name: The field whose description holds it (``None`` for the docstring).
        file: The Python file, when the class has one.
        line: The line in ``file`` (or, without a file, in the text) of the span.
        column: 1-based column of the span in ``source_line``.
        source_line: The line that holds the span (empty when there is none).
        length: Number of characters the span covers.
    """

    severity: Literal["error", "warning"]
    message: str
    hint: str
    class_name: str | None = None
    field_name: str | None = None
    file: str | None = None
    line: int | None = None
    column: int = 1
    source_line: str = ""
    length: int = 1

    @property
    def sort_key(self) -> tuple[str, int, int, str]:
        """Orders diagnostics by file, line and column, then message."""
        return (self.file or "", self.line or 0, self.column, self.message)

    @property
    def where(self) -> str:
        """``Class.field`` (or ``Class``), then ``file:line`` when known."""
        owner = ".".join(name for name in (self.class_name, self.field_name) if name)
        place = f"{self.file}:{self.line}" if self.file and self.line else ""
        return " ".join(
            part for part in (owner, f"({place})" if place and owner else place) if part
        )

    def render(self) -> str:
        """The message, the marked source line, the location and the hint."""
        parts = [f"{self.severity}: {self.message}"]
        if self.source_line:
            parts.append(render_marker(self.source_line, self.column, self.length))
        if self.where:
            parts.append(f"  in {self.where}")
        parts.append(f"  hint: {self.hint}")
        return "\n".join(parts)

    def render_compiler(self) -> str:
        """Compiler style: ``file:line:column: severity: message``, marker, hint."""
        prefix = f"{self.file or '<unknown>'}:{self.line or 0}:{self.column}"
        owner = ".".join(name for name in (self.class_name, self.field_name) if name)
        head = f"{prefix}: {self.severity}: {self.message}" + (f" [{owner}]" if owner else "")
        marker = (
            render_marker(self.source_line, self.column, self.length) + "\n"
            if self.source_line
            else ""
        )
        return f"{head}\n{marker}    hint: {self.hint}"


class StructureError(LangTreeError, ValueError):
    """Every problem found while checking a tree of ``TreeNode`` classes.

    Attributes:
        diagnostics: Each problem, sorted by location (file, line, column).
    """

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        count = len(self.diagnostics)
        super().__init__(f"LangTree found {count} problem{'s' if count != 1 else ''}")

    def __str__(self) -> str:
        details = "\n\n".join(diagnostic.render() for diagnostic in self.diagnostics)
        return f"{self.args[0]}:\n\n{details}"

    def _repr_markdown_(self) -> str:
        """The notebook display: the count, then each problem in a code block (its
        marker must stay under the span, so it cannot be read as Markdown)."""
        blocks = (fenced(diagnostic.render(), "text") for diagnostic in self.diagnostics)
        return "\n\n".join([f"**{self.args[0]}**", *blocks])

    def __reduce__(self) -> tuple[object, ...]:
        return (StructureError, (self.diagnostics,))


class ConversionError(LangTreeError, ValueError):
    """A value that cannot be converted to the type of the field it is mapped into."""


class ExecutionError(LangTreeError, RuntimeError):
    """A run that failed.

    Attributes:
        result: What the run had finished when the error stopped it, so that no answer
            paid for is lost: a `RunResult` (``langtree.runtime``; typed ``object`` here,
            as this module comes before the runtime) with the values as plain data, the
            trace, the provenance and the usage. Every error raised once the run has
            started carries it (a transform or a mapping that fails, values that do not
            validate after the run, a failed step, a limit reached); ``None`` for an error
            raised before the run starts (settings, inputs, the checks before the first
            call) or outside a run.
    """

    result: object | None = None


class MissingVariablesError(ExecutionError):
    """The root tasks' texts use external variables that nothing gives a value, found
    before any call (by `RunStructure.prompts()` and the runs).

    Attributes:
        names: The missing variables, sorted.
        tasks: The tags of the root tasks whose texts use them, sorted.
        problem: The message without its hint.
    """

    def __init__(self, names: Sequence[str], tasks: Sequence[str]) -> None:
        self.names = tuple(names)
        self.tasks = tuple(tasks)
        self.problem = (
            f"Missing external variable(s) {', '.join(repr(name) for name in self.names)}: "
            f"the texts of {', '.join(repr(tag) for tag in self.tasks)} use them and nothing "
            "supplies them"
        )
        example = ", ".join(f"{name!r}: ..." for name in self.names)
        super().__init__(
            f"{self.problem}\n  hint: pass variables={{{example}}} to prompts() or run()"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (MissingVariablesError, (self.names, self.tasks))


def problems_error(problems: list[str], *, what: str, hint: str) -> ExecutionError:
    """One ``ExecutionError`` for every problem of a call's arguments: the problem
    itself when there is one, else how many ``what`` are wrong and each on its own line.

    Examples:
        >>> str(problems_error(["a is wrong", "b is wrong"], what="settings", hint="fix them"))
        '2 settings are wrong:\\n  - a is wrong\\n  - b is wrong\\n  hint: fix them'
    """
    if len(problems) == 1:
        return ExecutionError(f"{problems[0]}\n  hint: {hint}")
    listed = "".join(f"\n  - {problem}" for problem in problems)
    return ExecutionError(f"{len(problems)} {what} are wrong:{listed}\n  hint: {hint}")
