"""Pluck paths in mapping sources: ``items.*.id``, ``items.**.id``, ``items.***.id``
(docs/dsl.md, "Pluck paths").

A pluck operator stands between two dots of a source path, and nowhere else; the source
path keeps it as written, so that ``to_text`` renders it back.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langtree import parse_command
from langtree.dsl import AllCommand, EachCommand, Span, VariableMapping
from langtree.dsl._fastpath import parse_fast
from langtree.dsl._paths import Pluck, split_plucks
from tests.dsl.parsed import parse_error

NAME = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
OPERATOR = st.sampled_from(["*", "**", "***"])


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("items.*.id", id="star"),
        pytest.param("items.**.id", id="double-star"),
        pytest.param("items.***.id", id="triple-star"),
        pytest.param("report.items.*.meta.id", id="node-fields-around"),
        pytest.param("sections.*.paragraphs.**.text", id="nested"),
    ],
)
def test_pluck_source_is_kept_as_written(source: str) -> None:
    command = parse_command(f"! @all->task.digest@{{{{value.ids={source}}}}}")

    assert isinstance(command, AllCommand)
    assert command.mappings == (VariableMapping(target_path="value.ids", source_path=source),)


def test_pluck_in_each_source() -> None:
    text = "! @each[sections]->task.digest@{{value.texts=sections.paragraphs.*.text}}*"

    command = parse_command(text)

    assert isinstance(command, EachCommand)
    assert command.mappings[0].source_path == "sections.paragraphs.*.text"


def test_pluck_mapping_span_covers_the_whole_mapping() -> None:
    command = parse_command("! @all->task.digest@{{value.ids=items.**.id}}")

    assert command.mappings[0].span == Span(line=1, column=23, length=21)


def test_multiline_block_with_plucks() -> None:
    text = (
        "! @all->task.digest@{{\n    value.ids=items.*.id,  # ids\n"
        "    value.names=items.**.name,\n}}"
    )

    command = parse_command(text)

    assert command == parse_command(
        "! @all->task.digest@{{value.ids=items.*.id,value.names=items.**.name}}"
    )


def test_fast_path_leaves_plucks_to_the_parser() -> None:
    assert parse_fast("! @all->task.digest@{{value.ids=items.*.id}}", 1) is None


@pytest.mark.parametrize(
    ("source", "plain", "plucks"),
    [
        pytest.param("items.id", "items.id", (), id="no-pluck"),
        pytest.param("items.*.id", "items.id", (Pluck(after=1, operator="*"),), id="one"),
        pytest.param(
            "a.b.***.c.**.d",
            "a.b.c.d",
            (Pluck(after=2, operator="***"), Pluck(after=3, operator="**")),
            id="two",
        ),
    ],
)
def test_split_plucks(source: str, plain: str, plucks: tuple[Pluck, ...]) -> None:
    assert split_plucks(source) == (plain, plucks)


@given(st.lists(st.tuples(OPERATOR, st.lists(NAME, min_size=1, max_size=3)), max_size=3), NAME)
def test_pluck_paths_round_trip(segments: list[tuple[str, list[str]]], head: str) -> None:
    source = ".".join([head] + [f"{op}.{'.'.join(names)}" for op, names in segments])
    command = parse_command(f"! @all->task.digest@{{{{value.ids={source}}}}}*")

    assert command.mappings[0].source_path == source
    assert parse_command(command.to_text()) == command


ERRORS = [
    pytest.param(
        "! @all->task.digest@{{value.ids=items.*}}",
        """\
Expected a field name to pluck after 'items.*'
    ! @all->task.digest@{{value.ids=items.*}}
                                         ^~
  at line 1, column 38
  hint: name the field to take from each element, e.g. 'items.*.id'""",
        id="nothing-after-star",
    ),
    pytest.param(
        "! @all->task.digest@{{value.ids=items.**.}}",
        """\
Expected a field name to pluck after 'items.**.'
    ! @all->task.digest@{{value.ids=items.**.}}
                                         ^~~~
  at line 1, column 38
  hint: name the field to take from each element, e.g. 'items.**.id'""",
        id="nothing-after-dot",
    ),
    pytest.param(
        "! @all->task.digest@{{value.ids=items.*id}}",
        """\
