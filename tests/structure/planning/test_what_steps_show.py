"""A step waits for everything its prompt shows (DESIGN D4), and what no order can give
is refused by ``validate()``.

A prompt shows the node's known values (its context), the ``{name}``s of the texts on
the way down and of the step's fields, and the entries commands send. Each test here
pins one rule with the plan's dependencies, or the exact error.
"""

from pathlib import Path

import pytest
from pydantic import Field

from langtree import RunStructure, StructureError, TreeNode
from langtree.structure.planning._plan import PlanStep
from tests.category_pages import PRODUCTS, TaskCatalogue, TaskCategoryPage

FILE = __file__
SOURCE_LINES = Path(FILE).read_text().splitlines()


def line_of(snippet: str) -> int:
    return next(i for i, line in enumerate(SOURCE_LINES, 1) if snippet in line)


def waits_of(
    *tasks: type[TreeNode], inputs: dict[object, object] | None = None, config: object = None
) -> dict[str, tuple[str, ...]]:
    structure = RunStructure(config)  # type: ignore[arg-type]
    for task in tasks:
        structure.add(task)
    return {step.id: step.depends_on for step in structure.plan(inputs).steps}


def steps_of(*tasks: type[TreeNode]) -> tuple[PlanStep, ...]:
    structure = RunStructure()
    for task in tasks:
        structure.add(task)
    return structure.plan().steps


def error_of(*tasks: type[TreeNode]) -> tuple[str, str, str, int]:
    """The one error ``validate()`` raises: message, hint, the text under its marker, and
    the file line."""
    structure = RunStructure()
    for task in tasks:
        structure.add(task)
    with pytest.raises(StructureError) as caught:
        structure.validate()
    (error,) = caught.value.diagnostics
    start = error.column - 1
    marked = error.source_line[start : start + error.length]
    return error.message, error.hint, marked, error.line


# -- the context: a step waits for the values its node shows ------------------------------


def test_a_step_waits_for_what_an_each_writes_into_the_elements_its_context_shows() -> None:
    assert waits_of(TaskCatalogue, TaskCategoryPage, inputs=PRODUCTS) == {
        "task.catalogue.products:name": (),
        "task.catalogue.products:blurb": ("task.catalogue.products:name",),
        "task.category_page:intro": ("task.catalogue.products:blurb",),
    }


class Finding(TreeNode):
    claim: str = Field(description="One claim.")


class TaskSurvey(TreeNode):
    """! @parallel"""

    findings: list[Finding] = Field(default=[], description="The findings.")
    verdict: str = Field(description="The verdict.")


def test_a_parallel_nodes_step_waits_for_the_steps_below_its_known_fields() -> None:
    assert waits_of(TaskSurvey) == {
        "task.survey.findings:claim": (),
        "task.survey:verdict": ("task.survey.findings:claim",),
    }


class TaskDeclaredSurvey(TreeNode):
    """! @parallel
    ! @context[question]"""

    question: str = Field(default="Why?", description="The question.")
    findings: list[Finding] = Field(default=[], description="The findings.")
    verdict: str = Field(description="The verdict.")


def test_a_node_that_declares_its_context_waits_only_for_what_it_declares() -> None:
    assert waits_of(TaskDeclaredSurvey) == {
        "task.declared_survey.findings:claim": (),
        "task.declared_survey:verdict": (),
    }


class TaskSlugged(TreeNode):
    """! @parallel"""

    topic: str = Field(description="The topic.")
    slug: str = Field(description='! transform("topic | lower")')
    title: str = Field(description="A title.")


def test_a_step_waits_for_the_transforms_of_its_node() -> None:
    assert waits_of(TaskSlugged, inputs={TaskSlugged: {"topic": "Tides"}}) == {
        "task.slugged:slug": (),
        "task.slugged:title": ("task.slugged:slug",),
    }


class TaskTwoModels(TreeNode):
    """! @parallel"""

    title: str = Field(description="A title.")
    summary: str = Field(description='! llm("strong")\nA summary.')


def test_steps_of_a_parallel_node_never_show_each_others_fields() -> None:
    steps = {step.id: step for step in steps_of(TaskTwoModels)}

    assert steps["task.two_models:title"].depends_on == ()
    assert steps["task.two_models:title"].unseen == ("summary",)
    assert steps["task.two_models:summary"].unseen == ("title",)


class TaskSequence(TreeNode):
    title: str = Field(description="A title.")
    summary: str = Field(description="A summary.")


def test_steps_in_the_declared_order_hide_nothing() -> None:
    steps = steps_of(TaskSequence)

    assert [(step.id, step.unseen) for step in steps] == [
        ("task.sequence:title", ()),
        ("task.sequence:summary", ()),
    ]


class Note(TreeNode):
    label: str = Field(description="The label.")


class Part(TreeNode):
    title: str = Field(description="The title.")


class TaskSplitWithCopy(TreeNode):
    """! @parallel
    ! @each[parts]->notes@{{value.label=parts.title}}*"""

    parts: list[Part] = Field(description="The parts.")
    notes: list[Note] = Field(default=[], description="One note per part.")
    tags: str = Field(description='! llm("strong")\nTags.')


