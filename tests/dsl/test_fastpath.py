"""The regex fast path and the full parser agree on every command the fast path takes."""

from hypothesis import given
from hypothesis import strategies as st
from test_properties import all_commands, each_commands, mutated_commands

from langtree.dsl._commands import AllCommand, EachCommand
from langtree.dsl._fastpath import parse_fast
from langtree.dsl._parser import _parse_command
from langtree.dsl._tokenizer import Tokenizer
from langtree.errors import CommandParseError
from langtree.structure.call_commands._table import call_signatures


def full_parse(text: str) -> object:
    try:
        return _parse_command(Tokenizer(text, first_line=3), call_signatures())
    except CommandParseError as error:
        return error


def spans(command: object) -> object:
    if isinstance(command, EachCommand):
        return command.inclusion_span, command.destination_span, [m.span for m in command.mappings]
    if isinstance(command, AllCommand):
        return command.destination_span, [m.span for m in command.mappings]
    return None


def without_literals(command: EachCommand | AllCommand) -> bool:
    """Literal sources are left to the full parser."""
    return not any(mapping.is_literal for mapping in command.mappings)


@given(st.one_of(each_commands(), all_commands()).filter(without_literals))
def test_canonical_commands_take_the_fast_path_with_the_same_result(
    command: EachCommand | AllCommand,
) -> None:
    text = command.to_text()

    fast = parse_fast(text, 3)

    assert fast == command
    assert fast == full_parse(text)
    assert spans(fast) == spans(full_parse(text))


@given(mutated_commands())
def test_fast_path_takes_only_what_the_full_parser_accepts_alike(text: str) -> None:
    fast = parse_fast(text, 3)

    if fast is not None:
        full = full_parse(text)
        assert fast == full
        assert spans(fast) == spans(full)


def test_fast_path_declines_other_commands() -> None:
    declined = [
        "! @sequential",
        "! @each[items]->task@{{value.item=items}}",
        "! @all[items]->task@{{a=b}}",
        "! @->task@{{a=*,b=c}}",
        "! @->task@{{a,b=c}}",
        "! @each[items]->task@{{\n value.item=items}}*",
        "! @each[items]->task@{{ value.item=items}}*",
    ]

    assert [parse_fast(text, 1) for text in declined] == [None] * len(declined)
