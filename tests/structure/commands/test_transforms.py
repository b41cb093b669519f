"""Transform fields at validate() time: what a transform may read and where it may stand."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field, create_model

from langtree import RunStructure, TreeNode, parse_command
from langtree.dsl._commands import ExecutionCommand
from tests.structure.validated import diagnostics, problems

SOURCE_LINES = Path(__file__).read_text().splitlines()


class Finding(TreeNode):
    id: str
    claim: str
    confidence: float


class TaskResearch(TreeNode):
    """Research the topic."""

    topic: str
    findings: list[Finding] = Field(description="What you found.")
    strong_ids: list[str] = Field(
        description="""! transform(
            "findings | selectattr('confidence', 'ge', 0.8) | map(attribute='id') | list"
        )"""
    )
    count: int = Field(description='! transform("findings | length")')
    summary: str = Field(description="Summarise the {count} findings.")


def test_the_command_parses_like_any_builtin() -> None:
    command = parse_command('! transform("items | length")')
    assert command == ExecutionCommand(command_name="transform", arguments=("items | length",))
    assert command.to_text() == '! transform("items | length")'


def test_the_command_takes_a_string() -> None:
    with pytest.raises(
        Exception, match=r"transform\(\) argument 'expression' must be a string, got 3"
    ):
        parse_command("! transform(3)")


def test_a_valid_tree_has_no_problems() -> None:
    assert diagnostics(TaskResearch) == ()


def test_each_transform_is_a_step_of_its_own_after_what_it_reads() -> None:
    structure = RunStructure()
    structure.add(TaskResearch)
    steps = {step.id: step for step in structure.plan({TaskResearch: {"topic": "t"}}).steps}
    count = steps["task.research:count"]
    assert count.transform is not None
    assert count.transform.expression == "findings | length"
    assert count.transform.names == ("findings",)
    assert count.model is None
    assert count.depends_on == ("task.research:findings",)
    # The summary names {count}, and its context shows strong_ids.
    assert steps["task.research:summary"].depends_on == (
        "task.research:count",
        "task.research:findings",
        "task.research:strong_ids",
    )
    assert steps["task.research:findings"].transform is None


def test_the_plan_diagram_shows_the_expression() -> None:
    structure = RunStructure()
    structure.add(TaskResearch)
    mermaid = structure.plan({TaskResearch: {"topic": "t"}}).to_mermaid()
    assert 's2["task.research\ncount\ntransform: findings | length"]' in mermaid


def test_no_prompt_is_assembled_for_a_transform() -> None:
    structure = RunStructure()
    structure.add(TaskResearch)
    prompts = structure.prompts({TaskResearch: {"topic": "t"}})
    assert [prompt.step_id for prompt in prompts] == [
        "task.research:findings",
        "task.research:summary",
    ]
    assert "## Count\n\n[pending: produced by step task.research:count]" in prompts[1].text


class TaskOutOfOrder(TreeNode):
    """A transform declared before what it reads waits for it: it has no declared order."""

    total: float = Field(description='! transform("prices | sum")')
    prices: list[float] = Field(description="The prices.")


def test_a_transform_is_in_no_declared_order() -> None:
    structure = RunStructure()
    structure.add(TaskOutOfOrder)
    [prices, total] = structure.plan().steps
    assert (prices.id, total.id) == ("task.out_of_order:prices", "task.out_of_order:total")
    assert total.depends_on == ("task.out_of_order:prices",)


class TaskCopy(TreeNode):
    """A transform that is one name copies that field."""

    prices: list[float] = Field(description="The prices.")
    copied: list[float] = Field(description='! transform("prices")')


class TaskCopyItself(TreeNode):
    itself: float = Field(description='! transform("itself")')


def test_a_transform_that_is_a_bare_name_reads_that_field() -> None:
    structure = RunStructure()
    structure.add(TaskCopy)
    [prices, copied] = structure.plan().steps
    assert copied.transform is not None
    assert copied.transform.names == ("prices",)
    assert copied.depends_on == (prices.id,)
    assert problems(TaskCopyItself) == [
        (
            "error",
            "transform() of 'TaskCopyItself.itself' reads 'itself', the field it computes",
            "read the fields it is computed from",
        )
    ]


class Section(TreeNode):
    title: str
    words: list[str] = Field(description="The section's key words.")
    word_count: int = Field(description='! transform("words | length")')
    heading: str = Field(description="! transform(\"topic ~ ': ' ~ title\")")


class TaskDocument(TreeNode):
    topic: str
    sections: list[Section] = Field(description="The sections.")


def test_names_resolve_on_the_node_or_the_nearest_node_above() -> None:
    structure = RunStructure()
    structure.add(TaskDocument)
    plan = structure.plan({TaskDocument: {"topic": "t", "sections": [{"title": "A"}]}})
    steps = {step.id: step for step in plan.steps}
    assert steps["task.document.sections:word_count"].depends_on == (
        "task.document.sections:words",
    )
    assert steps["task.document.sections:heading"].depends_on == ()


def counting(expression: str) -> type[TreeNode]:
    """``TaskCounting``: a list of ``items`` and a ``count`` computed by ``expression``."""
    count = Field(description=f'! transform("{expression}")')
    return create_model(
        "TaskCounting", __base__=TreeNode, items=(list[str], ...), count=(int, count)
    )


# Written out rather than made by counting(): the rendered error shows its source line.
class TaskUnknownName(TreeNode):
    items: list[str]
    count: int = Field(description='! transform("itemz | length")')


class TaskSelf(TreeNode):
    count: int = Field(description='! transform("count + 1")')


@pytest.mark.parametrize(
    ("task", "message", "hint"),
    [
        pytest.param(
            counting("{{ items | length }}"),
            "transform() takes a Jinja2 expression, not a template: '{{ items | length }}'",
            "remove the '{{' and '}}', e.g. transform(\"items | map(attribute='id') | list\")",
            id="template",
        ),
        pytest.param(
            counting("items |"),
            "transform() expression 'items |' is not a valid Jinja2 expression: "
            "unexpected end of template, expected 'name'.",
            "write one Jinja2 expression over the node's fields, e.g. "
            "transform(\"items | map(attribute='id') | list\")",
            id="syntax",
        ),
        pytest.param(
            counting("items | lenght"),
            "transform() expression 'items | lenght' is not a valid Jinja2 expression: "
            "No filter named 'lenght'.",
            "write one Jinja2 expression over the node's fields, e.g. "
            "transform(\"items | map(attribute='id') | list\")",
            id="unknown-filter",
        ),
        pytest.param(
            TaskUnknownName,
            "transform() of 'TaskUnknownName.count' reads 'itemz', which is no field of "
            "'TaskUnknownName' or of a node above it",
            "did you mean 'items'? it can read 'items'",
            id="unknown-name",
        ),
        pytest.param(
            TaskSelf,
            "transform() of 'TaskSelf.count' reads 'count', the field it computes",
            "read the fields it is computed from",
            id="itself",
        ),
    ],
)
def test_an_expression_that_cannot_run_is_an_error(
    task: type[TreeNode], message: str, hint: str
) -> None:
    assert problems(task) == [("error", message, hint)]


def test_the_error_points_at_the_command() -> None:
    [diagnostic] = diagnostics(TaskUnknownName)
    line = next(i for i, text in enumerate(SOURCE_LINES, 1) if "itemz | length" in text)
    assert diagnostic.render() == (
        "error: transform() of 'TaskUnknownName.count' reads 'itemz', which is no field of "
        "'TaskUnknownName' or of a node above it\n"
        "        count: int = Field(description='! transform(\"itemz | length\")')\n"
        "                                        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        f"  in TaskUnknownName.count ({__file__}:{line})\n"
        "  hint: did you mean 'items'? it can read 'items'"
    )


class TaskGlobals(TreeNode):
    numbers: list[int] = Field(description='! transform("range(3) | list")')


def test_jinja_globals_are_no_fields_to_wait_for() -> None:
    assert diagnostics(TaskGlobals) == ()


class TaskInDocstring(TreeNode):
    """! transform("1")"""

    count: int


class TaskWithLlm(TreeNode):
    items: list[str]
    count: int = Field(
        description="""! transform("items | length")
        ! llm("fast")"""
    )


class TaskWithDefault(TreeNode):
    items: list[str]
    count: int = Field(0, description='! transform("items | length")')


class TaskTwice(TreeNode):
    items: list[str]
    count: int = Field(
        description="""! transform("items | length")
        ! transform("items | count")"""
    )


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        pytest.param(
            TaskInDocstring,
            [
                (
                    "error",
                    "transform() computes a field: it belongs in a field's description, not in "
                    "the docstring of 'TaskInDocstring'",
                    "move it to the description of the field it computes",
                )
            ],
            id="docstring",
        ),
        pytest.param(
            TaskWithLlm,
            [
                (
                    "error",
                    "'TaskWithLlm.count' is computed by transform() without a model call, so "
                    "llm() has no effect on it",
                    "remove llm(...), or remove transform() to have a model generate the field",
                )
            ],
            id="with-llm",
        ),
        pytest.param(
            TaskWithDefault,
            [
                (
                    "error",
                    "'TaskWithDefault.count' has a default and a transform(): the default makes "
                    "the field known before the run, so the transform would never run",
                    "remove the default (a transform always computes the field), or remove "
                    "transform() to keep the default",
                )
            ],
            id="default",
        ),
        pytest.param(
            TaskTwice,
            [("error", "More than one transform() in the same text", "keep one transform()")],
            id="twice",
        ),
    ],
)
def test_a_transform_where_it_cannot_take_effect_is_an_error(
    task: type[TreeNode], expected: list[tuple[str, str, str]]
) -> None:
    assert problems(task, inputs=None) == expected


class TaskOptionalDefault(TreeNode):
    items: list[str]
    count: int | None = Field(None, description='! transform("items | length")')


def test_a_none_default_leaves_the_field_to_its_transform() -> None:
    assert diagnostics(TaskOptionalDefault) == ()


class TaskMappedInto(TreeNode):
    """! @all->task.mapped_into@{{value.count=total}}"""

    total: int
    count: int = Field(description='! transform("total * 2")')


def test_a_value_mapping_into_a_transform_field_is_an_error() -> None:
    assert problems(TaskMappedInto) == [
        (
            "error",
            "This command writes 'TaskMappedInto.count', which its transform() computes",
            "remove the mapping, or remove transform() from 'TaskMappedInto.count' to let the "
            "mapping write it",
        )
    ]


class Inner(TreeNode):
    items: list[str]
    count: int = Field(description='! transform("items | length")')


class TaskWhole(TreeNode):
    inner: Inner = Field(description="Generated whole by the root's step.")


def test_a_transform_inside_a_node_generated_whole_is_an_error() -> None:
    assert problems(TaskWhole) == [
        (
            "error",
            "transform() cannot compute 'Inner.count': 'Inner' is generated whole at "
            "task.whole.inner, inside the step of 'TaskWhole.inner', whose model generates "
            "every field of it",
            "give 'inner' a value (a default, or a partial node in the inputs) so that the "
            "fields below it get steps of their own, or compute the value in a field that is "
            "not generated whole",
        )
    ]


def test_a_node_given_in_the_inputs_gets_its_transform_step() -> None:
    structure = RunStructure()
    structure.add(TaskWhole)
    plan = structure.plan({TaskWhole: {"inner": {"items": ["a"]}}})
    assert [step.id for step in plan.steps] == ["task.whole.inner:count"]


class TaskCycle(TreeNode):
    """! @parallel"""

    first: int = Field(description='! transform("second + 1")')
    second: int = Field(description='! transform("first + 1")')


def test_transforms_that_read_each_other_are_a_cycle() -> None:
    [(severity, message, _)] = problems(TaskCycle)
    assert severity == "error"
    assert message == (
        "Dependency cycle: task.cycle:first -> task.cycle:second -> task.cycle:first"
    )


class TaskReadsVariable(TreeNode):
    """! expression="items | length\""""

    items: list[str]
    count: int = Field(description="! transform(expression)")


def test_the_expression_may_come_from_an_assembly_variable() -> None:
    structure = RunStructure()
    structure.add(TaskReadsVariable)
    [step] = structure.plan({TaskReadsVariable: {"items": []}}).steps
    assert step.transform is not None
    assert step.transform.expression == "items | length"
