"""Where a class's docstring and field descriptions stand in its file."""

from pathlib import Path

import pytest
from pydantic import Field

from langtree import CommandParseError, TreeNode
from langtree.structure.origins import Origin, class_origins
from langtree.structure.texts import class_parse_diagnostics, read_class_texts


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


def test_origins_point_at_the_docstring_and_descriptions() -> None:
    origins = class_origins(Documented)

    assert origins == {
        None: Origin(class_name="Documented", file=FILE, line=CLASS_LINE + 1),
        "plain": Origin(
            class_name="Documented", field_name="plain", file=FILE, line=line_of("    plain: str")
        ),
        "described": Origin(
            class_name="Documented",
            field_name="described",
            file=FILE,
            line=line_of("! llm(", after=CLASS_LINE),
        ),
    }


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

    assert [(d.field_name, d.line, d.column, d.message) for d in diagnostics] == [
        (
            None,
            line_of("! @each [items]"),
            12,
            "Space before '[' not allowed - use '@each[items]' not '@each [items]'",
        ),
        (
            "items",
            line_of("! resample(0)"),
            12,
            "resample() argument 'n_times' must be at least 1, got 0",
        ),
    ]
