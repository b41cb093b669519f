"""Property-based tests of the DSL parser.

1. Any text either parses or raises :class:`CommandParseError` whose position names a real
   line of the input (never another exception).
2. Every well-formed command object renders with ``to_text`` to text that parses back to an
   equal command, with values of the same types.
3. A backslash may stand before any character but a line break: ``\\"``, ``\\'``, ``\\\\``,
   ``\\n``, ``\\t`` and ``\\r`` are escapes, and any other backslash is kept as text.
4. The same command laid out over several lines (indentation, blank lines, ``#`` comments,
   trailing commas inside the brackets) parses to the same command.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langtree import CommandParseError, parse_command
from langtree.dsl import (
    AllCommand,
    Command,
    CommentCommand,
    ContextCommand,
    EachCommand,
    ExecutionCommand,
    NodeModifierCommand,
    ResamplingCommand,
    VariableAssignmentCommand,
    VariableMapping,
    VariableReference,
)
from langtree.dsl._commands import format_value
from langtree.dsl._names import assembly_name_problem
from langtree.structure.call_commands._table import call_signatures

# Every kind of command ``parse_command`` returns, for ``isinstance``.
COMMAND_TYPES = get_args(Command)

# The tokenizer's NEWLINE rule: the only line breaks that start a new line number.
LINE_BREAK = re.compile(r"\r\n|\n|\r")

# ---------------------------------------------------------------------------------------
# Building blocks: identifiers, paths, values, comments
# ---------------------------------------------------------------------------------------

COMMON_NAMES = (
    "items",
    "sections",
    "title",
    "summary",
    "document",
    "prompt",
    "value",
    "outputs",
    "task",
    "each",
    "all",
    "true",
    "false",
    "llm",
    "resample",
    "override",
    "_x",
    "e5",
)
IDENTIFIER = st.one_of(
    st.sampled_from(COMMON_NAMES),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True),
)
# Where an unquoted name is a value, ``true``/``false`` would read as booleans.
VARIABLE_NAME = IDENTIFIER.filter(lambda name: name not in ("true", "false"))
# ``together`` is the node modifier keyword, so ``! together=1`` is not an assignment;
# built-in commands and template variables are no variable names either.
ASSIGNMENT_NAME = VARIABLE_NAME.filter(
    lambda name: assembly_name_problem(name, call_signatures()) is None
)
PATH = st.lists(IDENTIFIER, min_size=1, max_size=4).map(".".join)
# A mapping source that is ``true`` or ``false`` alone is a literal, not a path.
SOURCE_PATH = PATH.filter(lambda path: path not in ("true", "false"))
VARIABLE_REFERENCE = VARIABLE_NAME.map(VariableReference)

TRICKY_CHARACTERS = "\"'\\\n\r\t#,()[]{}=*@!-> abc"
STRING_VALUE = st.one_of(st.text(), st.text(alphabet=TRICKY_CHARACTERS))
FLOAT_VALUE = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e-05, 2.5e10, 1e16, -3e-07, 0.5, -0.0, 1e300, 5e-324]),
)
LITERAL_VALUE = st.one_of(STRING_VALUE, st.integers(), FLOAT_VALUE, st.booleans())


def _as_comment(text: str) -> str:
    """Make text usable as a comment: one physical line, no surrounding whitespace."""
    return LINE_BREAK.sub(" ", text).strip()


COMMENT_TEXT = st.one_of(st.text(), st.text(alphabet=TRICKY_CHARACTERS)).map(_as_comment)
INLINE_COMMENT = st.one_of(st.none(), COMMENT_TEXT.filter(bool))

# ---------------------------------------------------------------------------------------
# Command objects
# ---------------------------------------------------------------------------------------


@st.composite
def mapping_blocks(draw: st.DrawFn, *, allow_wildcard: bool) -> tuple[VariableMapping, ...]:
    """Mappings that obey the rules: all implicit or all explicit; a wildcard stands alone."""
    kinds = ["implicit", "explicit"] + (["wildcard"] if allow_wildcard else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "wildcard":
        return (VariableMapping(target_path=draw(PATH), source_path="*"),)
    targets = draw(st.lists(PATH, min_size=1, max_size=5))
    if kind == "implicit":
        return tuple(VariableMapping(target_path=target, source_path=None) for target in targets)
    return tuple(draw(explicit_mappings(target)) for target in targets)


def explicit_mappings(target: str) -> st.SearchStrategy[VariableMapping]:
    """``target=source`` with a source path or a literal (``"draft"``, ``3``, ``true``)."""
    return st.one_of(
        SOURCE_PATH.map(lambda source: VariableMapping(target_path=target, source_path=source)),
        LITERAL_VALUE.map(
            lambda literal: VariableMapping(target_path=target, source_path=None, literal=literal)
        ),
    )


@st.composite
def each_commands(draw: st.DrawFn) -> EachCommand:
    """``@each[inclusion]->destination@{{...}}*``, brackets optional, no wildcard."""
    return EachCommand(
        inclusion_path=draw(st.one_of(st.none(), PATH)),
        destination_path=draw(PATH),
        mappings=draw(mapping_blocks(allow_wildcard=False)),
        comment=draw(INLINE_COMMENT),
    )


@st.composite
def all_commands(draw: st.DrawFn) -> AllCommand:
    """``@all->destination@{{...}}`` with or without ``*``, wildcard allowed."""
    return AllCommand(
        destination_path=draw(PATH),
        mappings=draw(mapping_blocks(allow_wildcard=True)),
        has_multiplicity=draw(st.booleans()),
        comment=draw(INLINE_COMMENT),
    )


@st.composite
def modifier_commands(draw: st.DrawFn) -> NodeModifierCommand:
    """``@sequential`` or ``@parallel``."""
    return NodeModifierCommand(
        modifier=draw(st.sampled_from(["sequential", "parallel"])), comment=draw(INLINE_COMMENT)
    )


@st.composite
def assignment_commands(draw: st.DrawFn) -> VariableAssignmentCommand:
    """``name=value`` with a string, integer, finite float or boolean value."""
    return VariableAssignmentCommand(
        variable_name=draw(ASSIGNMENT_NAME),
        value=draw(LITERAL_VALUE),
        comment=draw(INLINE_COMMENT),
    )


@st.composite
def resample_commands(draw: st.DrawFn) -> ExecutionCommand:
    """``resample(n)`` with n >= 1 or a variable, positional or named."""
    value = draw(st.one_of(st.integers(min_value=1), VARIABLE_REFERENCE))
    named = draw(st.booleans())
    return ExecutionCommand(
        command_name="resample",
        arguments=() if named else (value,),
        named_arguments=(("n_times", value),) if named else (),
        comment=draw(INLINE_COMMENT),
    )


@st.composite
def llm_commands(draw: st.DrawFn) -> ExecutionCommand:
    """``llm(key)`` with an optional ``override``, positional or named."""
    key = draw(st.one_of(STRING_VALUE, VARIABLE_REFERENCE))
    override = draw(st.one_of(st.none(), st.booleans(), VARIABLE_REFERENCE))
    form = draw(st.sampled_from(["positional", "named_override", "all_named"]))
    arguments: tuple[str | bool | VariableReference, ...] = ()
    named: list[tuple[str, str | bool | VariableReference]] = []
    if form == "all_named":
        named.append(("model_key", key))
    else:
        arguments = (key,)
    if override is not None and form == "positional":
        arguments += (override,)
    elif override is not None:
        named.append(("override", override))
    return ExecutionCommand(
        command_name="llm",
        arguments=arguments,
        named_arguments=tuple(draw(st.permutations(named))),
        comment=draw(INLINE_COMMENT),
    )


@st.composite
def resampling_commands(draw: st.DrawFn) -> ResamplingCommand:
    """``@resampled[field]->function``."""
    return ResamplingCommand(
        field_name=draw(IDENTIFIER),
        aggregation_function=draw(st.sampled_from(["mean", "median", "mode", "sum", "min", "max"])),
        comment=draw(INLINE_COMMENT),
    )


@st.composite
def context_paths(draw: st.DrawFn) -> str:
    """A field path with optional pluck operators between its names, or ``*``."""
    names = draw(st.lists(IDENTIFIER, min_size=1, max_size=4))
    parts = [names[0]]
    for name in names[1:]:
        operator = draw(st.sampled_from(["", "*", "**", "***"]))
        parts += [operator, name] if operator else [name]
    return draw(st.sampled_from([".".join(parts), "*"]))


@st.composite
def context_commands(draw: st.DrawFn) -> ContextCommand:
    """``@context[...]`` with any entries (``*`` among names and repeats parse too)."""
    return ContextCommand(
        paths=tuple(draw(st.lists(context_paths(), max_size=4))), comment=draw(INLINE_COMMENT)
    )


COMMENT_COMMANDS = st.builds(CommentCommand, comment=COMMENT_TEXT)
BRACKETED_COMMANDS = st.one_of(
    each_commands(),
    all_commands(),
    resample_commands(),
    llm_commands(),
    resampling_commands(),
    context_commands(),
)
COMMANDS = st.one_of(
    BRACKETED_COMMANDS, modifier_commands(), assignment_commands(), COMMENT_COMMANDS
)


def typed(value: object) -> object:
    """A comparable picture of a command that also records every value's type.

    Dataclass equality treats ``1``, ``1.0`` and ``True`` as equal; this does not.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return (
            type(value).__name__,
            tuple((f.name, typed(getattr(value, f.name))) for f in fields if f.compare),
        )
    if isinstance(value, tuple):
        return tuple(typed(item) for item in value)
    return type(value).__name__, repr(value)


