"""Reading DSL text takes work linear in its length: counted in steps, never timed.

Two deterministic counters stand in for a clock:

- **Regex steps.** :class:`BacktrackingModel` runs a regular expression the way Python's
  backtracking engine does (greedy and lazy repeats, alternatives, lookarounds, atomic
  groups) and counts one step per attempt to match one item at one position. Every
  regular expression of ``langtree.dsl`` runs, the way the DSL uses it, on inputs that
  grow fourfold.
- **Python steps.** ``sys.settrace`` counts the lines Python executes while
  ``parse_command`` and ``extract_commands`` read long texts of many shapes.

Linear work grows at most fourfold when the input does; quadratic work grows sixteenfold.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import re
import sys
from collections.abc import Callable, Iterator
from itertools import islice
from re import _compiler, _parser  # the engine's own parser: patterns read exactly as re does
from re import _constants as sre
from types import FrameType, ModuleType
from typing import Literal

import pytest

import langtree.dsl._extraction
import langtree.dsl._fastpath
import langtree.dsl._tokenizer
import langtree.dsl._values
from langtree import CommandParseError, parse_command
from langtree.dsl._extraction import extract_commands
from langtree.structure.call_commands._table import call_signatures

Mode = Literal["match", "fullmatch", "search", "finditer"]
Item = tuple[object, object]
Span = tuple[int, int]

# Growth allowed when the input grows fourfold: linear work gives at most 4 (less with a
# fixed part), quadratic work 16.
MAX_GROWTH = 4.5
SMALL, LARGE = 24, 96

_SINGLE_CHARACTER = (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN)
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


class BacktrackingModel:
    """Runs a compiled pattern as a backtracking engine would, counting steps.

    Single characters are tested with ``re`` itself, so classes, categories and flags mean
    what they mean to ``re``; the model only decides the order of attempts.
    """

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.steps = 0
        self._flags = pattern.flags
        parsed = _parser.parse(pattern.pattern, pattern.flags)
        self._state = parsed.state
        self._characters: dict[int, Callable[[str, int], object]] = {}
        self._tree = self._plain(parsed)

    def _plain(self, items: object) -> tuple[Item, ...]:
        """The parsed pattern as tuples, with group bodies converted likewise."""
        plain = []
        for operation, argument in items:  # type: ignore[attr-defined]
            if operation is sre.SUBPATTERN:
                argument = self._plain(argument[3])
            elif operation is sre.BRANCH:
                argument = tuple(self._plain(branch) for branch in argument[1])
            elif operation in _REPEATS:
                argument = (argument[0], argument[1], self._plain(argument[2]))
            elif operation is sre.ATOMIC_GROUP:
                argument = self._plain(argument)
            elif operation in (sre.ASSERT, sre.ASSERT_NOT):
                argument = (argument[0], argument[1].getwidth()[0], self._plain(argument[1]))
            plain.append((operation, argument))
        return tuple(plain)

    def run(self, text: str, mode: Mode) -> int:
        """Match ``text`` as ``re`` would in ``mode``; returns the steps taken."""
        self.steps = 0
        if mode == "finditer":
            with _deep_recursion():
                self._find_all(text)
        else:
            self.find(text, mode)
        return self.steps

    def find(self, text: str, mode: Literal["match", "fullmatch", "search"]) -> Span | None:
        """The span ``re`` would find in ``mode`` (``None``: no match)."""
        with _deep_recursion():
            if mode == "search":
                return self._search(text, 0)
            ends = self._ends(text, 0)
            end = next((e for e in ends if mode == "match" or e == len(text)), None)
        return None if end is None else (0, end)

    def _ends(self, text: str, position: int) -> Iterator[int]:
        return self._sequence(self._tree, 0, text, position)

    def _search(self, text: str, position: int) -> Span | None:
        for start in range(position, len(text) + 1):
            end = next(self._ends(text, start), None)
            if end is not None:
                return start, end
        return None

    def _find_all(self, text: str) -> None:
        position = 0
        while position <= len(text) and (found := self._search(text, position)) is not None:
            start, end = found
            position = end if end > start else end + 1

    def _sequence(
        self, items: tuple[Item, ...], index: int, text: str, position: int
    ) -> Iterator[int]:
        if index == len(items):
            yield position
            return
        for end in self._item(items[index], text, position):
            yield from self._sequence(items, index + 1, text, end)

    def _item(self, item: Item, text: str, position: int) -> Iterator[int]:
        operation, argument = item
        if operation in _SINGLE_CHARACTER:
            if self._character(item, text, position):
                yield position + 1
        elif operation in _REPEATS:
            yield from self._repeat(operation, argument, text, position)  # type: ignore[arg-type]
        else:
            self.steps += 1
            yield from self._group(operation, argument, text, position)

    def _group(
        self, operation: object, argument: object, text: str, position: int
    ) -> Iterator[int]:
        if operation is sre.SUBPATTERN:
            yield from self._sequence(argument, 0, text, position)  # type: ignore[arg-type]
        elif operation is sre.BRANCH:
            for alternative in argument:  # type: ignore[attr-defined]
                yield from self._sequence(alternative, 0, text, position)
        elif operation is sre.ATOMIC_GROUP:
            yield from islice(self._sequence(argument, 0, text, position), 1)  # type: ignore[arg-type]
        elif operation is sre.AT:
            if self._at(argument, text, position):
                yield position
        elif operation in (sre.ASSERT, sre.ASSERT_NOT):
            if self._assertion(argument, text, position) == (operation is sre.ASSERT):
                yield position
        else:
            raise NotImplementedError(f"the model does not know {operation}")

    def _character(self, item: Item, text: str, position: int) -> bool:
        self.steps += 1
        matcher = self._characters.get(id(item))
        if matcher is None:
            single = _compiler.compile(_parser.SubPattern(self._state, [item]), self._flags)
            matcher = self._characters[id(item)] = single.match
        return position < len(text) and matcher(text, position) is not None

    def _repeat(
        self,
        operation: object,
        argument: tuple[int, int, tuple[Item, ...]],
        text: str,
        position: int,
    ) -> Iterator[int]:
        low, high, body = argument
        lazy = operation is sre.MIN_REPEAT
        ends: Iterator[int]
        if len(body) == 1 and body[0][0] in _SINGLE_CHARACTER:
            ends = self._character_run(body[0], low, high, lazy, text, position)
        else:
            ends = self._body_repeat(body, low, high, lazy, text, position, 0)
        yield from islice(ends, 1) if operation is sre.POSSESSIVE_REPEAT else ends

    def _character_run(
        self, item: Item, low: int, high: int, lazy: bool, text: str, position: int
    ) -> Iterator[int]:
        if lazy:
            count = 0
            while True:
                if count >= low:
                    yield position + count
                if count >= high or not self._character(item, text, position + count):
                    return
                count += 1
        count = 0
        while count < high and self._character(item, text, position + count):
            count += 1
        yield from (position + taken for taken in range(count, low - 1, -1))

    def _body_repeat(
        self,
        body: tuple[Item, ...],
        low: int,
        high: int,
        lazy: bool,
        text: str,
        position: int,
        count: int,
    ) -> Iterator[int]:
        if lazy and count >= low:
            yield position
        if count < high:
            for end in self._sequence(body, 0, text, position):
                if end != position:  # an empty iteration ends the repeat, as in re
                    yield from self._body_repeat(body, low, high, lazy, text, end, count + 1)
        if not lazy and count >= low:
            yield position

    def _at(self, where: object, text: str, position: int) -> bool:
        multiline = bool(self._flags & re.MULTILINE)
        if where is sre.AT_BEGINNING:
            return position == 0 or (multiline and text[position - 1] == "\n")
        if where is sre.AT_BEGINNING_STRING:
            return position == 0
        if where is sre.AT_END:
            rest = text[position:]
            return rest in ("", "\n") or (multiline and rest.startswith("\n"))
        if where is sre.AT_END_STRING:
            return position == len(text)
        if where in (sre.AT_BOUNDARY, sre.AT_NON_BOUNDARY):
            word = re.compile(r"\w").match
            before = position > 0 and word(text, position - 1) is not None
            after = word(text, position) is not None
            return (before != after) == (where is sre.AT_BOUNDARY)
        raise NotImplementedError(f"the model does not know {where}")

    def _assertion(self, argument: object, text: str, position: int) -> bool:
        direction, width, body = argument  # type: ignore[misc]
        if direction == 1:
            return next(self._sequence(body, 0, text, position), None) is not None
        start = position - width
        return start >= 0 and any(end == position for end in self._sequence(body, 0, text, start))


@contextlib.contextmanager
def _deep_recursion() -> Iterator[None]:
    """A repeat of a group nests one generator per iteration."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20 * LARGE + 1000))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


