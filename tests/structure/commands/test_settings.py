"""Node settings: modifiers, models (``llm``), resampling, ``@resampled``, and the config."""

from enum import Enum

import pytest
from pydantic import Field

from langtree import (
    RunStructure,
    StructureError,
    TreeNode,
    TypeMappingConfig,
    ValidationStrategy,
)
from langtree.structure._config import StructureConfig
from tests.structure.validated import diagnostics, line_in, mark_in, mark_of, problems

FILE = __file__


class Provider:
    """The one thing RunStructure asks of a provider: its model keys."""

    def __init__(self, *models: str) -> None:
        self.models = list(models)

    def list_models(self) -> list[str]:
        return self.models


def steps(
    task: type[TreeNode], inputs: dict[object, object] | None = None, config: object = None
) -> list[tuple[str, str, str | None, int]]:
    """Each planned step's id, modifier, model and resample count, in plan order."""
    structure = RunStructure(config)  # type: ignore[arg-type]
    structure.add(task)
    return [
        (step.id, step.modifier, step.model, step.resample) for step in structure.plan(inputs).steps
    ]


# --- Modifiers -----------------------------------------------------------------------


class TaskPlain(TreeNode):
    title: str
    body: str


def test_default_modifier_is_sequential_one_step_per_field() -> None:
    assert steps(TaskPlain) == [
        ("task.plain:title", "sequential", None, 1),
        ("task.plain:body", "sequential", None, 1),
    ]


@pytest.mark.parametrize("name", ["parallel", "together", "Parallel"])
def test_configured_default_modifier_applies_to_nodes_without_one(name: str) -> None:
    assert steps(TaskPlain, config={"default_modifier": name}) == [
        ("task.plain:title+body", "parallel", None, 1)
    ]


class TaskDeclaredParallel(TreeNode):
    """! @parallel"""

    title: str
    body: str


class TaskDeclaredTogether(TreeNode):
    """! together"""

    title: str
    body: str


@pytest.mark.parametrize(
    ("task", "step_id"),
    [
        pytest.param(TaskDeclaredParallel, "task.declared_parallel:title+body", id="parallel"),
        pytest.param(TaskDeclaredTogether, "task.declared_together:title+body", id="together"),
    ],
)
def test_parallel_node_has_one_step_for_all_fields(task: type[TreeNode], step_id: str) -> None:
    assert steps(task) == [(step_id, "parallel", None, 1)]


class TaskDeclaredSequential(TreeNode):
    """! @sequential"""

    title: str
    body: str


def test_declared_modifier_beats_the_configured_default() -> None:
    assert steps(TaskDeclaredSequential, config={"default_modifier": "parallel"}) == [
        ("task.declared_sequential:title", "sequential", None, 1),
        ("task.declared_sequential:body", "sequential", None, 1),
    ]


class TaskTwoModifiers(TreeNode):
    """! @parallel
    ! @sequential"""

    title: str


def test_two_modifiers_are_an_error() -> None:
    assert problems(TaskTwoModifiers) == [
        (
            "error",
            "'TaskTwoModifiers' has more than one node modifier",
            "keep one of @sequential, @parallel or together",
        )
    ]


def test_two_modifiers_point_at_the_second() -> None:
    (diagnostic,) = diagnostics(TaskTwoModifiers)
    source_line = '    ! @sequential"""'

    assert mark_of(diagnostic) == mark_in(TaskTwoModifiers, source_line, "! @sequential")


class TaskModifierInField(TreeNode):
    title: str = Field(description="! together")


def test_modifier_in_a_field_description_is_an_error() -> None:
    assert problems(TaskModifierInField) == [
        (
            "error",
            "A node modifier belongs in the class docstring, not in a field's description",
            "move it to the docstring of 'TaskModifierInField'",
        )
    ]


def test_modifier_in_a_field_description_names_the_field() -> None:
    (diagnostic,) = diagnostics(TaskModifierInField)

    assert (diagnostic.class_name, diagnostic.field_name, diagnostic.line) == (
        "TaskModifierInField",
        "title",
        line_in(TaskModifierInField, "! together"),
    )