def assert_parses_to(text: str, command: Command) -> None:
    """Parse ``text`` and check it gives ``command``, value types included."""
    parsed = parse_command(text)
    assert parsed == command, f"{text!r} parsed to {parsed!r}"
    assert typed(parsed) == typed(command), f"{text!r} parsed to {parsed!r}"


# ---------------------------------------------------------------------------------------
# Multiline layout
# ---------------------------------------------------------------------------------------

# What may stand between tokens inside [...], {{...}} and (...).
LAYOUT = st.sampled_from(
    [
        "",
        " ",
        "\t",
        "\n",
        "\n    ",
        "\n\n    ",
        "\r\n  ",
        "\r",
        "  # note\n    ",
        "\n    # a, b }} ) ] = *\n    ",
        " #\n",
    ]
)
Gap = Callable[[], str]


def _mapping_text(mapping: VariableMapping, gap: Gap) -> str:
    """One mapping, with layout around ``=``."""
    if mapping.literal is not None:
        return f"{mapping.target_path}{gap()}={gap()}{format_value(mapping.literal)}"
    if mapping.source_path is None:
        return mapping.target_path
    return f"{mapping.target_path}{gap()}={gap()}{mapping.source_path}"


def _items_text(items: list[str], gap: Gap, *, trailing_comma: bool) -> str:
    """Comma-separated items with layout around every comma and inside the brackets."""
    text = gap() + items[0]
    for item in items[1:]:
        text += f"{gap()},{gap()}{item}"
    if trailing_comma:
        text += f"{gap()},"
    return text + gap()


