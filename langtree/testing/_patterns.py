"""Strings that match a regular expression: examples for a JSON schema's ``pattern``.

The pattern is parsed by the standard library's own regex parser (``re._parser``, the
module behind ``re.compile``) and walked once: literals as written, the first member of a
character class, the first branch of an alternation, each repeat as often as asked.
Lookarounds and word boundaries are not solved; the result is checked with ``re.search``
and dropped when it does not match, so a caller never gets a wrong example, only none.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["example_match"]

_parser = importlib.import_module("re._parser")

_REPEATS = (0, 1, 2, 4, 8, 16, 32)
_POOL = tuple("a0A_- .x")
_CATEGORIES = {
    "DIGIT": ("0", r"\d"),
    "NOT_DIGIT": ("a", r"\D"),
    "SPACE": (" ", r"\s"),
    "NOT_SPACE": ("a", r"\S"),
    "WORD": ("a", r"\w"),
    "NOT_WORD": ("-", r"\W"),
    "LINEBREAK": ("\n", r"\n"),
    "NOT_LINEBREAK": ("a", r"[^\n]"),
}


class _UnsupportedError(Exception):
    """A regex construct this walk does not handle."""


def example_match(pattern: str, *, shortest: int = 0, longest: int | None = None) -> str | None:
    """A string that ``re.search(pattern, ...)`` matches, within the length bounds.

    Args:
        pattern: A regular expression (JSON schema ``pattern`` semantics: not anchored).
        shortest: The least number of characters allowed.
        longest: The most characters allowed (``None``: no limit).

    Returns:
        The first string found, trying each repeat at its minimum count and then more
        often, each also padded with ``x`` up to ``shortest`` (which suits an unanchored
        end); ``None`` when none of those fits.

    Examples:
        >>> example_match(r"^[A-Z]{3}-\\d{4}$")
        'AAA-0000'
        >>> example_match(r"^\\d+$", shortest=3)
        '0000'
    """
    try:
        tree = _parser.parse(pattern)
    except re.error:
        return None
    for extra in (*_REPEATS, shortest):
        try:
            text = _Walk(extra).sequence(tree)
        except (_UnsupportedError, KeyError, ValueError, TypeError, IndexError):
            return None
        for candidate in (text, text.ljust(shortest, "x")):
            fits = shortest <= len(candidate) and (longest is None or len(candidate) <= longest)
            if fits and re.search(pattern, candidate):
                return candidate
    return None


class _Walk:
    """One pass over a parsed pattern, repeating each repeat ``extra`` times at least.

    The parse tree is ``re._parser``'s: a list of ``(opcode, argument)`` pairs whose
    argument's shape depends on the opcode, hence ``Any``.
    """

    def __init__(self, extra: int) -> None:
        self.extra = extra
        self.groups: dict[int, str] = {}

    def sequence(self, items: Iterable[tuple[object, Any]]) -> str:
        return "".join(self.item(str(op), argument) for op, argument in items)

    def item(self, op: str, argument: Any) -> str:
        if op == "LITERAL":
            return chr(argument)
        if op == "NOT_LITERAL":
            return next(c for c in _POOL if c != chr(argument))
        if op == "ANY":
            return "a"
        if op == "IN":
            return _member_of(argument)
        if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, body = argument
            count = min(max(int(low), self.extra), int(high))
            return "".join(self.sequence(body) for _ in range(count))
        if op == "SUBPATTERN":
            group, *_, body = argument
            text = self.sequence(body)
            if group is not None:
                self.groups[group] = text
            return text
        return self.other(op, argument)

    def other(self, op: str, argument: Any) -> str:
        if op == "BRANCH":
            return self.sequence(argument[1][0])
        if op == "ATOMIC_GROUP":
            return self.sequence(argument)
        if op == "GROUPREF":
            return self.groups[argument]
        if op == "GROUPREF_EXISTS":
            group, yes, no = argument
            chosen = yes if group in self.groups else no
            return self.sequence(chosen) if chosen is not None else ""
        if op in ("AT", "ASSERT", "ASSERT_NOT"):
            return ""
        raise _UnsupportedError(op)


def _member_of(items: list[tuple[object, Any]]) -> str:
    """A character in (or, after ``NEGATE``, outside) a character class."""
    negated = any(str(op) == "NEGATE" for op, _ in items)
    candidates = [] if negated else [_sample(str(op), arg) for op, arg in items]
    for candidate in [*candidates, *_POOL]:
        if candidate and _in_class(candidate, items) is not negated:
            return candidate
    raise _UnsupportedError("IN")


def _sample(op: str, argument: Any) -> str:
    if op == "LITERAL":
        return chr(argument)
    if op == "RANGE":
        return chr(argument[0])
    if op == "CATEGORY":
        return _CATEGORIES[_category(argument)][0]
    return ""


def _in_class(character: str, items: list[tuple[object, Any]]) -> bool:
    code = ord(character)
    for op, argument in items:
        name = str(op)
        if name == "LITERAL" and argument == code:
            return True
        if name == "RANGE" and argument[0] <= code <= argument[1]:
            return True
        if name == "CATEGORY" and re.fullmatch(_CATEGORIES[_category(argument)][1], character):
            return True
    return False


def _category(argument: object) -> str:
    """``CATEGORY_UNI_DIGIT`` → ``DIGIT``."""
    return str(argument).removeprefix("CATEGORY_").removeprefix("UNI_").removeprefix("LOC_")
