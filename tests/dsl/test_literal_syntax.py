"""Literal sources in mappings: ``value.status="draft"``, ``value.count=3``,
``value.final=false`` (docs/dsl.md, "Literals in mappings")."""

import pytest

from langtree import parse_command
from langtree.dsl import AllCommand, EachCommand, VariableMapping
from langtree.dsl._fastpath import parse_fast
from tests.dsl.parsed import parse_error


@pytest.mark.parametrize(
    ("written", "literal"),
    [
        pytest.param('"draft"', "draft", id="double-quoted"),
        pytest.param("'draft'", "draft", id="single-quoted"),
        pytest.param('"a \\"b\\"\\n"', 'a "b"\n', id="escapes"),
        pytest.param("3", 3, id="integer"),
        pytest.param("-2", -2, id="negative"),
        pytest.param("2.5", 2.5, id="float"),
        pytest.param("1e3", 1000.0, id="exponent"),
        pytest.param("true", True, id="true"),
        pytest.param("false", False, id="false"),
    ],
)
def test_a_literal_source_is_kept_with_its_type(written: str, literal: object) -> None:
    command = parse_command(f"! @all->task.review@{{{{value.status={written}}}}}")

    assert isinstance(command, AllCommand)
    [mapping] = command.mappings
    assert mapping == VariableMapping(target_path="value.status", source_path=None, literal=literal)
    assert type(mapping.literal) is type(literal)
    assert mapping.is_literal
    assert not mapping.is_implicit
    assert not mapping.is_wildcard


def test_literals_and_paths_mix_in_an_each() -> None:
    text = (
        "! @each[sections]->task.digest@{{value.entries.title=sections.title, "
        'value.entries.status="draft"}}*'
    )

    command = parse_command(text)

    assert isinstance(command, EachCommand)
    assert command.mappings == (
        VariableMapping(target_path="value.entries.title", source_path="sections.title"),
        VariableMapping(target_path="value.entries.status", source_path=None, literal="draft"),
    )


def test_to_text_writes_literals_canonically() -> None:
    command = parse_command(
        "! @all->task.review@{{value.status='draft', value.count=3, value.final=false}}*"
    )

    assert command.to_text() == (
        '! @all->task.review@{{value.status="draft",value.count=3,value.final=false}}*'
    )
    assert parse_command(command.to_text()) == command


def test_a_path_that_starts_with_true_stays_a_path() -> None:
    command = parse_command("! @all->task.review@{{value.flag=true.value}}")

    assert isinstance(command, AllCommand)
    assert command.mappings == (
        VariableMapping(target_path="value.flag", source_path="true.value"),
    )


@pytest.mark.parametrize("literal", ["true", "false"])
def test_the_fast_path_leaves_boolean_literals_to_the_parser(literal: str) -> None:
    assert parse_fast(f"! @all->task.review@{{{{value.final={literal}}}}}", 1) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            '! @all->task.review@{{value.tags=["a", "b"]}}',
            """\
A mapping's literal is a quoted string, a number, true or false, not a list or an object
    ! @all->task.review@{{value.tags=["a", "b"]}}
                                     ^
  at line 1, column 34
  hint: send a list or an object from a field, e.g. a transform field that builds it""",
            id="list",
        ),
        pytest.param(
            '! @all->task.review@{{value.meta={"a": 1}}}',
            """\
A mapping's literal is a quoted string, a number, true or false, not a list or an object
    ! @all->task.review@{{value.meta={"a": 1}}}
                                     ^
  at line 1, column 34
  hint: send a list or an object from a field, e.g. a transform field that builds it""",
            id="object",
        ),
        pytest.param(
            '! @all->task.review@{{value.status="draft}}',
            """\
Unterminated string literal
    ! @all->task.review@{{value.status="draft}}
                                       ^~~~~~~~
  at line 1, column 36
  hint: close the string with the quote it starts with""",
            id="unterminated-string",
        ),
        pytest.param(
            "! @all->task.review@{{value.count=12abc}}",
            """\
Expected a value, got '12abc'
    ! @all->task.review@{{value.count=12abc}}
                                      ^~~~~
  at line 1, column 35
  hint: write a quoted string ("text"), a number (5, 2.5), true or false""",
            id="digits-then-letters",
        ),
        pytest.param(
            "! @each[items]->task.review@{{value.count=1e999}}*",
            """\
Number '1e999' is too large
    ! @each[items]->task.review@{{value.count=1e999}}*
                                              ^~~~~
  at line 1, column 43
  hint: use a smaller number, or quote it as a string""",
            id="too-large",
        ),
        pytest.param(
            '! @all->task.review@{{value.status="draft", outputs.summary}}',
            """\
Cannot mix implicit and explicit variable mappings
    ! @all->task.review@{{value.status="draft", outputs.summary}}
                                                ^~~~~~~~~~~~~~~
  at line 1, column 45
  hint: write every mapping as 'target=source', e.g. 'outputs.summary=summary'""",
            id="with-an-implicit-mapping",
        ),
    ],
)
def test_misused_literals_are_refused(text: str, message: str) -> None:
    assert str(parse_error(text)) == message
