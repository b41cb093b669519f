"""Type compatibility of value mappings, the settings that tune it, and run-time conversion."""

import math
import typing
from collections.abc import Mapping, Sequence
from datetime import date
from decimal import Decimal
from enum import Enum, IntEnum
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langtree import StructureError, TreeNode
from langtree.errors import ConversionError
from langtree.structure.types._compatibility import (
    CompatibilityLevel,
    TypeProblem,
    check_mapping,
    compatibility,
)
from langtree.structure.types._conversion import convert_value
from langtree.structure.types._type_config import (
    TYPE_MAPPING_KEYS,
    TypeMappingConfig,
    ValidationStrategy,
)

IDENTICAL, SAFE, LOSSY, UNSAFE, FORBIDDEN = CompatibilityLevel

STRICT = TypeMappingConfig()
PERMISSIVE = TypeMappingConfig(validation_strategy=ValidationStrategy.PERMISSIVE)
DEVELOPMENT = TypeMappingConfig(validation_strategy=ValidationStrategy.DEVELOPMENT)
NO_PARSING = TypeMappingConfig(allow_string_parsing=False)
NO_DICTS = TypeMappingConfig(allow_treenode_dict_conversion=False)
LENIENT_BOOLS = TypeMappingConfig(strict_bool_parsing=False)


class ConfigComplex(TreeNode):
    name: str
    retries: int
    tags: list[str]


class Labels(TreeNode):
    title: str
    body: str


class Section(TreeNode):
    title: str


class Appendix(Section):
    page: int = 1


class Report(TreeNode):
    sections: list[Section]


class Other(TreeNode):
    title: str


class Color(Enum):
    RED = "red"
    GREEN = "green"


class Shade(Enum):
    RED = "red"


class Priority(Enum):
    LOW = 1
    HIGH = 2


class Level(IntEnum):
    ONE = 1


class Opaque:
    def __repr__(self) -> str:
        return "Opaque()"


# --- Levels --------------------------------------------------------------------------