# --- Models --------------------------------------------------------------------------


class Leaf(TreeNode):
    text: str


class TaskNoModel(TreeNode):
    child: Leaf
    note: str


def test_without_llm_every_step_uses_the_provider_default() -> None:
    assert [model for _, _, model, _ in steps(TaskNoModel, {TaskNoModel: {"child": {}}})] == [
        None,
        None,
    ]


class Middle(TreeNode):
    leaf: Leaf


class TaskInherits(TreeNode):
    """! llm("big")"""

    middle: Middle


def test_descendants_inherit_the_model() -> None:
    inputs: dict[object, object] = {TaskInherits: {"middle": {"leaf": {}}}}

    assert steps(TaskInherits, inputs) == [
        ("task.inherits.middle.leaf:text", "sequential", "big", 1)
    ]


class ChoosesSmall(TreeNode):
    """! llm("small")"""

    text: str


class TaskChildChooses(TreeNode):
    """! llm("big")"""

    child: ChoosesSmall
    note: str


def test_child_llm_beats_the_inherited_model() -> None:
    assert steps(TaskChildChooses, {TaskChildChooses: {"child": {}}}) == [
        ("task.child_chooses.child:text", "sequential", "small", 1),
        ("task.child_chooses:note", "sequential", "big", 1),
    ]


class TaskExplicitNoOverride(TreeNode):
    """! llm("big", override=false)"""

    middle: Middle


def test_override_false_still_passes_the_model_down() -> None:
    inputs: dict[object, object] = {TaskExplicitNoOverride: {"middle": {"leaf": {}}}}

    assert [model for _, _, model, _ in steps(TaskExplicitNoOverride, inputs)] == ["big"]


class FieldChoice(TreeNode):
    """! llm("small")"""

    text: str
    quote: str = Field(description='! llm("tiny")')


class TaskOverrides(TreeNode):
    """! llm("big", override=true)"""

    child: FieldChoice
    note: str


def test_ancestor_override_beats_child_and_field_level_choices() -> None:
    assert steps(TaskOverrides, {TaskOverrides: {"child": {}}}) == [
        ("task.overrides.child:text", "sequential", "big", 1),
        ("task.overrides.child:quote", "sequential", "big", 1),
        ("task.overrides:note", "sequential", "big", 1),
    ]


class OverridingMiddle(TreeNode):
    """! llm("middle", override=true)"""

    leaf: Leaf


class TaskHigherOverride(TreeNode):
    """! llm("top", override=true)"""

    middle: OverridingMiddle


def test_the_highest_override_wins() -> None:
    inputs: dict[object, object] = {TaskHigherOverride: {"middle": {"leaf": {}}}}

    assert [model for _, _, model, _ in steps(TaskHigherOverride, inputs)] == ["top"]


class TaskLowerOverride(TreeNode):
    """! llm("top")"""

    middle: OverridingMiddle


def test_an_override_applies_below_the_node_that_sets_it() -> None:
    inputs: dict[object, object] = {TaskLowerOverride: {"middle": {"leaf": {}}}}

    assert [model for _, _, model, _ in steps(TaskLowerOverride, inputs)] == ["middle"]


class TaskOwnOverrideAndField(TreeNode):
    """! llm("big", override=true)"""

    text: str
    quote: str = Field(description='! llm("tiny")')


def test_override_does_not_replace_a_field_choice_in_its_own_node() -> None:
    assert steps(TaskOwnOverrideAndField) == [
        ("task.own_override_and_field:text", "sequential", "big", 1),
        ("task.own_override_and_field:quote", "sequential", "tiny", 1),
    ]


class TaskFieldModel(TreeNode):
    """! @parallel
    ! llm("big")"""

    title: str
    quote: str = Field(description='! llm("tiny")')
    body: str


def test_field_level_llm_gives_the_field_a_step_of_its_own() -> None:
    assert steps(TaskFieldModel) == [
        ("task.field_model:title+body", "parallel", "big", 1),
        ("task.field_model:quote", "parallel", "tiny", 1),
    ]


# --- Model keys and the provider ---------------------------------------------------------