# ---------------------------------------------------------------------------------------
# Every regular expression of the DSL, with how the DSL uses it
# ---------------------------------------------------------------------------------------

DSL_MODULES = (
    langtree.dsl._tokenizer,
    langtree.dsl._fastpath,
    langtree.dsl._extraction,
    langtree.dsl._values,
)

USES: dict[str, Mode] = {
    "tokenizer.LINE_BREAK": "finditer",
    "tokenizer._LEADING": "match",
    "tokenizer._LAYOUT": "match",
    "tokenizer._WORD": "search",
    "tokenizer._REST_BLANK": "match",
    "fastpath._COMMAND": "fullmatch",
    "fastpath._MAPPING_PART": "finditer",
    "extraction._BRACKETS": "finditer",
    "extraction._STRAY_COMMAND": "finditer",
    "values._INTEGER": "fullmatch",
    "values._ESCAPE": "finditer",
}
"""How each module-level pattern is used; every rule of ``tokenizer.RULES`` is matched."""


def dsl_patterns() -> dict[str, re.Pattern[str]]:
    """Every compiled pattern at the top level of the DSL modules, rules included."""
    found: dict[str, re.Pattern[str]] = {}
    for module in DSL_MODULES:
        short = _short_name(module)
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                found[f"{short}.{name}"] = value
    for name, rule in langtree.dsl._tokenizer.RULES.items():
        found[f"tokenizer.RULES[{name!r}]"] = rule
    return found