LEVELS = [
    # IDENTICAL
    pytest.param(str, str, IDENTICAL, id="str-str"),
    pytest.param(Section, Section, IDENTICAL, id="model-same-model"),
    pytest.param(typing.List[str], list[str], IDENTICAL, id="List-is-list"),  # noqa: UP006
    pytest.param(typing.Dict[str, int], dict[str, int], IDENTICAL, id="Dict-is-dict"),  # noqa: UP006
    pytest.param(Annotated[int, "meta"], int, IDENTICAL, id="annotated-stripped"),
    pytest.param(list[Annotated[int, "meta"]], list[int], IDENTICAL, id="annotated-item"),
    pytest.param(int, int | None, IDENTICAL, id="x-to-optional-x"),
    pytest.param(typing.Optional[int], int | None, IDENTICAL, id="Optional-is-union"),  # noqa: UP045
    pytest.param(int | str, str | int, IDENTICAL, id="union-member-order"),
    pytest.param(Literal["a", "b"], Literal["b", "a"], IDENTICAL, id="literal-same-values"),
    pytest.param(Any, Any, IDENTICAL, id="any-any"),
    pytest.param(None, None, IDENTICAL, id="none-none"),
    # SAFE
    pytest.param(int, float, SAFE, id="int-float"),
    pytest.param(Appendix, Section, SAFE, id="subclass-base"),
    pytest.param(Level, int, SAFE, id="intenum-int"),
    pytest.param(int, str, SAFE, id="int-str"),
    pytest.param(list[int], str, SAFE, id="list-str"),
    pytest.param(ConfigComplex, str, SAFE, id="model-str"),
    pytest.param(Color, str, SAFE, id="enum-str"),
    pytest.param(Section, dict, SAFE, id="model-bare-dict"),
    pytest.param(ConfigComplex, dict[str, Any], SAFE, id="model-dict-str-any"),
    pytest.param(Labels, dict[str, str], SAFE, id="all-str-model-dict-str-str"),
    pytest.param(ConfigComplex, dict[str, str | int | list[str]], SAFE, id="model-dict-union"),
    pytest.param(Report, dict[str, list[dict[str, str]]], SAFE, id="nested-model-dict"),
    pytest.param(Literal["a"], str, SAFE, id="literal-base-type"),
    pytest.param(Literal[1, 2], float, SAFE, id="int-literal-float"),
    pytest.param(Literal["a"], Literal["a", "b"], SAFE, id="literal-subset"),
    pytest.param(int, Any, SAFE, id="int-any"),
    pytest.param(list[int], Any, SAFE, id="list-any"),
    pytest.param(list[int], list[float], SAFE, id="list-items-widen"),
    pytest.param(list[str], tuple[str, ...], SAFE, id="list-tuple"),
    pytest.param(tuple[str, ...], Sequence[str], SAFE, id="tuple-sequence"),
    pytest.param(Sequence[str], list[str], SAFE, id="sequence-list"),
    pytest.param(set[int], list[int], SAFE, id="set-list"),
    pytest.param(set[int], frozenset[int], SAFE, id="set-frozenset"),
    pytest.param(dict[str, int], Mapping[str, int], SAFE, id="dict-mapping"),
    pytest.param(dict[str, int], dict, SAFE, id="typed-dict-bare-dict"),
    pytest.param(int, str | list[int], SAFE, id="union-target-best"),
    pytest.param(int | list[int], str, SAFE, id="union-source-all-fit"),
    # LOSSY
    pytest.param(float, int, LOSSY, id="float-int"),
    pytest.param(bool, int, LOSSY, id="bool-int"),
    pytest.param(bool, float, LOSSY, id="bool-float"),
    pytest.param(int | None, int, LOSSY, id="optional-x-to-x"),
    pytest.param(None, str, LOSSY, id="none-str"),
    pytest.param(str, int, LOSSY, id="str-int"),
    pytest.param(str, float, LOSSY, id="str-float"),
    pytest.param(str, bool, LOSSY, id="str-bool"),
    pytest.param(str, dict[str, int], LOSSY, id="str-dict"),
    pytest.param(str, list[int], LOSSY, id="str-list"),
    pytest.param(str, Color, LOSSY, id="str-enum"),
    pytest.param(str, Section, LOSSY, id="str-model"),
    pytest.param(dict[str, Any], Section, LOSSY, id="dict-model"),
    pytest.param(str, Literal["a", "b"], LOSSY, id="str-literal"),
    pytest.param(int, Priority, LOSSY, id="int-int-valued-enum"),
    pytest.param(list[int], set[int], LOSSY, id="list-set"),
    pytest.param(list[float], list[int], LOSSY, id="list-items-narrow"),
    pytest.param(list[int], tuple[int, int], LOSSY, id="list-fixed-tuple"),
    # UNSAFE
    pytest.param(Section, Other, UNSAFE, id="model-other-model"),
    pytest.param(int, bool, UNSAFE, id="int-bool"),
    pytest.param(float, bool, UNSAFE, id="float-bool"),
    pytest.param(Any, int, UNSAFE, id="any-int"),
    pytest.param(Any, str, UNSAFE, id="any-str"),
    pytest.param(Color, Shade, UNSAFE, id="enum-other-enum"),
    pytest.param(dict, dict[str, int], UNSAFE, id="bare-dict-typed-dict"),
    # FORBIDDEN
    pytest.param(list[int], dict[str, int], FORBIDDEN, id="list-dict"),
    pytest.param(dict[str, int], list[int], FORBIDDEN, id="dict-list"),
    pytest.param(int, list[int], FORBIDDEN, id="scalar-list"),
    pytest.param(int, dict, FORBIDDEN, id="scalar-dict"),
    pytest.param(Section, int, FORBIDDEN, id="model-int"),
    pytest.param(Section, list[Section], FORBIDDEN, id="model-list"),
    pytest.param(ConfigComplex, dict[str, str], FORBIDDEN, id="model-dict-str-str"),
    pytest.param(Section, dict[int, str], FORBIDDEN, id="model-dict-int-keys"),
    pytest.param(int, None, FORBIDDEN, id="x-none"),
    pytest.param(list[int], Literal["a"], FORBIDDEN, id="list-literal"),
    pytest.param(Literal["c"], Literal["a", "b"], FORBIDDEN, id="literal-other-values"),
    pytest.param(float, Color, FORBIDDEN, id="float-str-valued-enum"),
    pytest.param(list[int], list[dict[str, int]], FORBIDDEN, id="list-items-forbidden"),
    pytest.param(tuple[int, int], tuple[int, int, int], FORBIDDEN, id="fixed-tuple-length"),
    pytest.param(int | list[int], int, FORBIDDEN, id="union-source-one-misfits"),
    pytest.param(str, int | None, LOSSY, id="union-target-str-parsing"),
]


