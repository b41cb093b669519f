"""Find the commands in a docstring or field description, and the text around them.

A command is a line whose first non-blank character is ``!``; it continues over the
following lines while a ``[``, ``{{`` or ``(`` it opened is still open. What is left once
the commands are removed is the prompt text: dedented as `inspect.cleandoc()` does,
with the blank-line structure the author wrote.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from langtree.dsl._commands import Command
from langtree.dsl._parser import parse_command, require_text
from langtree.dsl._signatures import Signatures
from langtree.dsl._tokenizer import split_lines

__all__ = [
    "ExtractedCommand",
    "Extraction",
    "StrayCommand",
    "extract_commands",
    "find_stray_commands",
]

_BRACKETS = re.compile(
    r"""\{\{|\}\}|[\[\]()]|#[^\r\n]*|"(?:[^"\\\r\n]|\\[^\r\n])*"?|'(?:[^'\\\r\n]|\\[^\r\n])*'?"""
)
_OPENERS = frozenset({"{{", "[", "("})
_CLOSERS = frozenset({"}}", "]", ")"})
# A call looks like a command when its name is a call-style command's: any name is
# matched here, and `find_stray_commands()` keeps the calls its signatures name.
_STRAY_COMMAND = re.compile(
    r"""![ \t]*+(?:
        @(?:each|all)(?:\[|->)        # @each[...]->..., @all->...
        | @->                         # '@' short for '@all'
        | @resampled\[                # @resampled[field]->mode
        | @context\[                  # @context[path, ...]
        | (?P<call>[A-Za-z_][A-Za-z0-9_]*+)\(  # llm(...), resample(...)
        | [A-Za-z_][A-Za-z0-9_]*+=\S  # name=value
        | (?:@sequential|@parallel|@together|together)[ \t]*+(?:\#|$)  # a modifier, alone
    )""",
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtractedCommand:
    """A command found in a text, with where it stands.

    Attributes:
        command: The parsed command.
        text: The command's lines as written (spans in ``command`` refer to them, with
            line 1 being ``line``).
        line: 1-based line of the ``!`` in the text.
        end_line: 1-based line where the command ends.
    """

    command: Command
    text: str
    line: int
    end_line: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Extraction:
    """The commands of a text and the prompt text left once they are removed.

    Attributes:
        commands: The commands, in order.
        text: The prompt text: command lines removed, dedented.
        line_map: For each line of ``text``, the 1-based line it comes from.
        source_lines: The original text's lines.
    """

    commands: tuple[ExtractedCommand, ...]
    text: str
    line_map: tuple[int, ...] = ()
    source_lines: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class StrayCommand:
    """Prompt text that looks like a command but follows other text on its line.

    Attributes:
        line: 1-based line of the text.
        column: 1-based column of the ``!`` in that line as written.
        text: From the ``!`` to the end of the line, trailing blanks removed.
    """

    line: int
    column: int
    text: str


def extract_commands(text: str | None, *, signatures: Signatures) -> Extraction:
    """Split a docstring or field description into commands and prompt text.

    Args:
        text: The docstring or description (``None`` counts as empty).
        signatures: The call-style commands to accept, by name.

    Returns:
        The commands in order, each with its line numbers (line 1 is the text's first
        line), and the text with command lines removed.

    Raises:
        CommandParseError: A command is invalid; its line counts from the text's start.
        CommandTextTypeError: ``text`` is neither a ``str`` nor ``None`` (a ``TypeError``).

    Examples:
        >>> extraction = extract_commands('''Summarise the report.
        ...     ! @sequential
        ...     Keep it short.''', signatures={})
        >>> extraction.text
        'Summarise the report.\\nKeep it short.'
        >>> extraction.commands[0].command
        NodeModifierCommand(modifier='sequential', comment=None)
    """
    if text is not None:
        require_text(
            text,
            function="extract_commands",
            what="a docstring or description as a str (or None)",
            example="extract_commands(cls.__doc__)",
        )
    lines = split_lines(text) if text else []
    dedented = _dedent(lines)
    commands: list[ExtractedCommand] = []
    kept: list[tuple[int, str] | None] = []
    index = 0
    while index < len(lines):
        if not dedented[index].startswith("!"):
            kept.append((index + 1, dedented[index]))
            index += 1
            continue
        end = _command_end(lines, index)
        commands.append(_parse_at(lines, index, end, signatures))
        kept.append(None)
        index = end + 1
    numbered = _join_kept(kept)
    return Extraction(
        commands=tuple(commands),
        text="\n".join(line for _, line in numbered),
        line_map=tuple(number for number, _ in numbered),
        source_lines=tuple(lines),
    )


def find_stray_commands(
    extraction: Extraction, *, signatures: Signatures
) -> tuple[StrayCommand, ...]:
    """The prompt lines where something that looks like a command follows other text.

    Only a line whose first non-blank character is ``!`` is a command; a ``!`` later on a
    line is prompt text. It looks like a command when, after optional blanks, a command's
    start follows it: ``@each[`` or ``@each->``, ``@all[`` or ``@all->``, ``@->``,
    ``@resampled[``, ``@context[``, a call of one of ``signatures`` (``llm(``,
    ``resample(``), ``name=`` and a value, or a node modifier (``@sequential``,
    ``@parallel``, ``@together``, ``together``) that ends the line. Prose with an
    exclamation mark does not: ``Great! Now summarise.``, ``Thanks! @all of you``.

    Examples:
        >>> text = 'Summarise the text. ! @all->task.x@{{value.y=z}}'
        >>> find_stray_commands(extract_commands(text, signatures={}), signatures={})
        (StrayCommand(line=1, column=21, text='! @all->task.x@{{value.y=z}}'),)
    """
    stray: list[StrayCommand] = []
    for number in extraction.line_map:
        line = extraction.source_lines[number - 1]
        stray.extend(
            StrayCommand(line=number, column=match.start() + 1, text=line[match.start() :].rstrip())
            for match in _STRAY_COMMAND.finditer(line)
            if match["call"] is None or match["call"] in signatures
        )
    return tuple(stray)


def _dedent(lines: list[str]) -> list[str]:
    """Dedent like `inspect.cleandoc()`: the first line alone, the rest together."""
    if not lines:
        return []
    rest = textwrap.dedent("\n".join(lines[1:])).split("\n") if len(lines) > 1 else []
    return [lines[0].strip()] + [line.rstrip() for line in rest]


def _command_end(lines: list[str], start: int) -> int:
    """The index of the line where the command starting at ``start`` ends."""
    depth = 0
    for index in range(start, len(lines)):
        depth += _bracket_balance(lines[index])
        if depth <= 0:
            return index
    return len(lines) - 1


def _bracket_balance(line: str) -> int:
    """Brackets opened minus closed on a line, ignoring strings and comments."""
    balance = 0
    for match in _BRACKETS.finditer(line):
        token = match.group()
        balance += (token in _OPENERS) - (token in _CLOSERS)
    return balance


def _parse_at(lines: list[str], start: int, end: int, signatures: Signatures) -> ExtractedCommand:
    source = "\n".join(lines[start : end + 1])
    command = parse_command(source, signatures=signatures, first_line=start + 1)
    return ExtractedCommand(command=command, text=source, line=start + 1, end_line=end + 1)


def _join_kept(kept: list[tuple[int, str] | None]) -> list[tuple[int, str]]:
    """The lines left, with blank runs that a removed command stood in collapsed and
    blank lines at both ends dropped."""
    out: list[tuple[int, str]] = []
    removed_since_text = False
    for entry in kept:
        if entry is None:
            removed_since_text = True
            continue
        if entry[1].strip():
            removed_since_text = False
        elif removed_since_text and out and not out[-1][1].strip():
            continue
        out.append(entry)
    first = next((index for index, (_, line) in enumerate(out) if line.strip()), len(out))
    while len(out) > first and not out[-1][1].strip():
        out.pop()
    return out[first:]