class TaskUnknownModel(TreeNode):
    """! llm("gpt-4o-mini")"""

    text: str


class TaskUnknownFieldModel(TreeNode):
    text: str = Field(description='! llm("claude")')


class TaskUnknownModelVariable(TreeNode):
    """! model_key="claude"
    ! llm(model_key)"""

    text: str


@pytest.mark.parametrize(
    ("task", "key", "hint"),
    [
        pytest.param(
            TaskUnknownModel,
            "gpt-4o-mini",
            "did you mean 'gpt-4o'? the provider's models are 'gpt-4o', 'local'",
            id="close-key",
        ),
        pytest.param(
            TaskUnknownFieldModel,
            "claude",
            "the provider's models are 'gpt-4o', 'local'",
            id="field-level",
        ),
        pytest.param(
            TaskUnknownModelVariable,
            "claude",
            "the provider's models are 'gpt-4o', 'local'",
            id="from-variable",
        ),
    ],
)
def test_model_key_missing_from_the_provider_is_an_error(
    task: type[TreeNode], key: str, hint: str
) -> None:
    assert problems(task, provider=Provider("gpt-4o", "local")) == [
        ("error", f"Model {key!r} is not in the provider", hint)
    ]


def test_provider_without_models_says_so() -> None:
    assert problems(TaskUnknownModel, provider=Provider()) == [
        (
            "error",
            "Model 'gpt-4o-mini' is not in the provider",
            "the provider lists no models: add one to it",
        )
    ]


def test_model_key_in_the_provider_is_accepted() -> None:
    assert diagnostics(TaskUnknownModel, provider=Provider("local", "gpt-4o-mini")) == ()


@pytest.mark.parametrize(
    "task",
    [
        pytest.param(TaskUnknownModel, id="docstring"),
        pytest.param(TaskUnknownFieldModel, id="field-level"),
    ],
)
def test_without_a_provider_model_keys_are_not_checked(task: type[TreeNode]) -> None:
    assert diagnostics(task) == ()


def test_unknown_model_points_at_the_llm_command() -> None:
    (diagnostic,) = diagnostics(TaskUnknownFieldModel, provider=Provider("local"))
    source_line = """    text: str = Field(description='! llm("claude")')"""

    assert (diagnostic.field_name, mark_of(diagnostic)) == (
        "text",
        mark_in(TaskUnknownFieldModel, source_line, '! llm("claude")'),
    )


# --- One call per text -------------------------------------------------------------------


class TaskTwoModels(TreeNode):
    """! llm("big")
    ! llm("small")"""

    text: str


class TaskTwoResamples(TreeNode):
    """! resample(2)
    ! resample(3)"""

    text: str


class TaskTwoFieldModels(TreeNode):
    text: str = Field(description='! llm("big")\n! llm("small")')


@pytest.mark.parametrize(
    ("task", "name"),
    [
        pytest.param(TaskTwoModels, "llm", id="llm-docstring"),
        pytest.param(TaskTwoResamples, "resample", id="resample-docstring"),
        pytest.param(TaskTwoFieldModels, "llm", id="llm-field"),
    ],
)
def test_two_calls_of_a_command_in_one_text_are_an_error(task: type[TreeNode], name: str) -> None:
    assert problems(task) == [
        ("error", f"More than one {name}() in the same text", f"keep one {name}()")
    ]


def test_second_call_is_the_one_marked() -> None:
    (diagnostic,) = diagnostics(TaskTwoModels)

    assert (diagnostic.line, diagnostic.source_line) == (
        line_in(TaskTwoModels, '! llm("small")'),
        '    ! llm("small")"""',
    )


class TaskModelInDocstringAndField(TreeNode):
    """! llm("big")"""

    text: str = Field(description='! llm("small")')


def test_one_call_in_the_docstring_and_one_in_a_field_are_fine() -> None:
    assert diagnostics(TaskModelInDocstringAndField) == ()


# --- Resampling ----------------------------------------------------------------------


class TaskResampledNode(TreeNode):
    """! resample(3)"""

    title: str
    body: str