@pytest.mark.parametrize(("source", "target", "expected"), LEVELS)
def test_compatibility_level(source: object, target: object, expected: CompatibilityLevel) -> None:
    assert compatibility(source, target, STRICT) is expected


def test_levels_are_ordered_from_identical_to_forbidden() -> None:
    assert sorted(CompatibilityLevel, reverse=True) == [FORBIDDEN, UNSAFE, LOSSY, SAFE, IDENTICAL]


ALLOWED_LEVELS = {
    ValidationStrategy.STRICT: {IDENTICAL, SAFE},
    ValidationStrategy.PERMISSIVE: {IDENTICAL, SAFE, LOSSY},
    ValidationStrategy.DEVELOPMENT: {IDENTICAL, SAFE, LOSSY, UNSAFE},
}
STRATEGIES = [
    pytest.param(level, strategy, level in allowed, id=f"{level.label}-{strategy.value}")
    for strategy, allowed in ALLOWED_LEVELS.items()
    for level in CompatibilityLevel
]


@pytest.mark.parametrize(("level", "strategy", "allowed"), STRATEGIES)
def test_strategy_allows_levels_up_to_its_worst(
    level: CompatibilityLevel, strategy: ValidationStrategy, allowed: bool
) -> None:
    assert level.allowed_by(strategy) is allowed


PARSED_TARGETS = [
    pytest.param(int, id="int"),
    pytest.param(float, id="float"),
    pytest.param(bool, id="bool"),
    pytest.param(Color, id="enum"),
    pytest.param(dict[str, int], id="dict"),
    pytest.param(list[int], id="list"),
    pytest.param(Section, id="model"),
]


@pytest.mark.parametrize("target", PARSED_TARGETS)
def test_disabled_string_parsing_forbids_parsing(target: object) -> None:
    assert compatibility(str, target, NO_PARSING) is FORBIDDEN


def test_disabled_string_parsing_keeps_str_to_literal() -> None:
    assert compatibility(str, Literal["a"], NO_PARSING) is LOSSY


@pytest.mark.parametrize(
    ("source", "target"),
    [
        pytest.param(Section, dict, id="model-dict"),
        pytest.param(dict[str, str], Section, id="dict-model"),
    ],
)
def test_disabled_model_dict_conversion_forbids_it(source: object, target: object) -> None:
    assert compatibility(source, target, NO_DICTS) is FORBIDDEN


def test_disabled_model_dict_conversion_keeps_model_to_str() -> None:
    assert compatibility(Section, str, NO_DICTS) is SAFE


# --- Checking a mapping --------------------------------------------------------------


def test_spec_example_message_for_model_into_str_dict() -> None:
    problem = check_mapping(
        "task.source.field_name", ConfigComplex, "task.target.config", dict[str, str], STRICT
    )

    assert problem == TypeProblem(
        level=FORBIDDEN,
        is_warning=False,
        message=(
            "Type incompatibility in variable mapping from task.source.field_name"
            " (ConfigComplex) to task.target.config (dict[str, str]):"
            " forbidden conversion not allowed by strict strategy"
        ),
        hint=(
            "declare the target as dict[str, Any] (model_dump() keeps each field's own type)"
            " or as ConfigComplex"
        ),
    )


def test_safe_mapping_has_no_problem() -> None:
    assert check_mapping("a.count", int, "b.amount", float, STRICT) is None


