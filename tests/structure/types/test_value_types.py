"""Type compatibility of ``value`` mappings, checked by ``RunStructure.validate()``."""

from typing import Any

import pytest
from pydantic import Field

from langtree import TreeNode
from tests.structure.validated import diagnostics, mark_in, mark_of, problems

FILE = __file__


def mapping(source: str, target: str, level: str, verdict: str, strategy: str) -> str:
    return (
        f"Type incompatibility in variable mapping from {source} to {target}:"
        f" {level} conversion {verdict} by {strategy} strategy"
    )


PERMISSIVE_HINT = (
    "change the field types, or allow the conversion with"
    " RunStructure({'validation_strategy': 'permissive'})"
)
DEVELOPMENT_HINT = (
    "change the field types, or allow the conversion with"
    " RunStructure({'validation_strategy': 'development'})"
)
WARNING_HINT = (
    "values that do not convert raise ConversionError at run time;"
    " change the field types to make the conversion safe"
)


# --- @all between scalar fields --------------------------------------------------------


class TaskScalarSource(TreeNode):
    headline: str = Field(description="! @all->task.scalar_target@{{value.title=headline}}")
    count: int = Field(description="! @all->task.scalar_target@{{value.amount=count}}")


class TaskScalarTarget(TreeNode):
    title: str
    amount: float


def test_identical_and_safe_mappings_pass() -> None:
    assert diagnostics(TaskScalarSource, TaskScalarTarget) == ()


class TaskFloatSource(TreeNode):
    price: float = Field(description="! @all->task.int_target@{{value.cents=price}}")


class TaskIntTarget(TreeNode):
    cents: int


FLOAT_TO_INT = ("task.float_source.price (float)", "task.int_target.cents (int)")


def test_lossy_mapping_is_an_error_under_strict() -> None:
    assert problems(TaskFloatSource, TaskIntTarget) == [
        ("error", mapping(*FLOAT_TO_INT, "lossy", "not allowed", "strict"), PERMISSIVE_HINT)
    ]


def test_type_error_marks_the_mapping() -> None:
    (diagnostic,) = diagnostics(TaskFloatSource, TaskIntTarget)
    source_line = (
        '    price: float = Field(description="! @all->task.int_target@{{value.cents=price}}")'
    )

    assert (diagnostic.class_name, diagnostic.field_name, mark_of(diagnostic)) == (
        "TaskFloatSource",
        "price",
        mark_in(TaskFloatSource, source_line, "value.cents=price"),
    )


@pytest.mark.parametrize("strategy", ["permissive", "development"])
def test_lossy_mapping_is_a_warning_under_looser_strategies(strategy: str) -> None:
    config = {"validation_strategy": strategy}

    assert problems(TaskFloatSource, TaskIntTarget, config=config) == [
        ("warning", mapping(*FLOAT_TO_INT, "lossy", "allowed", strategy), WARNING_HINT)
    ]


def test_disabled_type_validation_reports_nothing() -> None:
    config = {"enable_type_validation": False}

    assert diagnostics(TaskFloatSource, TaskIntTarget, config=config) == ()


class TaskTextSource(TreeNode):
    digits: str = Field(description="! @all->task.int_target@{{value.cents=digits}}")


def test_disabled_string_parsing_names_the_setting() -> None:
    config = {"allow_string_parsing": False}

    assert problems(TaskTextSource, TaskIntTarget, config=config) == [
        (
            "error",
            mapping(
                "task.text_source.digits (str)",
                "task.int_target.cents (int)",
                "forbidden",
                "not allowed",
                "strict",
            ),
            "change the field types, or allow the conversion with"
            " RunStructure({'allow_string_parsing': True, 'validation_strategy': 'permissive'})",
        )
    ]


# --- Models --------------------------------------------------------------------------


class ConfigComplex(TreeNode):
    name: str
    retries: int


class Profile(TreeNode):
    name: str


class OtherProfile(TreeNode):
    name: str


class TaskModelSource(TreeNode):
    settings: ConfigComplex = Field(
        description="! @all->task.model_target@{{value.loose=settings, value.typed=settings}}"
    )