def test_node_resample_applies_to_every_step_of_the_node() -> None:
    assert [(step_id, count) for step_id, _, _, count in steps(TaskResampledNode)] == [
        ("task.resampled_node:title", 3),
        ("task.resampled_node:body", 3),
    ]


class TaskResampledField(TreeNode):
    """! @parallel
    ! resample(3)"""

    title: str
    quote: str = Field(description="! resample(5)")
    body: str


def test_field_resample_gives_the_field_its_own_step_and_count() -> None:
    assert steps(TaskResampledField) == [
        ("task.resampled_field:title+body", "parallel", None, 3),
        ("task.resampled_field:quote", "parallel", None, 5),
    ]


class TaskResampledChild(TreeNode):
    """! resample(3)"""

    child: Leaf


def test_node_resample_does_not_reach_known_child_nodes() -> None:
    assert steps(TaskResampledChild, {TaskResampledChild: {"child": {}}}) == [
        ("task.resampled_child.child:text", "sequential", None, 1)
    ]


# --- @resampled ----------------------------------------------------------------------


class Rating(Enum):
    LOW = 1
    MEDIUM = 2
    HIGH = 3


class Weight(Enum):
    LIGHT = 0.5
    HEAVY = 2.5


class Mood(Enum):
    GOOD = "good"
    BAD = "bad"


class Mixed(Enum):
    ONE = 1
    MANY = "many"


class Flag(Enum):
    ON = True
    OFF = False


class TaskUnknownResampled(TreeNode):
    """! resample(3)
    ! @resampled[ratting]->mean"""

    rating: Rating
    notes: str


def test_resampled_unknown_field_is_an_error() -> None:
    assert problems(TaskUnknownResampled) == [
        (
            "error",
            "@resampled names 'ratting', which is not a field of 'TaskUnknownResampled'",
            "did you mean 'rating'? its fields are 'rating', 'notes'",
        )
    ]


def test_resampled_unknown_field_marks_the_field_name() -> None:
    (diagnostic,) = diagnostics(TaskUnknownResampled)

    assert (diagnostic.line, diagnostic.column, diagnostic.length) == (
        line_in(TaskUnknownResampled, "! @resampled[ratting]"),
        18,
        7,
    )


class TaskResampledString(TreeNode):
    """! resample(3)
    ! @resampled[notes]->mode"""

    notes: str


class TaskResampledEnumList(TreeNode):
    """! resample(3)
    ! @resampled[ratings]->mode"""

    ratings: list[Rating]


class TaskResampledNumber(TreeNode):
    """! resample(3)
    ! @resampled[score]->mean"""

    score: int


@pytest.mark.parametrize(
    ("task", "field", "shown"),
    [
        pytest.param(TaskResampledString, "notes", "str", id="str"),
        pytest.param(TaskResampledEnumList, "ratings", "list[Rating]", id="enum-list"),
        pytest.param(TaskResampledNumber, "score", "int", id="int"),
    ],
)
def test_resampled_non_enum_field_is_an_error(task: type[TreeNode], field: str, shown: str) -> None:
    assert problems(task) == [
        (
            "error",
            f"@resampled needs an Enum field; {field!r} is {shown}",
            "give the field an Enum type, or remove the command",
        )
    ]


def resampled_task(function: str, enum: type[Enum]) -> type[TreeNode]:
    """A root task with a resampled enum field ``verdict`` aggregated by ``function``."""
    namespace = {
        "__doc__": f"! resample(3)\n! @resampled[verdict]->{function}",
        "__annotations__": {"verdict": enum},
    }
    return type(f"Task{enum.__name__}{function.capitalize()}", (TreeNode,), namespace)


NUMERIC_FUNCTIONS = ["mean", "median", "sum", "min", "max"]


@pytest.mark.parametrize(
    ("enum", "values"),
    [
        pytest.param(Mood, "GOOD='good', BAD='bad'", id="string-enum"),
        pytest.param(Mixed, "MANY='many'", id="mixed-enum"),
        pytest.param(Flag, "ON=True, OFF=False", id="bool-enum"),
    ],
)
@pytest.mark.parametrize("function", NUMERIC_FUNCTIONS)
def test_numeric_aggregation_of_a_non_numeric_enum_is_an_error(
    function: str, enum: type[Enum], values: str
) -> None:
    assert problems(resampled_task(function, enum)) == [
        (
            "error",
            f"@resampled[verdict]->{function} needs an Enum with numeric values; "
            f"{enum.__name__} has {values}",
            "use 'mode', or give every member an int or float value",
        )
    ]