def test_a_step_waits_for_what_commands_make_of_a_sibling_steps_fields() -> None:
    steps = {step.id: step for step in steps_of(TaskSplitWithCopy)}

    assert steps["task.split_with_copy:tags"].depends_on == ("task.split_with_copy:parts",)
    assert steps["task.split_with_copy:tags"].unseen == ()


# -- {name}s: the field, the values below it, the texts that lead to the node ----------------


class TaskRoundup(TreeNode):
    """! @parallel"""

    findings: list[Finding] = Field(default=[], description="The findings.")
    summary: str = Field(description="Summarise {findings}.")


def test_a_name_of_a_node_field_waits_for_the_values_below_it() -> None:
    assert waits_of(TaskRoundup)["task.roundup:summary"] == ("task.roundup.findings:claim",)


class TaskTopical(TreeNode):
    """! @parallel"""

    topic: str = Field(description="The topic.")
    findings: list[Finding] = Field(default=[], description="Findings about {topic}.")


def test_a_name_in_the_description_of_the_field_leading_to_a_node_is_waited_for() -> None:
    assert waits_of(TaskTopical)["task.topical.findings:claim"] == ("task.topical:topic",)


class TaskSelfShown(TreeNode):
    """Compare {findings} with each other."""

    findings: list[Finding] = Field(default=[], description="The findings.")


def test_a_name_that_shows_a_value_to_the_steps_inside_it_is_an_error() -> None:
    assert error_of(TaskSelfShown) == (
        "{findings} shows the value of 'findings' to the steps inside it (those of "
        "'task.self_shown.findings'), which write part of that value",
        "a step cannot wait for a value it writes: name 'findings' in the description of a "
        "field generated after it, or leave this text out of those steps' prompts with the "
        "'outline' setting",
        "{findings}",
        line_of('"""Compare {findings} with each other."""'),
    )


def test_a_name_in_a_text_the_outline_leaves_out_is_no_error() -> None:
    structure = RunStructure({"outline": "node"})
    structure.add(TaskSelfShown)

    assert structure.validate() == ()


# -- cycles that go through commands ---------------------------------------------------------


class TaskEcho(TreeNode):
    title: str = Field(
        description="A title, unlike {echoes}.\n! @all->task.echo@{{value.echoes=title}}"
    )
    echoes: str = Field(default="", description="The title again.")


class TaskCounted(TreeNode):
    size: str = Field(
        description='! transform("copies | length")\n! @all->task.counted@{{value.copies=size}}'
    )
    copies: str = Field(default="", description="The size again.")


@pytest.mark.parametrize(
    ("task", "message", "hint", "marked", "line"),
    [
        pytest.param(
            TaskEcho,
            "Dependency cycle: task.echo:title -> task.echo:title",
            "'task.echo:title' reads a value that commands make from its own output: remove "
            "the name it reads, or one of the commands that link them",
            "{echoes}",
            line_of('description="A title, unlike {echoes}'),
            id="a-step-shows-what-commands-make-of-its-own-output",
        ),
        pytest.param(
            TaskCounted,
            "Dependency cycle: task.counted:size -> task.counted:size",
            "'task.counted:size' reads a value that commands make from its own output: remove "
            "the name it reads, or one of the commands that link them",
            """! transform("copies | length")""",
            line_of("""description='! transform("copies | length")"""),
            id="a-transform-reads-what-commands-make-of-its-own-value",
        ),
    ],
)
def test_reading_what_commands_make_of_ones_own_output_is_a_cycle(
    task: type[TreeNode], message: str, hint: str, marked: str, line: int
) -> None:
    assert error_of(task) == (message, hint, marked, line)


class Row(TreeNode):
    label: str = Field(description="The label.")


class TaskLeft(TreeNode):
    rows: list[Row] = Field(
        default=[], description="! @each[rows]->task.right.rows@{{value.label=rows.label}}*"
    )


class TaskRight(TreeNode):
    rows: list[Row] = Field(
        default=[], description="! @each[rows]->task.left.rows@{{value.label=rows.label}}*"
    )


def test_commands_that_wait_for_each_other_are_a_cycle() -> None:
    assert error_of(TaskLeft, TaskRight) == (
        "Dependency cycle between commands: @each in 'TaskLeft.rows' -> @each in "
        "'TaskRight.rows' -> @each in 'TaskLeft.rows'",
        "each command reads a field that the next one writes, so none can be carried out "
        "first: remove one of them, or have one read a field no command writes",
        "! @each[rows]->task.right.rows@{{value.label=rows.label}}*",
        line_of('default=[], description="! @each[rows]->task.right.rows'),
    )


class TaskTwoWriters(TreeNode):
    """! @all->task.two_writers.rows@{{value.label=first}}*
    ! @all->task.two_writers.rows@{{value.label=second}}*"""

    first: str = Field(default="a", description="The first label.")
    second: str = Field(default="b", description="The second label.")
    rows: list[Row] = Field(default=[], description="The rows.")


def test_commands_that_write_one_field_go_in_definition_order_without_a_cycle() -> None:
    structure = RunStructure()
    structure.add(TaskTwoWriters)

    (warning,) = structure.validate()
    assert warning.message.startswith("Field 'label' of 'task.two_writers.rows' already receives")