def test_lossy_mapping_under_strict_is_an_error_naming_permissive() -> None:
    problem = check_mapping("a.amount", float, "b.count", int, STRICT)

    assert problem == TypeProblem(
        level=LOSSY,
        is_warning=False,
        message=(
            "Type incompatibility in variable mapping from a.amount (float) to b.count (int):"
            " lossy conversion not allowed by strict strategy"
        ),
        hint=(
            "change the field types, or allow the conversion with"
            " RunStructure({'validation_strategy': 'permissive'})"
        ),
    )


def test_lossy_mapping_under_permissive_is_a_warning() -> None:
    problem = check_mapping("a.amount", float, "b.count", int, PERMISSIVE)

    assert problem == TypeProblem(
        level=LOSSY,
        is_warning=True,
        message=(
            "Type incompatibility in variable mapping from a.amount (float) to b.count (int):"
            " lossy conversion allowed by permissive strategy"
        ),
        hint=(
            "values that do not convert raise ConversionError at run time;"
            " change the field types to make the conversion safe"
        ),
    )


@pytest.mark.parametrize(
    ("config", "is_warning"),
    [
        pytest.param(PERMISSIVE, False, id="permissive-error"),
        pytest.param(DEVELOPMENT, True, id="development-warning"),
    ],
)
def test_unsafe_mapping_needs_development(config: TypeMappingConfig, is_warning: bool) -> None:
    problem = check_mapping("a.section", Section, "b.other", Other, config)

    assert problem is not None
    assert problem.is_warning is is_warning


def test_unsafe_mapping_hint_names_development() -> None:
    problem = check_mapping("a.section", Section, "b.other", Other, STRICT)

    assert problem is not None
    assert problem.hint == (
        "change the field types, or allow the conversion with"
        " RunStructure({'validation_strategy': 'development'})"
    )


def test_forbidden_mapping_under_development_is_an_error() -> None:
    problem = check_mapping("a.items", list[int], "b.table", dict[str, int], DEVELOPMENT)

    assert problem is not None
    assert problem.message.endswith("forbidden conversion not allowed by development strategy")


def test_forbidden_mapping_hint_asks_for_other_types() -> None:
    problem = check_mapping("a.items", list[int], "b.table", dict[str, int], STRICT)

    assert problem is not None
    assert problem.hint == (
        "change the field types: list[int] cannot be converted to dict[str, int]"
        " (see langtree.structure.types._compatibility)"
    )


def test_disabled_option_hint_names_the_option() -> None:
    problem = check_mapping("a.text", str, "b.count", int, NO_PARSING)

    assert problem is not None
    assert problem.hint == (
        "change the field types, or allow the conversion with"
        " RunStructure({'allow_string_parsing': True, 'validation_strategy': 'permissive'})"
    )


def test_disabled_option_hint_under_permissive_names_only_the_option() -> None:
    config = TypeMappingConfig(
        validation_strategy=ValidationStrategy.PERMISSIVE, allow_treenode_dict_conversion=False
    )
    problem = check_mapping("a.section", Section, "b.data", dict, config)

    assert problem is not None
    assert problem.hint == (
        "change the field types, or allow the conversion with"
        " RunStructure({'allow_treenode_dict_conversion': True})"
    )


def test_disabled_type_validation_reports_nothing() -> None:
    config = TypeMappingConfig(enable_type_validation=False)

    assert check_mapping("a.items", list[int], "b.table", dict[str, int], config) is None


# --- Settings ------------------------------------------------------------------------


def test_type_mapping_keys_are_the_config_fields() -> None:
    assert sorted(TYPE_MAPPING_KEYS) == [
        "allow_string_parsing",
        "allow_treenode_dict_conversion",
        "enable_type_validation",
        "strict_bool_parsing",
        "validation_strategy",
    ]


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        pytest.param({}, TypeMappingConfig(), id="empty"),
        pytest.param({"validation_strategy": "DEVELOPMENT"}, DEVELOPMENT, id="strategy-any-case"),
        pytest.param(
            {"validation_strategy": ValidationStrategy.PERMISSIVE}, PERMISSIVE, id="strategy-enum"
        ),
        pytest.param({"allow_string_parsing": False}, NO_PARSING, id="flag"),
        pytest.param(
            {"validation_strategy": "development", "enable_type_validation": True},
            DEVELOPMENT,
            id="spec-example",
        ),
    ],
)
def test_from_mapping(settings: dict[str, object], expected: TypeMappingConfig) -> None:
    assert TypeMappingConfig.from_mapping(settings) == expected