def _arguments_text(command: ExecutionCommand, gap: Gap, trailing_comma: bool) -> str:
    """The arguments of a call, with layout around commas and ``=``."""
    items = [format_value(value) for value in command.arguments]
    for name, value in command.named_arguments:
        items.append(f"{name}{gap()}={gap()}{format_value(value)}")
    return _items_text(items, gap, trailing_comma=trailing_comma)


def _body_text(command: Command, gap: Gap, trailing_comma: bool) -> str:
    """The command after ``!``, laid out with ``gap()`` inside every bracket pair."""
    if isinstance(command, EachCommand | AllCommand):
        mappings = [_mapping_text(mapping, gap) for mapping in command.mappings]
        block = _items_text(mappings, gap, trailing_comma=trailing_comma)
        star = "*" if command.has_multiplicity else ""
        if isinstance(command, AllCommand):
            return f"@all->{command.destination_path}@{{{{{block}}}}}{star}"
        inclusion = command.inclusion_path
        head = "@each" if inclusion is None else f"@each[{gap()}{inclusion}{gap()}]"
        return f"{head}->{command.destination_path}@{{{{{block}}}}}{star}"
    if isinstance(command, ExecutionCommand):
        return f"{command.command_name}({_arguments_text(command, gap, trailing_comma)})"
    if isinstance(command, ContextCommand):
        paths = list(command.paths)
        entries = _items_text(paths, gap, trailing_comma=trailing_comma) if paths else gap()
        return f"@context[{entries}]"
    assert isinstance(command, ResamplingCommand)
    field = f"[{gap()}{command.field_name}{gap()}]"
    return f"@resampled{field}->{command.aggregation_function}"


@st.composite
def multiline_layouts(draw: st.DrawFn) -> tuple[Command, str]:
    """A bracketed command and a multiline rendering of it."""
    command = draw(BRACKETED_COMMANDS)

    def gap() -> str:
        return draw(LAYOUT)

    before = draw(st.sampled_from(["", "\n", "  \n\t"]))
    after_bang = draw(st.sampled_from(["", " ", " \t "]))
    body = _body_text(command, gap, trailing_comma=draw(st.booleans()))
    comment = f" # {command.comment}" if command.comment else ""
    after = draw(st.sampled_from(["", "\n", "\n  \n"]))
    return command, f"{before}!{after_bang}{body}{comment}{after}"