def _short_name(module: ModuleType) -> str:
    """The module's file name without its folders and without the underscore that marks
    it private: ``tokenizer``."""
    return module.__name__.rsplit(".", 1)[1].removeprefix("_")


def usage(name: str) -> Mode:
    return "match" if name.startswith("tokenizer.RULES[") else USES[name]


# The text around a run of one unit: what a command starts with and how it goes on.
PREFIXES = (
    "",
    "! ",
    "! @all->task.b@{{value.x=y}} #",
    "! @each[items]->task.b@{{value.x=items}}*",
    "! @all->task.",
    "! @all->task.b@{{",
    '! x="',
    "! x='",
    "! x=1",
    "! llm(",
    "#",
    "-",
    "a.",
)
UNITS = (
    " ",
    "\t",
    " \t",
    "a",
    "a.",
    ".a",
    "1",
    "1.",
    "\\\\",
    "\\",
    "#",
    '"',
    "!",
    "value.x=y,",
    " . a",
)
SUFFIXES = ("", "x", "\nx", "\r", '"', "}}", "}}*", "@{{value.x=y}}", ".", "e", "!")


def grown(prefix: str, unit: str, suffix: str, size: int) -> str:
    return prefix + unit * size + suffix


@pytest.mark.parametrize("name", sorted(dsl_patterns()))
def test_every_pattern_has_a_known_use(name: str) -> None:
    assert name.startswith("tokenizer.RULES[") or name in USES, f"say in USES how {name} is used"


@pytest.mark.parametrize("name", sorted(dsl_patterns()))
def test_pattern_work_grows_linearly(name: str) -> None:
    model = BacktrackingModel(dsl_patterns()[name])
    mode = usage(name)
    worst = max(
        (
            model.run(grown(prefix, unit, suffix, LARGE), mode)
            / max(1, model.run(grown(prefix, unit, suffix, SMALL), mode)),
            repr(grown(prefix, unit, suffix, 2)),
        )
        for prefix in PREFIXES
        for unit in UNITS
        for suffix in SUFFIXES
    )

    assert worst[0] <= MAX_GROWTH, f"{name}: {worst[0]:.1f}x more steps for 4x {worst[1]}"


def test_model_sees_a_quadratic_pattern() -> None:
    model = BacktrackingModel(re.compile(r"#[^\n]*[ ]*"))
    text = "#" + " " * SMALL + "\nx"

    small = model.run(text, "fullmatch")
    large = model.run("#" + " " * LARGE + "\nx", "fullmatch")

    assert large / small > 12


@pytest.mark.parametrize(
    ("pattern", "text", "mode"),
    [
        pytest.param(r"a*?b", "aaab", "fullmatch", id="lazy"),
        pytest.param(r"(?:ab|a)*c", "ababac", "fullmatch", id="group-repeat"),
        pytest.param(r"[0-9]+(?![0-9.])", "123.4", "match", id="lookahead"),
        pytest.param(r"(?<=a)b", "ab", "search", id="lookbehind"),
        pytest.param(r"(?>a+)b|a", "aaa", "match", id="atomic"),
        pytest.param(r"\s*+\Z", "  x", "match", id="possessive-end"),
        pytest.param(r"\bx\b", "ax x", "search", id="boundaries"),
        pytest.param(r"(?m)^b$", "a\nb\n", "search", id="multiline"),
    ],
)
def test_model_matches_like_re(
    pattern: str, text: str, mode: Literal["match", "fullmatch", "search"]
) -> None:
    compiled = re.compile(pattern)
    found = getattr(compiled, mode)(text)

    assert BacktrackingModel(compiled).find(text, mode) == (found.span() if found else None)