VALID_SETTINGS = (
    "'allow_string_parsing', 'allow_treenode_dict_conversion', 'enable_type_validation',"
    " 'strict_bool_parsing', 'validation_strategy'"
)


@pytest.mark.parametrize(
    ("settings", "message", "hint"),
    [
        pytest.param(
            {"allow_strng_parsing": True},
            "unknown type mapping setting 'allow_strng_parsing'",
            f"did you mean 'allow_string_parsing'? the settings are {VALID_SETTINGS}",
            id="unknown-close",
        ),
        pytest.param(
            {"colour": True},
            "unknown type mapping setting 'colour'",
            f"the settings are {VALID_SETTINGS}",
            id="unknown-far",
        ),
        pytest.param(
            {"allow_string_parsing": "yes"},
            "'allow_string_parsing' must be true or false, got 'yes'",
            "pass True or False, e.g. RunStructure({'allow_string_parsing': False})",
            id="flag-not-bool",
        ),
        pytest.param(
            {"validation_strategy": "permisive"},
            "'validation_strategy' must be one of 'strict', 'permissive', 'development',"
            " 'exact', got 'permisive'",
            "did you mean 'permissive'? pass a ValidationStrategy or the name of one",
            id="strategy-misspelt",
        ),
        pytest.param(
            {"validation_strategy": 2},
            "'validation_strategy' must be one of 'strict', 'permissive', 'development',"
            " 'exact', got 2",
            "pass a ValidationStrategy or the name of one",
            id="strategy-not-str",
        ),
    ],
)
def test_from_mapping_rejects(settings: dict[str, object], message: str, hint: str) -> None:
    with pytest.raises(StructureError) as caught:
        TypeMappingConfig.from_mapping(settings)

    assert [(d.severity, d.message, d.hint) for d in caught.value.diagnostics] == [
        ("error", message, hint)
    ]


def test_from_mapping_reports_every_problem() -> None:
    settings = {"colour": True, "strict_bool_parsing": 1, "validation_strategy": "loose"}

    with pytest.raises(StructureError) as caught:
        TypeMappingConfig.from_mapping(settings)

    assert len(caught.value.diagnostics) == 3


# --- Conversion ----------------------------------------------------------------------

SECTION = Section(title="t")

