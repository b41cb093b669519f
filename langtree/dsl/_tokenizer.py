"""An on-demand tokenizer for one DSL command.

The parser asks for the token it expects next (``check``/``consume``/``expect``), so the
same characters can mean different things in different places, and every error knows the
exact position it refers to. Positions are offsets into the command text; errors turn them
into 1-based line and column.
"""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple, NoReturn

from langtree.dsl._commands import Span
from langtree.errors import CommandParseError

__all__ = ["LINE_BREAK", "RULES", "Token", "Tokenizer", "split_lines"]

LINE_BREAK = re.compile(r"\r\n|\n|\r")
"""What ends a line in DSL text (other Unicode line separators are ordinary characters)."""

RULES: dict[str, re.Pattern[str]] = {
    "BANG": re.compile(r"!"),
    "AT": re.compile(r"@"),
    "ARROW": re.compile(r"->"),
    "LBRACES": re.compile(r"\{\{"),
    "RBRACES": re.compile(r"\}\}"),
    "LBRACKET": re.compile(r"\["),
    "RBRACKET": re.compile(r"\]"),
    "LPAREN": re.compile(r"\("),
    "RPAREN": re.compile(r"\)"),
    "DOT": re.compile(r"\."),
    "COMMA": re.compile(r","),
    "EQUALS": re.compile(r"="),
    "STAR": re.compile(r"\*"),
    "STARS": re.compile(r"\*+"),
    "COMMENT": re.compile(r"#[^\r\n]*"),
    "STRING": re.compile(r""""(?:[^"\\\r\n]|\\[^\r\n])*"|'(?:[^'\\\r\n]|\\[^\r\n])*'"""),
    "NUMBER": re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?(?![A-Za-z0-9_.])"),
    "IDENT": re.compile(r"[A-Za-z_][A-Za-z0-9_]*"),
    "PATH": re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"),
    "SPACE": re.compile(r"[ \t]+"),
    "NEWLINE": re.compile(r"\r\n|\n|\r"),
}

_MATCHERS = {name: pattern.match for name, pattern in RULES.items()}
_LITERALS = {
    "BANG": "!",
    "AT": "@",
    "ARROW": "->",
    "LBRACES": "{{",
    "RBRACES": "}}",
    "LBRACKET": "[",
    "RBRACKET": "]",
    "LPAREN": "(",
    "RPAREN": ")",
    "DOT": ".",
    "COMMA": ",",
    "EQUALS": "=",
    "STAR": "*",
}
_SPACE = RULES["SPACE"].match
_BLANK = " \t"
_CLOSERS = {"RBRACKET": ("[", "]"), "RBRACES": ("{{", "}}"), "RPAREN": ("(", ")")}
_LEADING = re.compile(r"\s*")
_REST_BLANK = re.compile(r"\s*+\Z")
_LAYOUT = re.compile(r"(?:[ \t\r\n]+|#[^\r\n]*)*")
_WORD = re.compile(r"[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*|->|\{\{|\}\}|\S")


class Token(NamedTuple):
    """A piece of the command text: its rule name, its text and where it starts."""

    name: str
    text: str
    start: int

    @property
    def end(self) -> int:
        """Offset just past the token."""
        return self.start + len(self.text)