# ---------------------------------------------------------------------------------------
# Arbitrary and near-valid text
# ---------------------------------------------------------------------------------------

DSL_CHARACTERS = "!@#[]{}()=.,*->\"'\\ \n\r\tabcdexyz_AZ0129"
FRAGMENTS = (
    "!",
    "! ",
    "@",
    "@each",
    "@all",
    "@sequential",
    "@parallel",
    "together",
    "@resampled",
    "@context",
    "[",
    "]",
    "->",
    "@{{",
    "{{",
    "}}",
    "*",
    "(",
    ")",
    ",",
    "=",
    ".",
    "resample",
    "llm",
    "override",
    "n_times",
    "model_key",
    "true",
    "false",
    "mode",
    "mean",
    "prompt.context",
    "value.item",
    "items",
    "items.*.id",
    "task.x",
    "1",
    "-3",
    "2.5",
    "1e5",
    '"s"',
    "'s'",
    '"a\\"b"',
    '"\\q"',
    '"',
    "'",
    "\\",
    "# c",
    " ",
    "\t",
    "\n",
    "\r\n",
    "\r",
)
PREFIXES = (
    "!",
    "! ",
    "! @",
    "! @each",
    "! @each[",
    "! @each[items]->",
    "! @each[items]->task@{{",
    "! @all->",
    "! @->task@{{",
    "! @all->task@{{prompt.x=",
    "! @resampled[",
    "! @resampled[rating]->",
    "! @context[",
    "! @context[heading,",
    "! resample(",
    "! llm(",
    '! llm("gpt-4",',
    "! x=",
    "! together",
    "! #",
)
DSL_TEXT = st.text(alphabet=DSL_CHARACTERS)
FRAGMENT_TEXT = st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join)
PREFIXED_TEXT = st.tuples(
    st.sampled_from(PREFIXES), st.one_of(DSL_TEXT, FRAGMENT_TEXT, st.text())
).map("".join)
EDIT_INSERT = st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=3))
MULTILINE_TEXT = multiline_layouts().map(lambda pair: pair[1])


@st.composite
def mutated_commands(draw: st.DrawFn) -> str:
    """The text of a valid command (single-line or multiline) with a few random edits."""
    text = draw(st.one_of(COMMANDS.map(lambda command: command.to_text()), MULTILINE_TEXT))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        start = draw(st.integers(min_value=0, max_value=len(text)))
        end = draw(st.integers(min_value=start, max_value=min(len(text), start + 3)))
        replacement = draw(st.one_of(st.just(""), EDIT_INSERT))
        text = text[:start] + replacement + text[end:]
    return text


def parse_or_error(text: str) -> Command | CommandParseError:
    """The command ``text`` parses to, or the CommandParseError it raises."""
    try:
        return parse_command(text)
    except CommandParseError as error:
        return error


def assert_parses_or_fails_cleanly(text: str) -> None:
    """``text`` parses to a command, or fails with an error pointing into one of its lines."""
    outcome = parse_or_error(text)
    if not isinstance(outcome, CommandParseError):
        assert isinstance(outcome, COMMAND_TYPES)
        return
    line, column, source_line = outcome.line, outcome.column, outcome.source_line
    lines = LINE_BREAK.split(text)
    assert 1 <= line <= len(lines), f"line {line} of {len(lines)}"
    assert column >= 1, f"column {column}"
    assert source_line == lines[line - 1], (
        f"source_line {source_line!r} is not line {line}: {lines[line - 1]!r}"
    )
    assert column <= len(source_line) + 1, f"column {column} lies past the end of {source_line!r}"


# ---------------------------------------------------------------------------------------
# Property 1: parse or CommandParseError, with a position inside the text
# ---------------------------------------------------------------------------------------


@given(st.one_of(st.text(), DSL_TEXT))
def test_arbitrary_text_parses_or_fails_cleanly(text: str) -> None:
    """Unstructured text never raises anything but a well-placed CommandParseError."""
    assert_parses_or_fails_cleanly(text)


@given(st.one_of(PREFIXED_TEXT, FRAGMENT_TEXT))
def test_dsl_like_text_parses_or_fails_cleanly(text: str) -> None:
    """Text built from DSL tokens, often behind a valid prefix, reaches deep parser states."""
    assert_parses_or_fails_cleanly(text)