CONVERSIONS = [
    pytest.param(3, float, STRICT, 3.0, id="int-float"),
    pytest.param(2.6, int, STRICT, 3, id="float-int-rounds"),
    pytest.param(True, int, STRICT, 1, id="bool-int"),
    pytest.param(SECTION, dict, STRICT, {"title": "t"}, id="model-dict"),
    pytest.param({"title": "t"}, Section, STRICT, SECTION, id="dict-model"),
    pytest.param(SECTION, Other, STRICT, Other(title="t"), id="model-other-model"),
    pytest.param(
        Report(sections=[SECTION]), dict, STRICT, {"sections": [{"title": "t"}]}, id="dump"
    ),
    pytest.param(42, str, STRICT, "42", id="int-str"),
    pytest.param(2.5, str, STRICT, "2.5", id="float-str"),
    pytest.param(True, str, STRICT, "True", id="bool-str"),
    pytest.param(Color.RED, str, STRICT, "red", id="enum-str"),
    pytest.param(Priority.HIGH, str, STRICT, "2", id="int-enum-str"),
    pytest.param(["é", 1], str, STRICT, '["é", 1]', id="list-json"),
    pytest.param({"s": SECTION}, str, STRICT, '{"s": {"title": "t"}}', id="dict-with-model-json"),
    pytest.param(SECTION, str, STRICT, '{"title": "t"}', id="model-json"),
    pytest.param(" 42 ", int, STRICT, 42, id="parse-int"),
    pytest.param("2.5", float, STRICT, 2.5, id="parse-float"),
    pytest.param("TRUE", bool, STRICT, True, id="parse-true-any-case"),
    pytest.param("0", bool, STRICT, False, id="parse-zero"),
    pytest.param("yes", bool, LENIENT_BOOLS, True, id="lenient-yes"),
    pytest.param("Off", bool, LENIENT_BOOLS, False, id="lenient-off"),
    pytest.param('{"a": "1"}', dict[str, int], STRICT, {"a": 1}, id="parse-json-dict"),
    pytest.param("[1, 2]", list[int], STRICT, [1, 2], id="parse-json-list"),
    pytest.param('{"title": "t"}', Section, STRICT, SECTION, id="parse-json-model"),
    pytest.param("red", Color, STRICT, Color.RED, id="enum-by-value"),
    pytest.param("GREEN", Color, STRICT, Color.GREEN, id="enum-by-name"),
    pytest.param(2, Priority, STRICT, Priority.HIGH, id="int-enum-by-value"),
    pytest.param(Shade.RED, Color, STRICT, Color.RED, id="enum-other-enum"),
    pytest.param("red", Color, NO_PARSING, Color.RED, id="enum-value-is-no-parsing"),
    pytest.param("2024-05-01", date, NO_PARSING, date(2024, 5, 1), id="date-from-json-form"),
    pytest.param("1.50", Decimal, STRICT, Decimal("1.50"), id="decimal-from-json-form"),
    pytest.param(["2024-05-01"], list[date], STRICT, [date(2024, 5, 1)], id="json-form-items"),
    pytest.param(["1", "2"], list[int], STRICT, [1, 2], id="list-items"),
    pytest.param([1, 2], tuple[float, ...], STRICT, (1.0, 2.0), id="list-tuple"),
    pytest.param([1, 1], set[int], STRICT, {1}, id="list-set"),
    pytest.param(("1", 2), tuple[int, str], STRICT, (1, "2"), id="fixed-tuple"),
    pytest.param((1, 2), Sequence[int], STRICT, [1, 2], id="sequence-becomes-list"),
    pytest.param(None, int | None, STRICT, None, id="none-optional"),
    pytest.param("5", typing.Optional[int], STRICT, 5, id="value-optional"),  # noqa: UP045
    pytest.param("a", Literal["a", "b"], STRICT, "a", id="literal"),
    pytest.param("1", Literal[1, 2], STRICT, 1, id="literal-parsed"),
    pytest.param(1, bool, STRICT, True, id="one-bool"),
    pytest.param(0.0, bool, STRICT, False, id="zero-float-bool"),
    pytest.param("3", Annotated[int, "meta"], STRICT, 3, id="annotated"),
]


@pytest.mark.parametrize(("value", "target", "config", "expected"), CONVERSIONS)
def test_convert_value(
    value: object, target: object, config: TypeMappingConfig, expected: object
) -> None:
    converted = convert_value(value, target, config)

    assert (converted, type(converted)) == (expected, type(expected))


@pytest.mark.parametrize(
    ("value", "target"),
    [
        pytest.param(SECTION, Section, id="model"),
        pytest.param(Appendix(title="t"), Section, id="subclass"),
        pytest.param("text", str, id="str"),
        pytest.param(object(), Any, id="any"),
    ],
)
def test_convert_value_keeps_values_of_the_target_type(value: object, target: object) -> None:
    assert convert_value(value, target, STRICT) is value


@pytest.mark.parametrize(
    ("value", "target"),
    [
        pytest.param(1, Literal["1", 1], id="int-after-its-text"),
        pytest.param("1", Literal[1, "1"], id="text-after-its-int"),
        pytest.param(1, Literal[True, 1], id="int-after-true"),
        pytest.param(1, Literal["1", 1] | None, id="optional-literal"),
    ],
)
def test_convert_value_keeps_a_literal_option_the_value_already_is(
    value: object, target: object
) -> None:
    converted = convert_value(value, target, STRICT)

    assert (converted, type(converted)) == (value, type(value))


