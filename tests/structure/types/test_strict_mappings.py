"""The ``exact`` strategy: no implicit coercion in ``value`` mappings, and the checks of a
source that may be ``None`` (docs/dsl.md, "Null, absent and strict mappings")."""

from enum import Enum
from pathlib import Path
from typing import Any, Dict, Literal  # noqa: UP035 - typing.Dict is what is checked

import pytest
from pydantic import Field

from langtree import RunStructure, StructureError, TreeNode, TypeMappingConfig, ValidationStrategy
from langtree.errors import ConversionError
from langtree.structure.types._compatibility import (
    CompatibilityLevel,
    TypeProblem,
    check_mapping,
    needs_no_conversion,
)
from langtree.structure.types._conversion import accepts_none, check_exact, convert_value

EXACT = TypeMappingConfig(validation_strategy=ValidationStrategy.EXACT)
STRICT = TypeMappingConfig()
PERMISSIVE = TypeMappingConfig(validation_strategy=ValidationStrategy.PERMISSIVE)
SAFE, LOSSY, UNSAFE = CompatibilityLevel.SAFE, CompatibilityLevel.LOSSY, CompatibilityLevel.UNSAFE


class Color(Enum):
    RED = "red"


def exact_problem(source: object, target: object) -> TypeProblem | None:
    return check_mapping("a.x", source, "b.y", target, EXACT)


# -- validate(): what exact allows -------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "target"),
    [
        pytest.param(str, str, id="equal"),
        pytest.param(str, str | None, id="target-adds-none"),
        pytest.param(int, int | str, id="target-union"),
        pytest.param(list[str], list[Any], id="any-inside"),
        pytest.param(dict[str, int], Dict[str, int], id="typing-alias"),  # noqa: UP006
        pytest.param(Literal["a", "b"], str, id="literal-into-its-type"),
        pytest.param(Literal["a"], Literal["a", "b"], id="literal-into-literal"),
        pytest.param(Color, object, id="object"),
    ],
)
def test_exact_allows_a_mapping_that_converts_nothing(source: object, target: object) -> None:
    assert needs_no_conversion(source, target)
    assert exact_problem(source, target) is None


STRICT_HINT = (
    "change the field types, or allow the conversion with "
    "RunStructure({'validation_strategy': 'strict'})"
)


@pytest.mark.parametrize(
    ("source", "target", "level", "hint"),
    [
        pytest.param(int, float, SAFE, STRICT_HINT, id="int-to-float"),
        pytest.param(Color, str, SAFE, STRICT_HINT, id="enum-to-str"),
        pytest.param(list[int], tuple[int, ...], SAFE, STRICT_HINT, id="list-to-tuple"),
        pytest.param(Literal[True], int, LOSSY, None, id="bool-literal-to-int"),
        pytest.param(Any, str, UNSAFE, None, id="any-source"),
    ],
)
def test_exact_refuses_every_conversion_a_safe_one_too(
    source: object, target: object, level: CompatibilityLevel, hint: str | None
) -> None:
    problem = exact_problem(source, target)

    assert problem is not None
    assert (problem.level, problem.is_warning) == (level, False)
    assert problem.message.endswith(f": {level.label} conversion not allowed by exact strategy")
    assert hint is None or problem.hint == hint


def test_the_hint_names_the_strictest_strategy_that_allows_the_mapping() -> None:
    hints = [exact_problem(s, t).hint for s, t in [(float, int), (Any, str)]]  # type: ignore[union-attr]

    assert hints == [
        "change the field types, or allow the conversion with "
        "RunStructure({'validation_strategy': 'permissive'})",
        "change the field types, or allow the conversion with "
        "RunStructure({'validation_strategy': 'development'})",
    ]


class TaskCount(TreeNode):
    """! @all->task.tally@{{value.total=count}}"""

    count: int = Field(description="The count.")


class TaskTally(TreeNode):
    total: float = Field(description="The total.")


def line_of(text: str) -> int:
    lines = Path(__file__).read_text().splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({"validation_strategy": "exact"}, id="dict"),
        pytest.param({"validation_strategy": "EXACT"}, id="dict-any-case"),
        pytest.param(EXACT, id="instance"),
    ],
)
def test_validate_refuses_an_int_into_a_float_under_exact(config: object) -> None:
    structure = RunStructure(config)  # type: ignore[arg-type]
    structure.add(TaskCount)
    structure.add(TaskTally)

    with pytest.raises(StructureError) as raised:
        structure.validate()

    assert str(raised.value) == (
        "LangTree found 1 problem:\n\n"
        "error: Type incompatibility in variable mapping from task.count.count (int) to "
        "task.tally.total (float): safe conversion not allowed by exact strategy\n"
        '        """! @all->task.tally@{{value.total=count}}"""\n'
        "                                ^~~~~~~~~~~~~~~~~\n"
        f"  in TaskCount ({__file__}:{line_of('! @all->task.tally@')})\n"
        f"  hint: {STRICT_HINT}"
    )