class TaskModelTarget(TreeNode):
    loose: dict  # type: ignore[type-arg]
    typed: dict[str, Any]


def test_model_into_a_dict_is_safe() -> None:
    assert diagnostics(TaskModelSource, TaskModelTarget) == ()


class TaskSource(TreeNode):
    field_name: ConfigComplex = Field(description="! @all->task.target@{{value.config=field_name}}")


class TaskTarget(TreeNode):
    config: dict[str, str]


def test_spec_example_message() -> None:
    assert problems(TaskSource, TaskTarget) == [
        (
            "error",
            "Type incompatibility in variable mapping from task.source.field_name (ConfigComplex)"
            " to task.target.config (dict[str, str]): forbidden conversion not allowed by strict"
            " strategy",
            "declare the target as dict[str, Any] (model_dump() keeps each field's own type)"
            " or as ConfigComplex",
        )
    ]


class TaskProfileSource(TreeNode):
    profile: Profile = Field(description="! @all->task.profile_target@{{value.owner=profile}}")


class TaskProfileTarget(TreeNode):
    owner: OtherProfile


PROFILES = ("task.profile_source.profile (Profile)", "task.profile_target.owner (OtherProfile)")


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        pytest.param(
            "strict",
            ("error", mapping(*PROFILES, "unsafe", "not allowed", "strict"), DEVELOPMENT_HINT),
            id="strict",
        ),
        pytest.param(
            "permissive",
            ("error", mapping(*PROFILES, "unsafe", "not allowed", "permissive"), DEVELOPMENT_HINT),
            id="permissive",
        ),
        pytest.param(
            "development",
            ("warning", mapping(*PROFILES, "unsafe", "allowed", "development"), WARNING_HINT),
            id="development",
        ),
    ],
)
def test_model_into_another_model_needs_development(
    strategy: str, expected: tuple[str, str, str]
) -> None:
    config = {"validation_strategy": strategy}

    assert problems(TaskProfileSource, TaskProfileTarget, config=config) == [expected]


class TaskForbiddenSource(TreeNode):
    profile: Profile = Field(description="! @all->task.forbidden_target@{{value.count=profile}}")


class TaskForbiddenTarget(TreeNode):
    count: int


def test_forbidden_mapping_is_an_error_even_under_development() -> None:
    assert problems(
        TaskForbiddenSource, TaskForbiddenTarget, config={"validation_strategy": "development"}
    ) == [
        (
            "error",
            mapping(
                "task.forbidden_source.profile (Profile)",
                "task.forbidden_target.count (int)",
                "forbidden",
                "not allowed",
                "development",
            ),
            "change the field types: Profile cannot be converted to int"
            " (see langtree.structure.types._compatibility)",
        )
    ]


# --- Wildcard sources ------------------------------------------------------------------


class TaskWholeNode(TreeNode):
    """! @all->task.whole_target@{{value.snapshot=*}}"""

    name: str
    retries: int


class TaskWholeTarget(TreeNode):
    snapshot: dict[str, Any]


def test_whole_node_into_a_dict_is_safe() -> None:
    assert diagnostics(TaskWholeNode, TaskWholeTarget) == ()


class TaskWholeNodeStrings(TreeNode):
    """! @all->task.strings_target@{{value.snapshot=*}}"""

    name: str
    retries: int


class TaskStringsTarget(TreeNode):
    snapshot: dict[str, str]


def test_whole_node_into_a_narrow_dict_is_an_error_naming_the_node() -> None:
    assert problems(TaskWholeNodeStrings, TaskStringsTarget) == [
        (
            "error",
            mapping(
                "task.whole_node_strings (TaskWholeNodeStrings)",
                "task.strings_target.snapshot (dict[str, str])",
                "forbidden",
                "not allowed",
                "strict",
            ),
            "declare the target as dict[str, Any] (model_dump() keeps each field's own type)"
            " or as TaskWholeNodeStrings",
        )
    ]


# --- @each element types -----------------------------------------------------------------


class Section(TreeNode):
    title: str
    weight: float


class OtherSection(TreeNode):
    title: str


class TaskTitles(TreeNode):
    sections: list[Section] = Field(
        description="! @each[sections]->task.title_list@{{value.titles=sections.title}}*"
    )