Expected a field name to pluck after 'items.*'
    ! @all->task.digest@{{value.ids=items.*id}}
                                         ^~
  at line 1, column 38
  hint: name the field to take from each element, e.g. 'items.*.id'""",
        id="no-dot-after-star",
    ),
    pytest.param(
        "! @all->task.digest@{{value.ids=items.****.id}}",
        """\
Unknown pluck operator '.****.'
    ! @all->task.digest@{{value.ids=items.****.id}}
                                         ^~~~~~
  at line 1, column 38
  hint: use '.*.' (every value, None where one is missing), '.**.' (the values present) \
or '.***.' (every value present, all of one type)""",
        id="four-stars",
    ),
    pytest.param(
        "! @all->task.digest@{{value.ids=*.id}}",
        """\
A source path cannot start with a pluck operator
    ! @all->task.digest@{{value.ids=*.id}}
                                    ^~
  at line 1, column 33
  hint: name the list to pluck from first, e.g. 'items.*.id'""",
        id="leading-pluck",
    ),
    pytest.param(
        "! @each[items]->task.digest@{{value.ids=**.id}}*",
        """\
A source path cannot start with a pluck operator
    ! @each[items]->task.digest@{{value.ids=**.id}}*
                                            ^~
  at line 1, column 41
  hint: name the list to pluck from first, e.g. 'items.*.id'""",
        id="leading-pluck-in-each",
    ),
    pytest.param(
        "! @all->task.digest@{{value.ids=items.* .id}}",
        """\
Space around '.' not allowed - use 'document.sections' not 'document . sections'
    ! @all->task.digest@{{value.ids=items.* .id}}
                                         ^~~
  at line 1, column 38
  hint: write the pluck with no spaces, e.g. 'items.*.id'""",
        id="space-after-star",
    ),
    pytest.param(
        "! @all->task.digest@{{value.ids=items. *.id}}",
        """\
Space around '.' not allowed - use 'document.sections' not 'document . sections'
    ! @all->task.digest@{{value.ids=items. *.id}}
                                    ^~~~~~~~~~~
  at line 1, column 33
  hint: write 'items.*.id'""",
        id="space-before-star",
    ),
    pytest.param(
        "! @all->task.digest@{{value.ids=items.*.id.}}",
        """\
Empty path component after 'items.*.id.'
    ! @all->task.digest@{{value.ids=items.*.id.}}
                                              ^
  at line 1, column 43
  hint: name a field after '.', or remove the trailing '.' (e.g. 'sections.title')""",
        id="trailing-dot",
    ),
    pytest.param(
        "! @all->task.digest@{{value.ids.*.id=items}}",
        """\
Pluck operator '.*.' can only stand in a mapping's source, not in a target path
    ! @all->task.digest@{{value.ids.*.id=items}}
                                   ^~~
  at line 1, column 32
  hint: pluck on the right of '=', e.g. 'value.ids=items.*.id'""",
        id="in-target",
    ),
    pytest.param(
        "! @all->task.digest@{{items.**.id}}",
        """\
Pluck operator '.**.' can only stand in a mapping's source, not in a target path
    ! @all->task.digest@{{items.**.id}}
                               ^~~~
  at line 1, column 28
  hint: pluck on the right of '=', e.g. 'value.ids=items.*.id'""",
        id="implicit-mapping",
    ),
    pytest.param(
        "! @each[items.*.id]->task.digest@{{value.ids=items}}*",
        """\
Pluck operator '.*.' can only stand in a mapping's source, not in an inclusion path
    ! @each[items.*.id]->task.digest@{{value.ids=items}}*
                 ^~~
  at line 1, column 14
  hint: name the list itself here, and pluck in a mapping's source, \
e.g. '@{{value.ids=items.*.id}}'""",
        id="in-inclusion",
    ),
    pytest.param(
        "! @all->task.digest.*.id@{{value.ids=items}}",
        """\
Pluck operator '.*.' can only stand in a mapping's source, not in a destination path
    ! @all->task.digest.*.id@{{value.ids=items}}
                       ^~~
  at line 1, column 20
  hint: name the list itself here, and pluck in a mapping's source, \
e.g. '@{{value.ids=items.*.id}}'""",
        id="in-destination",
    ),
]


@pytest.mark.parametrize(("text", "rendered"), ERRORS)
def test_pluck_errors(text: str, rendered: str) -> None:
    error = parse_error(text)

    assert str(error) == rendered
