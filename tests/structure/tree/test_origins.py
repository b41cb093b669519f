"""Where a class's docstring and field descriptions stand in its file."""

from pathlib import Path

import pytest
from pydantic import Field

from langtree import CommandParseError, TreeNode
from langtree.structure.tree._origins import Origin, class_origins
from langtree.structure.tree._texts import class_parse_diagnostics, read_class_texts


class Documented(TreeNode):
    """
    ! @sequential
    Some text.
    """

    plain: str
    described: str = Field(
        default="x",
        description='! llm("fast")',
    )


class Broken(TreeNode):
    """Intro.

    ! @each [items]->task.x@{{value.a=items}}*
    """

    items: list[str] = Field(description="! resample(0)")


FILE = __file__
SOURCE_LINES = Path(FILE).read_text().splitlines()


def line_of(snippet: str, after: int = 0) -> int:
    """The 1-based line of this file where ``snippet`` first stands after line ``after``."""
    return next(i for i, line in enumerate(SOURCE_LINES, 1) if i > after and snippet in line)


CLASS_LINE = line_of("class Documented(TreeNode):")
BROKEN_LINE = line_of("class Broken(TreeNode):")


def column_after(snippet: str, line: int) -> int:
    """The 0-based column just after ``snippet`` on a line of this file."""
    text = SOURCE_LINES[line - 1]
    return text.index(snippet) + len(snippet)


def test_origins_point_at_the_docstring_and_descriptions() -> None:
    origins = class_origins(Documented)
    described = line_of("! llm(", after=CLASS_LINE)

    assert origins == {
        None: Origin(
            class_name="Documented",
            file=FILE,
            line=CLASS_LINE + 1,
            column=column_after('"""', CLASS_LINE + 1),
        ),
        "plain": Origin(
            class_name="Documented", field_name="plain", file=FILE, line=line_of("    plain: str")
        ),
        "described": Origin(
            class_name="Documented",
            field_name="described",
            file=FILE,
            line=described,
            column=column_after("description='", described),
        ),
    }


class Inheriting(Documented):
    extra: int = Field(default=0, description="An extra number.")


def test_inherited_fields_keep_the_base_class_origin() -> None:
    origins = class_origins(Inheriting)

    assert origins[None] == Origin(
        class_name="Inheriting", file=FILE, line=line_of("class Inheriting(Documented):")
    )
    assert origins["plain"].class_name == "Documented"
    assert origins["plain"].line == line_of("    plain: str")
    assert origins["extra"].line == line_of('extra: int = Field(default=0, description="An')


def test_class_made_without_source_has_no_file() -> None:
    cls = type("Dynamic", (TreeNode,), {"__doc__": "! @parallel", "__annotations__": {}})

    assert class_origins(cls) == {None: Origin(class_name="Dynamic")}
    assert Origin(class_name="Dynamic").describe() == "Dynamic"


def test_read_class_texts_keeps_docstring_then_fields() -> None:
    texts = read_class_texts(Documented)

    assert [text.origin.field_name for text in texts] == [None, "plain", "described"]
    assert [len(text.extraction.commands) for text in texts] == [1, 0, 1]
    assert texts[0].extraction.text == "Some text."


def test_read_class_texts_names_class_field_and_file_line_of_a_syntax_error() -> None:
    with pytest.raises(CommandParseError) as caught:
        read_class_texts(Broken)

    assert caught.value.location == f"Broken ({FILE}:{line_of('! @each [items]')})"
    assert (caught.value.line, caught.value.column) == (3, 12)


def test_parse_diagnostics_cover_every_text() -> None:
    diagnostics = class_parse_diagnostics(Broken)
    each = line_of("! @each [items]")
    resample = line_of("! resample(0)")

    assert [(d.field_name, d.line, d.column, d.message) for d in diagnostics] == [
        (
            None,
            each,
            column_after("! @each", each) + 1,  # the space before '['
            "Space before '[' not allowed - use '@each[items]' not '@each [items]'",
        ),
        (
            "items",
            resample,
            column_after("! resample(", resample) + 1,  # the 0
            "resample() argument 'n_times' must be at least 1, got 0",
        ),
    ]
    assert [d.source_line for d in diagnostics] == [
        "    ! @each [items]->task.x@{{value.a=items}}*",
        '    items: list[str] = Field(description="! resample(0)")',
    ]


class Escaped(TreeNode):
    quoted: str = Field(description='Say "hi" then ! nothing\n! resample(0)')


def test_text_that_differs_from_the_file_is_located_within_the_text() -> None:
    diagnostics = class_parse_diagnostics(Escaped)

    assert [(d.line, d.column, d.source_line) for d in diagnostics] == [
        (line_of("class Escaped(TreeNode):") + 1, 12, "! resample(0)")
    ]