# ---------------------------------------------------------------------------------------
# Whole texts: Python steps of parse_command and extract_commands
# ---------------------------------------------------------------------------------------

SHAPES: dict[str, Callable[[int], str]] = {
    "comment-then-line": lambda n: "! @all->task.b@{{value.x=y}} #" + " " * n + "\nx",
    "each-comment-then-line": lambda n: (
        "! @each[items]->task.b@{{value.x=items}}* #" + " " * n + "\nx"
    ),
    "trailing-blanks-then-line": lambda n: "! @all->task.b@{{value.x=y}}" + " \t" * n + "\nx",
    "long-path": lambda n: "! @all->task" + ".part" * n + "@{{value.x=y}}",
    "long-path-trailing-dot": lambda n: "! @all->task" + ".part" * n + ".@{{value.x=y}}",
    "spaced-path": lambda n: "! @all->task" + " . part" * n + "@{{value.x=y}}",
    "long-string": lambda n: '! text="' + "word " * n + '"',
    "unterminated-string": lambda n: '! text="' + "word " * n,
    "escapes": lambda n: '! text="' + "\\\\\\q" * n + '"',
    "spaces-after-bang": lambda n: "!" + " " * n + "@parallel",
    "many-arguments": lambda n: "! resample(" + "1, " * n + "1)",
    "many-arguments-unclosed": lambda n: "! resample(" + "1, " * n,
    "many-mappings": lambda n: "! @all->task.b@{{" + ",".join(["value.x=y"] * n) + "}}",
    "many-mappings-unclosed": lambda n: "! @all->task.b@{{" + ", ".join(["value.x=y"] * n),
    "many-mapping-lines": lambda n: "! @all->task.b@{{\n" + "  value.x=y,  # note\n" * n + "}}",
    "long-number": lambda n: "! n=" + "1" * n + "x",
}

TEXT_SHAPES: dict[str, Callable[[int], str]] = {
    "blank-lines-first": lambda n: "\n" * n + "Text.",
    "blank-lines-last": lambda n: "Text." + "\n" * n,
    "prose-lines": lambda n: "Some prose, with a ! in it.\n" * n,
    "command-lines": lambda n: "! @parallel\n" * n,
    "command-after-prose": lambda n: "Summarise. ! @all->task.x@{{value.y=z}}\n" * n,
    "unclosed-command": lambda n: "! @all->task.b@{{\n" + "value.x=y\n" * n,
    "indented-lines": lambda n: "Text.\n" + "        more text\n" * n,
    "long-line": lambda n: "word ! " * n,
    "comment-then-line": lambda n: "! @all->task.b@{{value.x=y}} #" + " " * n + "\nx",
}


def python_steps(function: Callable[[str], object], text: str) -> int:
    """Lines of Python executed while ``function`` reads ``text`` (errors included).

    The garbage collector is off meanwhile: finalizers it would run belong to other code.
    """
    steps = 0

    def trace(frame: FrameType, event: str, argument: object) -> object:
        nonlocal steps
        steps += event == "line"
        return trace

    previous = sys.gettrace()
    collecting = gc.isenabled()
    gc.disable()
    sys.settrace(trace)
    try:
        function(text)
    except CommandParseError:
        pass
    finally:
        sys.settrace(previous)
        if collecting:
            gc.enable()
    return steps


def growth(function: Callable[[str], object], shape: Callable[[int], str]) -> float:
    """How much more work four times the input takes (caches warmed up first: compiling
    a pattern ``re`` has not cached is work of its own)."""
    python_steps(function, shape(SMALL))
    return python_steps(function, shape(LARGE)) / python_steps(function, shape(SMALL))


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_parse_command_steps_grow_linearly(shape: Callable[[int], str]) -> None:
    assert growth(parse_command, shape) <= MAX_GROWTH


@pytest.mark.parametrize(
    "shape", (SHAPES | TEXT_SHAPES).values(), ids=(SHAPES | TEXT_SHAPES).keys()
)
def test_extract_commands_steps_grow_linearly(shape: Callable[[int], str]) -> None:
    extract = functools.partial(extract_commands, signatures=call_signatures())
    assert growth(extract, shape) <= MAX_GROWTH
