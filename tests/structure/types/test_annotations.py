"""Reading type annotations: what each reader answers, and how annotations are named."""

import collections
import typing
from collections.abc import (
    Callable,
    Mapping,
    MutableMapping,
    MutableSequence,
    MutableSet,
    Sequence,
    Set,
)
from enum import Enum
from types import NoneType
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel

from langtree import TreeNode
from langtree.structure.types import _annotations as annotations


class Section(TreeNode):
    title: str


class Plain(BaseModel):
    value: int


class Color(Enum):
    RED = "red"


# --- Annotated and Optional ----------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        pytest.param(int, int, id="plain"),
        pytest.param(Annotated[int, "meta"], int, id="annotated"),
        pytest.param(Annotated[Annotated[int, "a"], "b"], int, id="nested-annotated"),
        pytest.param(None, NoneType, id="none-is-nonetype"),
        pytest.param(Annotated[int | None, "meta"], int | None, id="keeps-union"),
        pytest.param(list[Annotated[int, "meta"]], list[Annotated[int, "meta"]], id="outer-only"),
    ],
)
def test_strip_annotated(annotation: object, expected: object) -> None:
    assert annotations.strip_annotated(annotation) == expected


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        pytest.param(int, (int, False), id="plain"),
        pytest.param(int | None, (int, True), id="pipe-none"),
        pytest.param(typing.Optional[int], (int, True), id="Optional"),  # noqa: UP045
        pytest.param(typing.Union[None, int], (int, True), id="none-first"),  # noqa: UP007
        pytest.param(int | str | None, (int | str, True), id="union-remains"),
        pytest.param(int | str, (int | str, False), id="union-without-none"),
        pytest.param(Annotated[int | None, "m"], (int, True), id="annotated-outside"),
        pytest.param(Annotated[int, "m"] | None, (int, True), id="annotated-member"),
        pytest.param(list[int] | None, (list[int], True), id="list-kept"),
        pytest.param(list[int | None], (list[int | None], False), id="inner-none-kept"),
        pytest.param(None, (NoneType, False), id="bare-none"),
    ],
)
def test_strip_optional(annotation: object, expected: tuple[object, bool]) -> None:
    assert annotations.strip_optional(annotation) == expected


# --- Unions and literals -------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        pytest.param(int | str, (int, str), id="pipe"),
        pytest.param(typing.Union[int, str], (int, str), id="Union"),  # noqa: UP007
        pytest.param(typing.Optional[int], (int, NoneType), id="Optional"),  # noqa: UP045
        pytest.param(int, None, id="class"),
        pytest.param(list[int | str], None, id="union-inside"),
        pytest.param(Literal["a", "b"], None, id="literal"),
    ],
)
def test_union_members(annotation: object, expected: tuple[object, ...] | None) -> None:
    assert annotations.union_members(annotation) == expected


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        pytest.param(Literal["a", 1], ("a", 1), id="literal"),
        pytest.param(Literal[Color.RED], (Color.RED,), id="enum-member"),
        pytest.param(str, None, id="class"),
        pytest.param(Literal["a"] | None, None, id="optional-literal"),
    ],
)
def test_literal_values(annotation: object, expected: tuple[object, ...] | None) -> None:
    assert annotations.literal_values(annotation) == expected


# --- Classes -------------------------------------------------------------------------


CLASS_PREDICATES = [
    pytest.param(annotations.is_class, int, True, id="class-int"),
    pytest.param(annotations.is_class, Section, True, id="class-model"),
    pytest.param(annotations.is_class, Any, False, id="class-any"),
    pytest.param(annotations.is_class, list[int], False, id="class-generic-alias"),
    pytest.param(annotations.is_class, int | None, False, id="class-union"),
    pytest.param(annotations.is_class, "int", False, id="class-string"),
    pytest.param(annotations.is_model, Section, True, id="model-tree-node"),
    pytest.param(annotations.is_model, Plain, True, id="model-base-model"),
    pytest.param(annotations.is_model, BaseModel, True, id="model-base-model-itself"),
    pytest.param(annotations.is_model, dict, False, id="model-dict"),
    pytest.param(annotations.is_model, Section | None, False, id="model-optional"),
    pytest.param(annotations.is_model, list[Section], False, id="model-list-of-models"),
    pytest.param(annotations.is_model, Any, False, id="model-any"),
    pytest.param(annotations.is_enum, Color, True, id="enum-enum"),
    pytest.param(annotations.is_enum, Enum, True, id="enum-itself"),
    pytest.param(annotations.is_enum, str, False, id="enum-str"),
    pytest.param(annotations.is_enum, Color | None, False, id="enum-optional"),
    pytest.param(annotations.is_enum, Literal[Color.RED], False, id="enum-literal"),
    pytest.param(annotations.is_enum, Any, False, id="enum-any"),
]


@pytest.mark.parametrize(("predicate", "annotation", "expected"), CLASS_PREDICATES)
def test_class_predicate(
    predicate: Callable[[object], bool], annotation: object, expected: bool
) -> None:
    assert predicate(annotation) is expected