UNION_PRIORITY = [
    pytest.param(42, int | float, 42, id="spec-int-exact"),
    pytest.param(1, bool | float, 1.0, id="spec-float-before-bool"),
    pytest.param(True, bool | float, True, id="spec-bool-exact"),
    pytest.param({"title": "t"}, dict[str, str] | Section, SECTION, id="model-before-dict"),
    pytest.param(2.0, str | int, 2, id="integral-float-int-before-str"),
    pytest.param(2.5, int | str, "2.5", id="fractional-float-str-before-int"),
    pytest.param("3", int | float, 3.0, id="string-float-before-int"),
    pytest.param(Color.RED, str | Color, Color.RED, id="enum-exact"),
    pytest.param(7, list[int] | str, "7", id="str-before-list"),
]


@pytest.mark.parametrize(("value", "target", "expected"), UNION_PRIORITY)
def test_union_conversion_follows_priority(value: object, target: object, expected: object) -> None:
    converted = convert_value(value, target, STRICT)

    assert (converted, type(converted)) == (expected, type(expected))


CONVERSION_FAILURES = [
    pytest.param("abc", int, STRICT, "cannot convert 'abc' to int: it is not an integer", id="int"),
    pytest.param(
        "abc", float, STRICT, "cannot convert 'abc' to float: it is not a number", id="float"
    ),
    pytest.param(
        math.inf, int, STRICT, "cannot convert inf to int: it is not a finite number", id="inf"
    ),
    pytest.param(
        [1],
        int,
        STRICT,
        "cannot convert [1] to int: a value of type list is not a number",
        id="list-int",
    ),
    pytest.param(
        "maybe",
        bool,
        STRICT,
        "cannot convert 'maybe' to bool: it is not one of '0', '1', 'false', 'true' (in any case)",
        id="bool-word",
    ),
    pytest.param(
        "yes",
        bool,
        STRICT,
        "cannot convert 'yes' to bool: it is not one of '0', '1', 'false', 'true' (in any case)",
        id="strict-bool-yes",
    ),
    pytest.param(
        2,
        bool,
        STRICT,
        "cannot convert 2 to bool: only 0, 1 and the strings for true and false convert",
        id="bool-two",
    ),
    pytest.param(
        None,
        int,
        STRICT,
        "cannot convert None to int: None converts only to a type that allows None",
        id="none",
    ),
    pytest.param(
        "42",
        int,
        NO_PARSING,
        "cannot convert '42' to int: string parsing is disabled (allow_string_parsing=False)",
        id="parsing-disabled",
    ),
    pytest.param(
        '{"title": "t"}',
        Section,
        NO_PARSING,
        """cannot convert '{"title": "t"}' to Section: string parsing is disabled"""
        " (allow_string_parsing=False)",
        id="parsing-disabled-model",
    ),
    pytest.param(
        10**400,
        float,
        STRICT,
        f"cannot convert {str(10**400)[:57]}... to float: it is too large for a float",
        id="float-overflow",
    ),
    pytest.param(
        {"title": "t"},
        Section,
        NO_DICTS,
        "cannot convert {'title': 't'} to Section: model ↔ dict conversion is disabled"
        " (allow_treenode_dict_conversion=False)",
        id="dicts-disabled-model",
    ),
    pytest.param(
        SECTION,
        dict,
        NO_DICTS,
        "cannot convert Section(title='t') to dict: model ↔ dict conversion is disabled"
        " (allow_treenode_dict_conversion=False)",
        id="dicts-disabled",
    ),
    pytest.param(
        " red ",
        Color,
        NO_PARSING,
        "cannot convert ' red ' to Color: string parsing is disabled (allow_string_parsing=False)",
        id="enum-parsing-disabled",
    ),
    pytest.param(
        "May 1st",
        date,
        STRICT,
        "cannot convert 'May 1st' to date: it is neither a date nor the JSON form of one (Input"
        " should be a valid date in the format YYYY-MM-DD, input is too short)",
        id="date-json-form",
    ),
    pytest.param(
        object,
        date,
        STRICT,
        "cannot convert <class 'object'> to date: a value of type type is not a date",
        id="date-no-json-form",
    ),
    pytest.param(
        "purple",
        Color,
        STRICT,
        "cannot convert 'purple' to Color: it is neither a value ('red', 'green') nor a name"
        " of Color",
        id="enum",
    ),
    pytest.param(
        {"title": 1},
        Section,
        STRICT,
        "cannot convert {'title': 1} to Section: title: Input should be a valid string",
        id="model-validation",
    ),
    pytest.param(
        {},
        Labels,
        STRICT,
        "cannot convert {} to Labels: title: Field required (and 1 more)",
        id="model-validation-count",
    ),
    pytest.param(
        "[1, 2",
        list[int],
        STRICT,
        "cannot convert '[1, 2' to list[int]: it is not valid JSON"
        " (Expecting ',' delimiter: line 1 column 6 (char 5))",
        id="json-invalid",
    ),
    pytest.param(
        '{"a": 1}',
        list[int],
        STRICT,
        """cannot convert '{"a": 1}' to list[int]: its JSON is of type dict, not list""",
        id="json-wrong-kind",
    ),
    pytest.param(
        [1, 2, 3],
        tuple[int, int],
        STRICT,
        "cannot convert [1, 2, 3] to tuple[int, int]: it has 3 items, not 2",
        id="tuple-length",
    ),
    pytest.param(
        ["1", "x"],
        list[int],
        STRICT,
        "cannot convert ['1', 'x'] to list[int]: an item does not convert:"
        " cannot convert 'x' to int: it is not an integer",
        id="list-item",
    ),
    pytest.param(
        [[1]],
        set[Any],
        STRICT,
        "cannot convert [[1]] to set[Any]: its items cannot form a set (unhashable type: 'list')",
        id="unhashable",
    ),
    pytest.param(
        5,
        list[int],
        STRICT,
        "cannot convert 5 to list[int]: a value of type int is not a sequence",
        id="scalar-list",
    ),
    pytest.param(
        "c",
        Literal["a", "b"],
        STRICT,
        "cannot convert 'c' to Literal['a', 'b']: it is not one of 'a', 'b'",
        id="literal",
    ),
    pytest.param(
        "x",
        int | None,
        STRICT,
        "cannot convert 'x' to int | None: no member of the union accepts it",
        id="union",
    ),
    pytest.param(
        "x" * 100,
        int,
        STRICT,
        f"cannot convert '{'x' * 56}... to int: it is not an integer",
        id="long-value-shortened",
    ),
]