class TaskTitleList(TreeNode):
    titles: list[str]


def test_each_sends_element_values_into_list_elements() -> None:
    assert diagnostics(TaskTitles, TaskTitleList) == ()


class TaskTitleNumbers(TreeNode):
    sections: list[Section] = Field(
        description="! @each[sections]->task.number_list@{{value.numbers=sections.title}}*"
    )


class TaskNumberList(TreeNode):
    numbers: list[int]


def test_each_checks_each_element_against_the_target_element_type() -> None:
    assert problems(TaskTitleNumbers, TaskNumberList) == [
        (
            "error",
            mapping(
                "task.title_numbers.sections.title (str)",
                "task.number_list.numbers[*] (int)",
                "lossy",
                "not allowed",
                "strict",
            ),
            PERMISSIVE_HINT,
        )
    ]


class TaskWholeSections(TreeNode):
    sections: list[Section] = Field(
        description="! @each[sections]->task.section_copies@{{value.copies=sections}}*"
    )


class TaskSectionCopies(TreeNode):
    copies: list[Section]


def test_each_over_a_node_list_sends_one_node_per_iteration() -> None:
    assert diagnostics(TaskWholeSections, TaskSectionCopies) == ()


class TaskSectionsElsewhere(TreeNode):
    sections: list[Section] = Field(
        description="! @each[sections]->task.other_sections@{{value.others=sections}}*"
    )


class TaskOtherSections(TreeNode):
    others: list[OtherSection]


def test_each_element_of_another_model_class_is_unsafe() -> None:
    assert problems(TaskSectionsElsewhere, TaskOtherSections) == [
        (
            "error",
            mapping(
                "task.sections_elsewhere.sections[*] (Section)",
                "task.other_sections.others[*] (OtherSection)",
                "unsafe",
                "not allowed",
                "strict",
            ),
            DEVELOPMENT_HINT,
        )
    ]


class TaskCollected(TreeNode):
    sections: list[Section] = Field(
        description="! @each[sections]->task.collected_target"
        "@{{value.titles=sections.title, value.digest=sections.title,"
        " value.total=sections.weight}}*"
    )


class TaskCollectedTarget(TreeNode):
    titles: list[str]
    digest: str
    total: float


def test_target_with_fewer_levels_receives_the_list_of_values() -> None:
    assert problems(TaskCollected, TaskCollectedTarget) == [
        (
            "error",
            mapping(
                "task.collected.sections.weight (list[float])",
                "task.collected_target.total (float)",
                "forbidden",
                "not allowed",
                "strict",
            ),
            "change the field types: list[float] cannot be converted to float"
            " (see langtree.structure.types._compatibility)",
        )
    ]


class Paragraph(TreeNode):
    text: str


class Chapter(TreeNode):
    paragraphs: list[Paragraph]


class TaskChapters(TreeNode):
    chapters: list[Chapter] = Field(
        description="! @each[chapters]->task.chapter_numbers"
        "@{{value.numbers=chapters.paragraphs.text}}*"
    )


class TaskChapterNumbers(TreeNode):
    numbers: list[int]


def test_each_source_crossing_a_list_beyond_the_iteration_sends_a_list() -> None:
    assert problems(TaskChapters, TaskChapterNumbers) == [
        (
            "error",
            mapping(
                "task.chapters.chapters.paragraphs.text (list[str])",
                "task.chapter_numbers.numbers[*] (int)",
                "forbidden",
                "not allowed",
                "strict",
            ),
            "change the field types: list[str] cannot be converted to int"
            " (see langtree.structure.types._compatibility)",
        )
    ]


# --- @all into a list field --------------------------------------------------------------


class TaskNumberSource(TreeNode):
    numbers: list[int] = Field(description="! @all->task.number_sink@{{value.counts=numbers}}")
    labels: list[str] = Field(description="! @all->task.number_sink@{{value.totals=labels}}")


class TaskNumberSink(TreeNode):
    counts: list[int]
    totals: list[int]