# --- Containers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        pytest.param(list[int], "list", id="list"),
        pytest.param(typing.List[int], "list", id="List"),  # noqa: UP006
        pytest.param(list, "list", id="bare-list"),
        pytest.param(MutableSequence[int], "list", id="mutable-sequence"),
        pytest.param(tuple[int, ...], "tuple", id="tuple"),
        pytest.param(Sequence[int], "sequence", id="sequence"),
        pytest.param(set[int], "set", id="set"),
        pytest.param(Set[int], "set", id="abc-set"),
        pytest.param(MutableSet[int], "set", id="mutable-set"),
        pytest.param(frozenset[int], "frozenset", id="frozenset"),
        pytest.param(str, None, id="str"),
        pytest.param(dict[str, int], None, id="dict"),
        pytest.param(collections.deque[int], None, id="deque"),
        pytest.param(list[int] | None, None, id="optional-list"),
    ],
)
def test_sequence_kind(annotation: object, expected: str | None) -> None:
    assert annotations.sequence_kind(annotation) == expected


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        pytest.param(list[int], int, id="list"),
        pytest.param(tuple[int, ...], int, id="variadic-tuple"),
        pytest.param(tuple[int, str], int | str, id="fixed-tuple-union"),
        pytest.param(tuple[int, int], int, id="fixed-tuple-same"),
        pytest.param(set[Section], Section, id="set-of-models"),
        pytest.param(list, Any, id="bare-list"),
        pytest.param(list[int | None], int | None, id="optional-items"),
    ],
)
def test_item_type(annotation: object, expected: object) -> None:
    assert annotations.item_type(annotation) == expected


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        pytest.param(list[str], str, id="list"),
        pytest.param(list[list[Section]], list[Section], id="one-level"),
        pytest.param(tuple[Section, ...], Section, id="variadic-tuple"),
        pytest.param(tuple[Section, Section], Section, id="homogeneous-tuple"),
        pytest.param(tuple[Section], Section, id="one-item-tuple"),
        pytest.param(Sequence[Section], Section, id="sequence"),
        pytest.param(MutableSequence[str], str, id="mutable-sequence"),
        pytest.param(typing.List[str], str, id="List"),  # noqa: UP006
        pytest.param(list[Section | None], Section | None, id="optional-items"),
        pytest.param(list, Any, id="bare-list"),
        pytest.param(tuple, Any, id="bare-tuple"),
        pytest.param(typing.List, Any, id="bare-List"),  # noqa: UP006
        pytest.param(typing.Tuple, Any, id="bare-Tuple"),  # noqa: UP006
        pytest.param(Sequence, Any, id="bare-sequence"),
        pytest.param(typing.Sequence, Any, id="bare-typing-Sequence"),
        pytest.param(tuple[int, str], None, id="mixed-tuple"),
        pytest.param(tuple[()], None, id="empty-tuple"),
        pytest.param(collections.deque[Section], None, id="deque"),
        pytest.param(set[str], None, id="set"),
        pytest.param(frozenset[str], None, id="frozenset"),
        pytest.param(set, None, id="bare-set"),
        pytest.param(Set[str], None, id="abc-set"),
        pytest.param(dict, None, id="bare-dict"),
        pytest.param(dict[str, Section], None, id="dict"),
        pytest.param(Mapping[str, Section], None, id="mapping"),
        pytest.param(str, None, id="str"),
        pytest.param(list[Section] | None, None, id="optional-list"),
        pytest.param(Annotated[list[Section], "meta"], None, id="annotated-list"),
    ],
)
def test_uniform_item_type(annotation: object, expected: object) -> None:
    assert annotations.uniform_item_type(annotation) == expected


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        pytest.param(tuple[int, str], (int, str), id="fixed"),
        pytest.param(typing.Tuple[int], (int,), id="Tuple-one"),  # noqa: UP006
        pytest.param(tuple[int, ...], None, id="variadic"),
        pytest.param(tuple, None, id="bare-tuple"),
        pytest.param(list[int], None, id="list"),
    ],
)
def test_fixed_tuple_types(annotation: object, expected: tuple[object, ...] | None) -> None:
    assert annotations.fixed_tuple_types(annotation) == expected


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        pytest.param(dict[str, int], (str, int), id="dict"),
        pytest.param(typing.Dict[str, int], (str, int), id="Dict"),  # noqa: UP006
        pytest.param(Mapping[str, Section], (str, Section), id="mapping"),
        pytest.param(MutableMapping[int, str], (int, str), id="mutable-mapping"),
        pytest.param(dict, (Any, Any), id="bare-dict"),
        pytest.param(list[int], None, id="list"),
        pytest.param(Section, None, id="model"),
        pytest.param(dict[str, int] | None, None, id="optional-dict"),
    ],
)
def test_mapping_types(annotation: object, expected: tuple[object, object] | None) -> None:
    assert annotations.mapping_types(annotation) == expected


# --- Rendering -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        pytest.param(dict[str, str], "dict[str, str]", id="dict"),
        pytest.param(typing.List[Section], "list[Section]", id="List-of-model"),  # noqa: UP006
        pytest.param(typing.Optional[int], "int | None", id="optional"),  # noqa: UP045
        pytest.param(Annotated[int, "meta"], "int", id="annotated"),
        pytest.param(tuple[int, ...], "tuple[int, ...]", id="tuple"),
        pytest.param(Sequence[str], "Sequence[str]", id="abc-sequence"),
        pytest.param(Literal["a", 1], "Literal['a', 1]", id="literal"),
        pytest.param(Literal[Color.RED], "Literal[Color.RED]", id="enum-literal"),
        pytest.param(Any, "Any", id="any"),
        pytest.param(None, "None", id="none"),
        pytest.param(dict, "dict", id="bare-dict"),
    ],
)
def test_render_type(annotation: object, expected: str) -> None:
    assert annotations.render_type(annotation) == expected
