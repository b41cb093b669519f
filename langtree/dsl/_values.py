"""Typed values and call arguments: strings, numbers, booleans and variable names."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from langtree.dsl._commands import Value, VariableReference
from langtree.dsl._tokenizer import Token, Tokenizer

__all__ = ["Call", "parse_arguments", "parse_value"]

_INTEGER = re.compile(r"-?[0-9]+")
_ESCAPE = re.compile(r"\\(.)")
_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r"}
"""What each escape stands for; a backslash before any other character is kept."""
_BOOLEANS = {"true": True, "false": False}


@dataclass(frozen=True, slots=True)
class Call:
    """The arguments of an execution command, with where each one stands."""

    arguments: tuple[Value, ...]
    named_arguments: tuple[tuple[str, Value], ...]
    spans: tuple[tuple[int, int], ...]
    names: tuple[str | None, ...]
    closing: Token

    def span_of(self, argument: int | str | None) -> tuple[int, int]:
        """The offsets of a positional (index) or named argument; the ``)`` otherwise."""
        if isinstance(argument, str) and argument in self.names:
            return self.spans[self.names.index(argument)]
        if isinstance(argument, int) and argument < len(self.spans):
            return self.spans[argument]
        return self.closing.start, self.closing.end


def parse_value(tokens: Tokenizer, *, allow_variable: bool) -> tuple[Value, Token]:
    """value ::= string_literal | number_literal | boolean_literal | identifier"""
    if tokens.check("STRING"):
        token = tokens.consume("STRING")
        return _decode_string(token), token
    if tokens.check("NUMBER"):
        token = tokens.consume("NUMBER")
        return _decode_number(tokens, token), token
    if tokens.check("IDENT"):
        token = tokens.consume("IDENT")
        if token.text in _BOOLEANS:
            return _BOOLEANS[token.text], token
        if not allow_variable:
            _fail_unquoted(tokens, token)
        return VariableReference(token.text), token
    if tokens.source.startswith(("'", '"'), tokens.position):
        tokens.fail(
            "Unterminated string literal",
            hint="close the string with the quote it starts with",
            start=tokens.position,
            end=tokens.line_end(tokens.position),
        )
    tokens.fail_here(
        "Expected a value",
        hint='write a quoted string ("text"), a number (5, 2.5), true or false',
    )


def _decode_number(tokens: Tokenizer, token: Token) -> int | float:
    try:
        number = int(token.text) if _INTEGER.fullmatch(token.text) else float(token.text)
    except ValueError:
        number = math.inf
    if math.isinf(number):
        tokens.fail(
            f"Number {_shorten(token.text)!r} is too large",
            hint="use a smaller number, or quote it as a string",
            start=token.start,
            end=token.end,
        )
    return number


def _shorten(text: str) -> str:
    return text if len(text) <= 20 else f"{text[:10]}...{text[-5:]}"


def _decode_string(token: Token) -> str:
    """string_literal ::= '"' ([^"\\] | "\\" .)* '"' | "'" ([^'\\] | "\\" .)* "'"

    ``\\"``, ``\\'``, ``\\\\``, ``\\n``, ``\\t`` and ``\\r`` are escapes; a backslash before
    any other character is text (``"C:\\data"`` holds a backslash).
    """
    body = token.text[1:-1]
    return _ESCAPE.sub(lambda match: _ESCAPES.get(match[1], match[0]), body)


def _fail_unquoted(tokens: Tokenizer, token: Token) -> None:
    if token.text.lower() in _BOOLEANS:
        hint = f"booleans are lower case: write {token.text.lower()!r}"
    else:
        hint = f'quote text: write "{token.text}"'
    tokens.fail(
        f"Unquoted value {token.text!r} must be a number, true or false",
        hint=hint,
        start=token.start,
        end=token.end,
    )


def parse_arguments(tokens: Tokenizer) -> Call:
    """arguments ::= "(" WS* (argument (WS* "," WS* argument)* WS* ","?)? WS* ")" """
    opening = tokens.consume("LPAREN")
    positional: list[Value] = []
    named: list[tuple[str, Value]] = []
    spans: list[tuple[int, int]] = []
    names: list[str | None] = []
    tokens.skip_layout()
    while not tokens.check("RPAREN") and not tokens.at_end():
        name, value, start = _parse_argument(tokens)
        if name is None and named:
            tokens.fail(
                "Positional argument follows named argument",
                hint="put positional arguments first",
                start=start,
                end=tokens.position,
            )
        if name is None:
            positional.append(value)
        else:
            named.append((name, value))
        spans.append((start, tokens.position))
        names.append(name)
        tokens.skip_layout()
        if not tokens.check("COMMA"):
            break
        tokens.consume("COMMA")
        tokens.skip_layout()
    closing = tokens.expect_closing("RPAREN", opening)
    return Call(tuple(positional), tuple(named), tuple(spans), tuple(names), closing)


def _parse_argument(tokens: Tokenizer) -> tuple[str | None, Value, int]:
    """argument ::= identifier WS* "=" WS* value | value"""
    start = tokens.position
    if tokens.check("IDENT"):
        name = tokens.consume("IDENT")
        tokens.skip_layout()
        if tokens.check("EQUALS"):
            tokens.consume("EQUALS")
            tokens.skip_layout()
            return name.text, parse_value(tokens, allow_variable=True)[0], start
        tokens.position = start
    return None, parse_value(tokens, allow_variable=True)[0], start