@pytest.mark.parametrize(("value", "target", "config", "message"), CONVERSION_FAILURES)
def test_convert_value_failure(
    value: object, target: object, config: TypeMappingConfig, message: str
) -> None:
    with pytest.raises(ConversionError) as caught:
        convert_value(value, target, config)

    assert str(caught.value) == message


def test_conversion_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"^cannot convert 'abc' to int"):
        convert_value("abc", int, STRICT)


def test_value_without_json_form_fails_to_become_str() -> None:
    with pytest.raises(ConversionError, match=r"^cannot convert \[Opaque\(\)\] to str: it has no"):
        convert_value([Opaque()], str, STRICT)


@given(st.integers())
def test_int_survives_str_round_trip(number: int) -> None:
    assert convert_value(convert_value(number, str, STRICT), int, STRICT) == number


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_survives_str_round_trip(number: float) -> None:
    assert convert_value(convert_value(number, str, STRICT), float, STRICT) == number


@given(st.lists(st.integers()))
def test_int_list_survives_json_round_trip(numbers: list[int]) -> None:
    assert convert_value(convert_value(numbers, str, STRICT), list[int], STRICT) == numbers


@given(st.integers(min_value=-(2**53), max_value=2**53))
def test_int_to_float_keeps_the_value(number: int) -> None:
    assert convert_value(number, float, STRICT) == number