@pytest.mark.parametrize("enum", [Rating, Weight], ids=["int-enum", "float-enum"])
@pytest.mark.parametrize("function", NUMERIC_FUNCTIONS)
def test_numeric_aggregation_of_a_numeric_enum_is_accepted(function: str, enum: type[Enum]) -> None:
    assert diagnostics(resampled_task(function, enum)) == ()


@pytest.mark.parametrize("enum", [Rating, Weight, Mood, Mixed, Flag])
def test_mode_works_on_any_enum(enum: type[Enum]) -> None:
    assert diagnostics(resampled_task("mode", enum)) == ()


class TaskOptionalEnum(TreeNode):
    """! resample(3)
    ! @resampled[rating]->median"""

    rating: Rating | None = None


def test_optional_enum_field_can_be_resampled() -> None:
    assert diagnostics(TaskOptionalEnum) == ()


class TaskResampledInField(TreeNode):
    rating: Rating = Field(description="! resample(4)\n! @resampled[rating]->max")


def test_resampled_in_a_resampled_field_is_accepted() -> None:
    assert diagnostics(TaskResampledInField) == ()


class TaskNothingResamples(TreeNode):
    """! @resampled[rating]->mean"""

    rating: Rating


class TaskResampledOnce(TreeNode):
    """! resample(1)
    ! @resampled[rating]->mean"""

    rating: Rating


class TaskOtherFieldResampled(TreeNode):
    """! @resampled[rating]->mean"""

    rating: Rating
    notes: str = Field(description="! resample(3)")


@pytest.mark.parametrize(
    "task",
    [
        pytest.param(TaskNothingResamples, id="no-resample"),
        pytest.param(TaskResampledOnce, id="resample-once"),
        pytest.param(TaskOtherFieldResampled, id="other-field-resampled"),
    ],
)
def test_resampled_without_resampling_is_a_warning(task: type[TreeNode]) -> None:
    assert problems(task) == [
        (
            "warning",
            f"@resampled[rating] has no effect: nothing resamples {task.__name__!r}",
            "add '! resample(n)' with n > 1 to the node or the field, or remove the command",
        )
    ]


# --- Config ----------------------------------------------------------------------------

PERMISSIVE = TypeMappingConfig(validation_strategy=ValidationStrategy.PERMISSIVE)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        pytest.param(None, StructureConfig(), id="none"),
        pytest.param({}, StructureConfig(), id="empty-dict"),
        pytest.param(
            {"validation_strategy": "permissive"},
            StructureConfig(type_mapping=PERMISSIVE),
            id="dict-type-setting",
        ),
        pytest.param(
            {"default_modifier": "together"},
            StructureConfig(default_modifier="parallel"),
            id="dict-together",
        ),
        pytest.param(
            {"default_modifier": "SEQUENTIAL", "allow_string_parsing": False},
            StructureConfig(type_mapping=TypeMappingConfig(allow_string_parsing=False)),
            id="dict-mixed",
        ),
        pytest.param(
            PERMISSIVE, StructureConfig(type_mapping=PERMISSIVE), id="type-mapping-config"
        ),
        pytest.param(
            StructureConfig(default_modifier="parallel"),
            StructureConfig(default_modifier="parallel"),
            id="structure-config",
        ),
    ],
)
def test_config_factory_accepts_every_form(config: object, expected: StructureConfig) -> None:
    assert StructureConfig.create(config) == expected  # type: ignore[arg-type]


def test_run_structure_reads_its_config_through_the_factory() -> None:
    structure = RunStructure({"validation_strategy": "permissive", "default_modifier": "parallel"})

    assert structure.config == StructureConfig(type_mapping=PERMISSIVE, default_modifier="parallel")