def test_all_writes_a_list_field_whole_and_checks_it_whole() -> None:
    assert problems(TaskNumberSource, TaskNumberSink) == [
        (
            "error",
            mapping(
                "task.number_source.labels (list[str])",
                "task.number_sink.totals (list[int])",
                "lossy",
                "not allowed",
                "strict",
            ),
            PERMISSIVE_HINT,
        )
    ]


# --- Other targets ---------------------------------------------------------------------


class Reader(TreeNode):
    """Read {material}."""

    text: str


class TaskPromptTargets(TreeNode):
    sections: list[Section] = Field(
        description="! @all->reader@{{prompt.material=sections, outputs.material=sections}}"
    )
    reader: Reader


def test_prompt_and_outputs_targets_are_not_type_checked() -> None:
    assert diagnostics(TaskPromptTargets) == ()


# --- Paths through an optional node ----------------------------------------------------


class PaperMeta(TreeNode):
    author: str


class Paper(TreeNode):
    title: str = ""
    meta: PaperMeta | None = None


class TaskPapersEach(TreeNode):
    papers: list[Paper] = Field(
        description="! @each[papers]->task.author_index@{{value.authors=papers.meta.author}}*"
    )


class TaskPapersPluck(TreeNode):
    papers: list[Paper] = Field(
        description="! @all->task.author_index@{{value.authors=papers.*.meta.author}}"
    )


class TaskAuthorIndex(TreeNode):
    authors: list[str]


CROSSING_HINT = (
    "'meta' may be None, and the path then sends None: make the target's type accept None, "
    "or declare 'meta' without None"
)


def test_each_path_through_an_optional_node_may_send_none() -> None:
    assert problems(TaskPapersEach, TaskAuthorIndex) == [
        (
            "error",
            mapping(
                "task.papers_each.papers.meta.author (str | None)",
                "task.author_index.authors[*] (str)",
                "lossy",
                "not allowed",
                "strict",
            ),
            CROSSING_HINT,
        )
    ]


def test_pluck_path_through_an_optional_node_gets_the_same_check() -> None:
    assert problems(TaskPapersPluck, TaskAuthorIndex) == [
        (
            "error",
            mapping(
                "task.papers_pluck.papers.*.meta.author (list[str | None])",
                "task.author_index.authors (list[str])",
                "lossy",
                "not allowed",
                "strict",
            ),
            "'.*.' sends None for a missing value: use '.**.' to leave such values out, "
            "or '.***.' to require every value",
        )
    ]


class TaskPapersEachLoose(TreeNode):
    papers: list[Paper] = Field(
        description="! @each[papers]->task.loose_index@{{value.authors=papers.meta.author}}*"
    )


class TaskPapersPluckLoose(TreeNode):
    papers: list[Paper] = Field(
        description="! @all->task.loose_index@{{value.authors=papers.*.meta.author}}"
    )


class TaskLooseIndex(TreeNode):
    authors: list[str | None]


@pytest.mark.parametrize("task", [TaskPapersEachLoose, TaskPapersPluckLoose], ids=["each", "pluck"])
def test_a_target_that_takes_none_fits_either_form(task: type[TreeNode]) -> None:
    assert diagnostics(task, TaskLooseIndex) == ()


class TaskMaybePapers(TreeNode):
    papers: list[Paper | None] = Field(
        description="! @each[papers]->task.title_index@{{value.titles=papers.title}}*"
    )


class TaskTitleIndex(TreeNode):
    titles: list[str]


def test_each_over_optional_elements_may_send_none_for_their_fields() -> None:
    assert problems(TaskMaybePapers, TaskTitleIndex) == [
        (
            "error",
            mapping(
                "task.maybe_papers.papers.title (str | None)",
                "task.title_index.titles[*] (str)",
                "lossy",
                "not allowed",
                "strict",
            ),
            "the elements of 'papers' may be None, and the path then sends None: make the "
            "target's type accept None, or declare the elements of 'papers' without None",
        )
    ]


class TaskOwnOptional(TreeNode):
    papers: list[Paper] = Field(
        description="! @each[papers]->task.author_index@{{value.authors=papers.title}}*"
    )


def test_a_path_through_required_nodes_sends_no_none() -> None:
    assert diagnostics(TaskOwnOptional, TaskAuthorIndex) == ()