class Tokenizer:
    """Reads tokens from one command's text on request.

    Args:
        source: The whole command text (one line, or several for a multiline command).
        first_line: The line number of the text's first line.
    """

    def __init__(self, source: str, *, first_line: int = 1) -> None:
        self.source = source
        self.position = 0
        self._first_line = first_line
        self._line_starts = [0] + [match.end() for match in LINE_BREAK.finditer(source)]
        self._checked: tuple[str, int, re.Match[str] | None] = ("", -1, None)

    def check(self, name: str) -> bool:
        """Whether the next characters form a token of rule ``name``."""
        literal = _LITERALS.get(name)
        if literal is not None:
            return self.source.startswith(literal, self.position)
        match = _MATCHERS[name](self.source, self.position)
        self._checked = (name, self.position, match)
        return match is not None

    def consume(self, name: str) -> Token:
        """Read a token of rule ``name``; the caller has checked that it is there."""
        literal = _LITERALS.get(name)
        if literal is not None:
            assert self.source.startswith(literal, self.position), f"consume({name!r}) unchecked"
            start = self.position
            self.position += len(literal)
            return Token(name, literal, start)
        checked_name, checked_at, match = self._checked
        if checked_name != name or checked_at != self.position:
            match = _MATCHERS[name](self.source, self.position)
        assert match is not None, f"consume({name!r}) without a matching check"
        self.position = match.end()
        return Token(name, match.group(), match.start())

    def expect(self, name: str, message: str, *, hint: str) -> Token:
        """Read a token of rule ``name``, or fail with ``message`` at the next word."""
        if not self.check(name):
            self.fail_here(message, hint=hint)
        return self.consume(name)

    def at_end(self) -> bool:
        """Whether only whitespace is left (looking no further than the next non-blank)."""
        return _REST_BLANK.match(self.source, self.position) is not None

    def line_end(self, offset: int) -> int:
        """The offset where the line holding ``offset`` ends (before its line break)."""
        match = LINE_BREAK.search(self.source, offset)
        return len(self.source) if match is None else match.start()

    def at_space(self) -> bool:
        """Whether spaces or tabs come next."""
        return self.source[self.position : self.position + 1] in _BLANK and not self._at_eof()

    def _at_eof(self) -> bool:
        return self.position >= len(self.source)

    def space_then(self, name: str) -> bool:
        """Whether spaces or tabs come next, followed by a token of rule ``name``."""
        if not self.at_space():
            return False
        match = _SPACE(self.source, self.position)
        assert match is not None
        return _MATCHERS[name](self.source, match.end()) is not None

    def forbid_empty(self, closing: str, opening: Token, message: str, *, hint: str) -> None:
        """Skip the layout after ``opening``, then fail over both brackets when the one of
        rule ``closing`` comes next: nothing stands between them."""
        self.skip_layout()
        if self.check(closing):
            end = self.position + len(_LITERALS[closing])
            self.fail(message, hint=hint, start=opening.start, end=end)

    def forbid_space_after(self, token: Token, message: str, *, hint: str) -> None:
        """Fail over ``token`` and the first space after it when spaces or tabs follow it."""
        if self.at_space():
            self.fail_through(token, message, hint=hint)

    def forbid_space_before(self, *names: str, message: str, hint: str) -> None:
        """Fail at the first space when spaces or tabs come before a token of one of the
        rules ``names``."""
        if any(self.space_then(name) for name in names):
            self.fail(message, hint=hint, start=self.position, end=self.position + 1)

    def skip_space(self) -> None:
        """Skip spaces and tabs (not line breaks)."""
        if self.at_space():
            match = _SPACE(self.source, self.position)
            assert match is not None
            self.position = match.end()

    def skip_layout_before_bang(self) -> None:
        """Skip whitespace and line breaks before the command's ``!``."""
        self.position = _LEADING.match(self.source, self.position).end()  # type: ignore[union-attr]

    def skip_layout(self) -> None:
        """Skip spaces, line breaks and comments: the layout allowed inside brackets."""
        match = _LAYOUT.match(self.source, self.position)
        if match is not None:
            self.position = match.end()

    def expect_closing(self, name: str, opening: Token) -> Token:
        """Read the bracket that closes ``opening``, or fail naming where it was opened."""
        if self.check(name):
            return self.consume(name)
        opener, closer = _CLOSERS[name]
        line, column = self.line_and_column(opening.start)
        where = f"line {line}, column {column}"
        if self.at_end():
            self.fail(
                f"Unclosed {opener!r} opened at {where}",
                hint=f"add {closer!r} to close it",
                start=opening.start,
                end=opening.end,
            )
        self.fail_here(
            f"Expected {closer!r} to close {opener!r} opened at {where}",
            hint=f"separate items with ',' and close with {closer!r}",
        )

    def span(self, start: int, end: int) -> Span:
        """The `Span` of the characters ``start:end`` (cut at the end of the line)."""
        line, column = self.line_and_column(start)
        return Span(line=line, column=column, length=max(1, end - start))

    def offset_of(self, span: Span) -> int:
        """The offset where a `Span` starts."""
        return self._line_starts[span.line - self._first_line] + span.column - 1

    def next_word(self) -> Token:
        """The next non-blank word (for messages), without reading it."""
        match = _WORD.search(self.source, self.position)
        if match is None:
            return Token("END", "", len(self.source.rstrip()))
        return Token("WORD", match.group(), match.start())

    def fail_here(self, message: str, *, hint: str) -> NoReturn:
        """Fail at the next word, naming it (or the end of the command) in the message."""
        word = self.next_word()
        found = "the end of the command" if word.name == "END" else repr(word.text)
        self.fail(f"{message}, got {found}", hint=hint, start=word.start, end=word.end)

    def fail_through(self, token: Token, message: str, *, hint: str) -> NoReturn:
        """Fail from the start of ``token`` through the next character (the wrong one)."""
        self.fail(message, hint=hint, start=token.start, end=self.position + 1)

    def fail(self, message: str, *, hint: str, start: int, end: int | None = None) -> NoReturn:
        """Raise `CommandParseError` for the characters ``start:end``."""
        line, column = self.line_and_column(start)
        line_start = self._line_starts[line - self._first_line]
        line_text = split_lines(self.source[line_start:])[0]
        length = max(1, (end if end is not None else start + 1) - start)
        raise CommandParseError(
            message, line=line, column=column, source_line=line_text, hint=hint, length=length
        )

    def line_and_column(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of an offset."""
        index = bisect.bisect_right(self._line_starts, offset) - 1
        return index + self._first_line, offset - self._line_starts[index] + 1


def split_lines(text: str) -> list[str]:
    """Split text into lines at ``\\n``, ``\\r\\n`` and ``\\r`` only."""
    return LINE_BREAK.split(text)