ALL_SETTINGS = (
    "'allow_string_parsing', 'allow_treenode_dict_conversion', 'asset_folders', 'cache',"
    " 'call_timeout', 'deadline', 'default_modifier', 'enable_type_validation',"
    " 'field_descriptions', 'instructions', 'journal', 'journal_max_age', 'max_asset_bytes',"
    " 'max_concurrency', 'max_retries', 'on_error', 'outline', 'prompt_template',"
    " 'rate_limit', 'retry', 'strict_bool_parsing', 'token_budget', 'usage_limits',"
    " 'validation_strategy'"
)
MODIFIER_HINT = "pass 'sequential' (the default) or 'parallel'"


@pytest.mark.parametrize(
    ("config", "message", "hint"),
    [
        pytest.param(
            {"default_modifer": "parallel"},
            "Unknown setting 'default_modifer'",
            "did you mean 'default_modifier'?",
            id="unknown-close",
        ),
        pytest.param(
            {"validation_strictness": "strict"},
            "Unknown setting 'validation_strictness'",
            "did you mean 'validation_strategy'?",
            id="unknown-close-strategy",
        ),
        pytest.param(
            {"colour": "blue"},
            "Unknown setting 'colour'",
            f"the settings are {ALL_SETTINGS}",
            id="unknown-far",
        ),
        pytest.param(
            {"default_modifier": "fast"},
            "'default_modifier' must be 'sequential' or 'parallel', got 'fast'",
            MODIFIER_HINT,
            id="modifier-unknown",
        ),
        pytest.param(
            {"default_modifier": "@parallel"},
            "'default_modifier' must be 'sequential' or 'parallel', got '@parallel'",
            f"did you mean 'parallel'? {MODIFIER_HINT}",
            id="modifier-with-at",
        ),
        pytest.param(
            {"default_modifier": "sequental"},
            "'default_modifier' must be 'sequential' or 'parallel', got 'sequental'",
            f"did you mean 'sequential'? {MODIFIER_HINT}",
            id="modifier-misspelt",
        ),
        pytest.param(
            {"default_modifier": True},
            "'default_modifier' must be 'sequential' or 'parallel', got True",
            MODIFIER_HINT,
            id="modifier-not-str",
        ),
        pytest.param(
            {"validation_strategy": "lenient"},
            "'validation_strategy' must be one of 'strict', 'permissive', 'development',"
            " 'exact', got 'lenient'",
            "pass a ValidationStrategy or the name of one",
            id="strategy-unknown",
        ),
        pytest.param(
            {"enable_type_validation": "off"},
            "'enable_type_validation' must be true or false, got 'off'",
            "pass True or False, e.g. RunStructure({'enable_type_validation': False})",
            id="flag-not-bool",
        ),
        pytest.param(
            "strict",
            "RunStructure's config must be a dict, a TypeMappingConfig or None, got 'strict'",
            "pass the settings by name, e.g. RunStructure({'validation_strategy': 'strict'})",
            id="not-a-mapping",
        ),
        pytest.param(
            ValidationStrategy.STRICT,
            "RunStructure's config must be a dict, a TypeMappingConfig or None,"
            " got <ValidationStrategy.STRICT: 'strict'>",
            "pass the settings by name, e.g. RunStructure({'validation_strategy': 'strict'})",
            id="bare-strategy",
        ),
    ],
)
def test_bad_config_is_an_error(config: object, message: str, hint: str) -> None:
    with pytest.raises(StructureError) as caught:
        RunStructure(config)  # type: ignore[arg-type]

    assert [(d.severity, d.message, d.hint) for d in caught.value.diagnostics] == [
        ("error", message, hint)
    ]


def test_bad_config_reports_every_problem_at_once() -> None:
    config = {"colour": 1, "default_modifier": "fast", "validation_strategy": "lenient"}

    with pytest.raises(StructureError) as caught:
        StructureConfig.create(config)

    assert [d.message for d in caught.value.diagnostics] == [
        "Unknown setting 'colour'",
        "'default_modifier' must be 'sequential' or 'parallel', got 'fast'",
        "'validation_strategy' must be one of 'strict', 'permissive', 'development', 'exact',"
        " got 'lenient'",
    ]