@given(mutated_commands())
def test_mutated_commands_parse_or_fail_cleanly(text: str) -> None:
    """Valid commands with small edits exercise the error paths of every rule."""
    assert_parses_or_fails_cleanly(text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("! x=" + "1" * 4301, id="assignment-int-beyond-str-digits-limit"),
        pytest.param("! resample(" + "1" * 4301 + ")", id="argument-int-beyond-str-digits-limit"),
        pytest.param("\x0b", id="vertical-tab-only"),
        pytest.param("! @sequential\x0cx", id="form-feed-inside-line"),
        pytest.param("! @each\u2028[a]->b@{{c}}*", id="line-separator-inside-line"),
        pytest.param("! @all->task@{{prompt.x=\r\n", id="empty-source-before-crlf"),
    ],
)
def test_known_edge_cases_parse_or_fail_cleanly(text: str) -> None:
    """Minimal inputs found by the properties above, kept as explicit regressions."""
    assert_parses_or_fails_cleanly(text)


# ---------------------------------------------------------------------------------------
# Property 2: to_text round trip
# ---------------------------------------------------------------------------------------


@given(COMMANDS)
def test_to_text_round_trips(command: Command) -> None:
    """Canonical text of every well-formed command parses back to an equal command."""
    text = command.to_text()
    assert LINE_BREAK.search(text) is None, f"canonical text spans lines: {text!r}"
    assert_parses_to(text, command)


@given(assignment_commands())
def test_assignment_values_round_trip(command: VariableAssignmentCommand) -> None:
    """Strings, integers, finite floats and booleans keep their value and type."""
    assert_parses_to(command.to_text(), command)


# ---------------------------------------------------------------------------------------
# Property 3: escapes
# ---------------------------------------------------------------------------------------

# The escapes and what they stand for; a backslash before any other character is text.
ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r"}
# A string stays on its line, so a backslash cannot stand before a line break.
ESCAPABLE = st.characters(blacklist_characters="\r\n")
# Text with backslashes that start no escape (``C:\\data``, ``\\d+``), and no quote.
PLAIN_CHARACTER = st.characters(blacklist_characters='\\"\r\n')
BACKSLASH_AS_TEXT = st.characters(blacklist_characters="\\\"'ntr\r\n").map(lambda c: "\\" + c)
TEXT_WITH_BACKSLASHES = st.lists(st.one_of(PLAIN_CHARACTER, BACKSLASH_AS_TEXT)).map("".join)


@given(st.text(ESCAPABLE), st.sampled_from(["'", '"']))
def test_a_backslash_before_any_character_is_valid(characters: str, quote: str) -> None:
    """Each escape stands for its character; any other backslash is kept with what follows."""
    body = "".join("\\" + character for character in characters)

    command = parse_command(f"! s={quote}{body}{quote}")

    assert command == VariableAssignmentCommand(
        variable_name="s",
        value="".join(ESCAPES.get(character, "\\" + character) for character in characters),
    )


@given(TEXT_WITH_BACKSLASHES)
def test_backslashes_that_start_no_escape_are_text(text: str) -> None:
    """Text quoted as written keeps its backslashes: Windows paths, regular expressions."""
    assert parse_command(f'! s="{text}"') == VariableAssignmentCommand(
        variable_name="s", value=text
    )


# ---------------------------------------------------------------------------------------
# Property 4: multiline layout
# ---------------------------------------------------------------------------------------


@given(multiline_layouts())
def test_multiline_layout_parses_as_single_line(pair: tuple[Command, str]) -> None:
    """Line breaks, blank lines, comments and a trailing comma inside brackets change nothing."""
    command, text = pair
    assert_parses_to(text, command)


@pytest.mark.parametrize(
    ("multiline", "single_line"),
    [
        (
            "! @each[items]->task@{{\n    value.title=items.title,\n"
            "    value.content=items.content,\n    prompt.metadata=items.meta\n}}*",
            "! @each[items]->task@{{value.title=items.title,value.content=items.content,"
            "prompt.metadata=items.meta}}*",
        ),
        (
            "! @each[\n    document.sections.subsections\n]->task@{{value.data=subsections}}*",
            "! @each[document.sections.subsections]->task@{{value.data=subsections}}*",
        ),
        (
            '! llm(\n    "gpt-4-complex",\n    override=true\n)',
            '! llm("gpt-4-complex",override=true)',
        ),
    ],
)
def test_specification_multiline_examples(multiline: str, single_line: str) -> None:
    """The multiline examples of the specification parse as their single-line forms."""
    assert_parses_to(multiline, parse_command(single_line))