def test_the_same_tree_validates_under_strict() -> None:
    structure = RunStructure()
    structure.add(TaskCount)
    structure.add(TaskTally)

    assert structure.validate() == ()


def test_a_misspelt_exact_suggests_it() -> None:
    with pytest.raises(StructureError) as raised:
        RunStructure({"validation_strategy": "exakt"})

    assert [(d.message, d.hint) for d in raised.value.diagnostics] == [
        (
            "'validation_strategy' must be one of 'strict', 'permissive', 'development', "
            "'exact', got 'exakt'",
            "did you mean 'exact'? pass a ValidationStrategy or the name of one",
        )
    ]


def test_an_unknown_setting_still_suggests_the_closest() -> None:
    with pytest.raises(StructureError) as raised:
        RunStructure({"validation_strategie": "exact"})

    assert [(d.message, d.hint) for d in raised.value.diagnostics] == [
        ("Unknown setting 'validation_strategie'", "did you mean 'validation_strategy'?")
    ]


# -- validate(): a source that may be None -----------------------------------------------


@pytest.mark.parametrize(
    ("config", "is_warning", "hint"),
    [
        pytest.param(
            STRICT,
            False,
            "the source may be None, which list[str] does not accept: declare the target "
            "as list[str] | None, or give the source a type without None",
            id="strict-error",
        ),
        pytest.param(
            EXACT,
            False,
            "the source may be None, which list[str] does not accept: declare the target "
            "as list[str] | None, or give the source a type without None",
            id="exact-error",
        ),
        pytest.param(
            PERMISSIVE,
            True,
            "a None from the source stops the run with an ExecutionError; declare the "
            "target as list[str] | None to pass it on",
            id="permissive-warning",
        ),
    ],
)
def test_an_optional_source_into_a_target_without_none_names_the_none(
    config: TypeMappingConfig, is_warning: bool, hint: str
) -> None:
    problem = check_mapping("a.x", list[str] | None, "b.y", list[str], config)

    assert problem is not None
    assert (problem.level, problem.is_warning, problem.hint) == (LOSSY, is_warning, hint)


def test_an_optional_source_that_also_needs_a_conversion_gets_the_usual_hint() -> None:
    problem = exact_problem(int | None, float)

    assert problem is not None
    assert problem.hint == STRICT_HINT.replace("'strict'", "'permissive'")


# -- run time: a value checked, never converted ------------------------------------------


class Point(TreeNode):
    x: int = Field(description="x")
    pair: tuple[int, int] = Field(description="A pair.")


@pytest.mark.parametrize(
    ("value", "target"),
    [
        pytest.param([1, 2], tuple[int, int], id="list-as-tuple"),
        pytest.param({"x": 1, "pair": [1, 2]}, Point, id="node-as-dict"),
        pytest.param(3, float, id="int-as-float"),
        pytest.param("red", Color, id="enum-value"),
        pytest.param(None, str | None, id="none"),
    ],
)
def test_exact_keeps_a_value_of_the_target_type_as_it_is(value: object, target: object) -> None:
    assert convert_value(value, target, EXACT) is value


@pytest.mark.parametrize(
    ("value", "target", "message"),
    [
        pytest.param(
            "3",
            int,
            "'3' is not a value of int (the exact strategy converts nothing): Input should "
            "be a valid integer",
            id="str-to-int",
        ),
        pytest.param(
            3,
            str,
            "3 is not a value of str (the exact strategy converts nothing): Input should be "
            "a valid string",
            id="int-to-str",
        ),
        pytest.param(
            {"x": "1", "pair": [1, "2"]},
            Point,
            "{'x': '1', 'pair': [1, '2']} is not a value of Point (the exact strategy "
            "converts nothing): x: Input should be a valid integer (and 1 more)",
            id="node-field",
        ),
    ],
)
def test_exact_refuses_a_value_that_would_need_a_conversion(
    value: object, target: object, message: str
) -> None:
    with pytest.raises(ConversionError) as raised:
        check_exact(value, target)

    assert str(raised.value) == message


def test_strict_converts_what_exact_refuses() -> None:
    assert convert_value("3", int, STRICT) == 3


@pytest.mark.parametrize(
    ("target", "accepts"),
    [
        pytest.param(str | None, True, id="optional"),
        pytest.param(Any, True, id="any"),
        pytest.param(Literal["a", None], True, id="literal-none"),
        pytest.param(str, False, id="str"),
        pytest.param(list[str | None], False, id="list-of-optional"),
    ],
)
def test_accepts_none(target: object, accepts: bool) -> None:
    assert accepts_none(target) is accepts
