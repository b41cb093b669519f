"""The execution plan: steps (DESIGN D3) and their dependencies (DESIGN D4)."""

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field, create_model

from langtree import LLMProvider, RunStructure, StructureError, TreeNode
from langtree.errors import Diagnostic
from langtree.structure.planning._plan import ExecutionPlan, PlanStep
from langtree.testing import FakeChatModel
from tests.structure.planning.each_trees import Row, TaskBook, TaskDigest, TaskLabels, TaskTable
from tests.structure.validated import structure_of

FILE = __file__
SOURCE_LINES = Path(FILE).read_text().splitlines()


def line_of(snippet: str) -> int:
    """The 1-based line of this file where ``snippet`` first stands."""
    return next(i for i, line in enumerate(SOURCE_LINES, 1) if snippet in line)


def plan_of(
    *tasks: type[TreeNode],
    inputs: dict[object, object] | None = None,
    config: dict[str, str] | None = None,
) -> ExecutionPlan:
    return structure_of(*tasks, config=config).plan(inputs)


def steps_of(*tasks: type[TreeNode], inputs: dict[object, object] | None = None) -> list[str]:
    return [step.id for step in plan_of(*tasks, inputs=inputs).steps]


def waits_of(*tasks: type[TreeNode]) -> dict[str, tuple[str, ...]]:
    """Each step's prerequisites, by step id."""
    return {step.id: step.depends_on for step in plan_of(*tasks).steps}


def errors_of(*tasks: type[TreeNode]) -> tuple[Diagnostic, ...]:
    with pytest.raises(StructureError) as caught:
        structure_of(*tasks).validate()
    return caught.value.diagnostics


# ---------------------------------------------------------------------------------------
# Steps (D3)
# ---------------------------------------------------------------------------------------


class TaskEssay(TreeNode):
    """Write an essay."""

    title: str
    outline: str = "three parts"
    body: str
    ending: str


def test_a_sequential_node_has_one_step_per_generated_field_in_order() -> None:
    assert steps_of(TaskEssay) == ["task.essay:title", "task.essay:body", "task.essay:ending"]


def test_a_sequential_node_chains_its_steps() -> None:
    assert waits_of(TaskEssay) == {
        "task.essay:title": (),
        "task.essay:body": ("task.essay:title",),
        "task.essay:ending": ("task.essay:body",),
    }


class TaskParallel(TreeNode):
    """! @parallel"""

    title: str
    outline: str = "three parts"
    body: str


class TaskTogether(TreeNode):
    """! together"""

    title: str
    outline: str = "three parts"
    body: str


class TaskUnmarked(TreeNode):
    title: str
    outline: str = "three parts"
    body: str


@pytest.mark.parametrize(
    ("task", "config", "step"),
    [
        pytest.param(TaskParallel, None, "task.parallel:title+body", id="parallel"),
        pytest.param(TaskTogether, None, "task.together:title+body", id="together"),
        pytest.param(
            TaskUnmarked,
            {"default_modifier": "parallel"},
            "task.unmarked:title+body",
            id="default-modifier",
        ),
    ],
)
def test_a_parallel_node_has_one_step_for_all_generated_fields(
    task: type[TreeNode], config: dict[str, str] | None, step: str
) -> None:
    (only,) = plan_of(task, config=config).steps

    assert (only.id, only.fields, only.modifier) == (step, ("title", "body"), "parallel")


class TaskOwnModel(TreeNode):
    """! @parallel"""

    title: str
    body: str = Field(description='! llm("large")')
    tone: str


class TaskOwnResample(TreeNode):
    """! @parallel"""

    title: str
    body: str = Field(description="! resample(3)")
    tone: str


@pytest.mark.parametrize(
    ("task", "model", "resample"),
    [
        pytest.param(TaskOwnModel, "large", 1, id="llm"),
        pytest.param(TaskOwnResample, None, 3, id="resample"),
    ],
)
def test_a_field_with_its_own_llm_or_resample_gets_its_own_step(
    task: type[TreeNode], model: str | None, resample: int
) -> None:
    shared, own = plan_of(task).steps

    assert (shared.fields, shared.model, shared.resample) == (("title", "tone"), None, 1)
    assert (own.fields, own.model, own.resample) == (("body",), model, resample)


class Profile(TreeNode):
    """A person's profile."""

    name: str
    bio: str


class TaskPerson(TreeNode):
    profile: Profile


class TaskTeam(TreeNode):
    members: list[Profile]


@pytest.mark.parametrize(
    ("task", "step"),
    [
        pytest.param(TaskPerson, "task.person:profile", id="node"),
        pytest.param(TaskTeam, "task.team:members", id="node-list"),
    ],
)
def test_a_generated_node_field_is_produced_whole_in_one_step(
    task: type[TreeNode], step: str
) -> None:
    assert steps_of(task) == [step]


class Line(TreeNode):
    text: str


class Stanza(TreeNode):
    lines: list[Line] = Field(default=[])
    rhyme: str


class TaskPoem(TreeNode):
    stanzas: list[Stanza] = Field(default=[])


class TaskGrid(TreeNode):
    cells: list[list[Line]] = Field(default=[])


class TaskCover(TreeNode):
    cover: Line = Field(default_factory=lambda: Line(text=""))


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        pytest.param(TaskCover, [("task.cover.cover:text", "task.cover.cover", 0)], id="node"),
        pytest.param(TaskGrid, [("task.grid.cells:text", "task.grid.cells[*][*]", 2)], id="grid"),
        pytest.param(
            TaskPoem,
            [
                ("task.poem.stanzas.lines:text", "task.poem.stanzas[*].lines[*]", 2),
                ("task.poem.stanzas:rhyme", "task.poem.stanzas[*]", 1),
            ],
            id="nested-lists",
        ),
    ],
)
def test_a_known_node_field_is_descended_into(
    task: type[TreeNode], expected: list[tuple[str, str, int]]
) -> None:
    steps = plan_of(task).steps

    assert [(step.id, step.element_path, step.list_levels) for step in steps] == expected


def test_a_supplied_field_has_no_step() -> None:
    assert steps_of(TaskEssay, inputs={TaskEssay: {"title": "Tides"}}) == [
        "task.essay:body",
        "task.essay:ending",
    ]


def test_a_supplied_node_list_is_descended_into() -> None:
    inputs: dict[object, object] = {"task.team": {"members": [{"name": "Ada"}]}}

    assert steps_of(TaskTeam, inputs=inputs) == ["task.team.members:bio"]


class Finding(TreeNode):
    claim: str


class TaskStudy(TreeNode):
    question: str
    findings: list[Finding] = Field(default=[])
    answer: str


def test_a_sequential_parent_runs_a_descended_field_after_the_fields_before_it() -> None:
    assert plan_of(TaskStudy).step("task.study.findings:claim").depends_on == (
        "task.study:question",
    )


def test_a_sequential_parent_runs_the_fields_after_a_descended_field_after_it() -> None:
    assert plan_of(TaskStudy).step("task.study:answer").depends_on == (
        "task.study.findings:claim",
        "task.study:question",
    )


class TaskSurvey(TreeNode):
    """! @parallel"""

    question: str
    findings: list[Finding] = Field(default=[])


def test_a_parallel_parents_steps_wait_for_the_descended_fields_their_context_shows() -> None:
    assert waits_of(TaskSurvey) == {
        "task.survey:question": ("task.survey.findings:claim",),
        "task.survey.findings:claim": (),
    }


# ---------------------------------------------------------------------------------------
# Dependencies from commands and runtime variables (D4)
# ---------------------------------------------------------------------------------------


class TaskAbstract(TreeNode):
    """! @parallel"""

    topic: str = Field(description="! @all->task.review@{{prompt.topic=topic}}")
    abstract: str


class TaskReview(TreeNode):
    """Review a paper on {topic}."""

    review: str


# TaskBook sends each chapter's summary to TaskDigest.summaries; TaskLabels sends each label
# to a row of TaskTable.rows (tests/structure/planning/each_trees.py).
@pytest.mark.parametrize(
    ("tasks", "step", "waits_for"),
    [
        pytest.param(
            (TaskBook, TaskDigest),
            "task.digest:digest",
            ("task.book.chapters:summary",),
            id="each",
        ),
        pytest.param(
            (TaskAbstract, TaskReview),
            "task.review:review",
            ("task.abstract:topic+abstract",),
            id="all",
        ),
    ],
)
def test_a_destination_waits_for_the_step_that_produces_its_data(
    tasks: tuple[type[TreeNode], ...], step: str, waits_for: tuple[str, ...]
) -> None:
    assert plan_of(*tasks).step(step).depends_on == waits_for


def test_the_elements_an_each_creates_are_generated_after_its_data() -> None:
    assert waits_of(TaskLabels, TaskTable) == {
        "task.labels:labels": (),
        "task.table.rows:detail": ("task.labels:labels",),
        "task.table:caption": ("task.table.rows:detail",),
    }


class TaskTheme(TreeNode):
    theme: str = Field(description="! @all->task.gallery.rows@{{value.label=theme}}*")


class TaskGallery(TreeNode):
    rows: list[Row]


def test_a_list_generated_whole_waits_for_what_is_broadcast_into_it() -> None:
    assert plan_of(TaskTheme, TaskGallery).step("task.gallery:rows").depends_on == (
        "task.theme:theme",
    )


class TaskBrief(TreeNode):
    brief: str = Field(description="! @all->task.album.caption@{{prompt.brief=brief}}")


class TaskAlbum(TreeNode):
    """! @parallel"""

    rows: list[Row] = Field(default=[])
    caption: str = Field(description="In the spirit of {brief}.")


class TaskMemo(TreeNode):
    memo: str = Field(description="! @all->task.folder@{{outputs.memo=memo}}")


class TaskFolder(TreeNode):
    """! @parallel"""

    rows: list[Row] = Field(default=[])
    caption: str


@pytest.mark.parametrize(
    ("tasks", "expected"),
    [
        pytest.param(
            (TaskBrief, TaskAlbum),
            {
                "task.album.rows:label": (),
                "task.album.rows:detail": ("task.album.rows:label",),
                "task.album:caption": ("task.album.rows:detail", "task.brief:brief"),
                "task.brief:brief": (),
            },
            id="leaf-destination",
        ),
        pytest.param(
            (TaskMemo, TaskFolder),
            {
                "task.memo:memo": (),
                "task.folder:caption": ("task.folder.rows:detail", "task.memo:memo"),
                "task.folder.rows:label": ("task.memo:memo",),
                "task.folder.rows:detail": ("task.folder.rows:label", "task.memo:memo"),
            },
            id="node-destination",
        ),
    ],
)
def test_the_steps_under_a_destination_wait_for_its_data(
    tasks: tuple[type[TreeNode], ...], expected: dict[str, tuple[str, ...]]
) -> None:
    assert waits_of(*tasks) == expected


class Evidence(TreeNode):
    fact: str


class TaskDossier(TreeNode):
    """! @all->task.ruling@{{outputs.dossier=*}}"""

    evidence: list[Evidence] = Field(default=[])


class TaskRuling(TreeNode):
    ruling: str


def test_a_whole_node_source_waits_for_the_steps_below_it() -> None:
    assert plan_of(TaskDossier, TaskRuling).step("task.ruling:ruling").depends_on == (
        "task.dossier.evidence:fact",
    )


class Point(TreeNode):
    text: str = Field(description="A point about {topic}.")


class TaskOutline(TreeNode):
    """! @parallel"""

    points: list[Point] = Field(default=[])
    topic: str


class Caption(TreeNode):
    """A caption that names {subject}."""

    words: str


class TaskPhoto(TreeNode):
    """! @parallel"""

    subject: str
    caption: Caption


@pytest.mark.parametrize(
    ("task", "step", "waits_for"),
    [
        pytest.param(TaskOutline, "task.outline.points:text", ("task.outline:topic",), id="field"),
        pytest.param(TaskPhoto, "task.photo:caption", ("task.photo:subject",), id="nested-text"),
    ],
)
def test_a_runtime_variable_makes_a_step_wait_for_the_field(
    task: type[TreeNode], step: str, waits_for: tuple[str, ...]
) -> None:
    assert plan_of(task).step(step).depends_on == waits_for


class TaskNotes(TreeNode):
    notes: str = Field(description="! @all->task.letter@{{prompt.notes=notes}}")


class TaskLetter(TreeNode):
    body: str = Field(description="Use {notes}.")
    notes: str


def test_a_prompt_mapping_takes_precedence_over_a_field_of_the_same_name() -> None:
    assert plan_of(TaskNotes, TaskLetter).step("task.letter:body").depends_on == (
        "task.notes:notes",
    )


class TaskPitch(TreeNode):
    """! @parallel"""

    product: str
    slogan: str = Field(description="A slogan for {product}.")
    price: str


def test_a_parallel_field_that_needs_a_sibling_moves_to_a_follow_up_step() -> None:
    assert waits_of(TaskPitch) == {
        "task.pitch:product+price": (),
        "task.pitch:slogan": ("task.pitch:product+price",),
    }


class TaskQuestion(TreeNode):
    """! @parallel"""

    question: str = Field(description="A question that {answer} answers.")
    answer: str = Field(description="The answer to {question}.")
    note: str


def test_parallel_fields_that_need_each_other_are_a_cycle() -> None:
    (error,) = errors_of(TaskQuestion)

    assert (error.message, error.field_name, error.line) == (
        "Dependency cycle: task.question:question -> task.question:answer "
        "-> task.question:question",
        "question",
        line_of("A question that {answer} answers."),
    )


def test_supplying_one_of_two_fields_that_need_each_other_resolves_the_cycle() -> None:
    assert steps_of(TaskQuestion, inputs={TaskQuestion: {"answer": "42"}}) == [
        "task.question:question+note"
    ]


# ---------------------------------------------------------------------------------------
# Errors against the declared order, cycles
# ---------------------------------------------------------------------------------------


class TaskBackwards(TreeNode):
    summary: str = Field(description="Summarise {details}.")
    details: str


def test_a_sequential_field_that_needs_a_later_sibling_is_an_error() -> None:
    (error,) = errors_of(TaskBackwards)

    assert error == Diagnostic(
        severity="error",
        message="In @sequential 'TaskBackwards', 'summary' needs 'details', "
        "which is generated after it",
        hint="declare 'details' before 'summary', make the node @parallel, give the field a "
        "value, or supply it in the inputs (validate(inputs) checks with them)",
        class_name="TaskBackwards",
        field_name="summary",
        file=FILE,
        line=line_of("Summarise {details}."),
        column=49,
        source_line='    summary: str = Field(description="Summarise {details}.")',
        length=9,
    )


class TaskHinted(TreeNode):
    early: str = Field(description="Uses {hint}.")
    late: str = Field(description="! @all->early@{{prompt.hint=late}}")


def test_a_command_that_feeds_an_earlier_sequential_field_is_an_error_at_the_command() -> None:
    (error,) = errors_of(TaskHinted)

    assert (error.message, error.hint, error.field_name, error.line, error.column) == (
        "In @sequential 'TaskHinted', 'early' needs 'late', which is generated after it",
        "declare 'late' before 'early', make the node @parallel, give the field a value, or "
        "supply it in the inputs (validate(inputs) checks with them)",
        "late",
        line_of("! @all->early@{{prompt.hint=late}}"),
        36,
    )


def test_supplying_the_later_sibling_lets_the_plan_through() -> None:
    assert steps_of(TaskBackwards, inputs={TaskBackwards: {"details": "..."}}) == [
        "task.backwards:summary"
    ]


def test_validate_plan_and_run_agree_on_a_later_sibling_the_caller_supplies() -> None:
    structure = RunStructure(provider=LLMProvider({"default": FakeChatModel()}))
    structure.add(TaskBackwards)
    inputs = {TaskBackwards: {"details": "the details"}}

    assert structure.validate(inputs) == ()
    assert [step.id for step in structure.plan(inputs).steps] == ["task.backwards:summary"]
    assert structure.run(inputs)[TaskBackwards].details == "the details"
    with pytest.raises(StructureError) as without_inputs:
        structure.validate()
    with pytest.raises(StructureError) as run_without_inputs:
        structure.run()
    assert without_inputs.value.diagnostics == run_without_inputs.value.diagnostics


class Claim(TreeNode):
    text: str = Field(description="A claim that leads to {verdict}.")


class TaskTrial(TreeNode):
    claims: list[Claim] = Field(default=[])
    verdict: str


def test_a_descended_field_that_needs_a_later_sibling_is_an_error() -> None:
    (error,) = errors_of(TaskTrial)

    assert (error.message, error.class_name, error.field_name) == (
        "In @sequential 'TaskTrial', 'claims' needs 'verdict', which is generated after it",
        "Claim",
        "text",
    )


class TaskAlpha(TreeNode):
    """Alpha, after {beta_note}."""

    alpha_note: str = Field(description="! @all->task.beta@{{prompt.alpha_note=alpha_note}}")


class TaskBeta(TreeNode):
    """Beta, after {alpha_note}."""

    beta_note: str = Field(description="! @all->task.alpha@{{prompt.beta_note=beta_note}}")


def test_a_cycle_between_tasks_is_an_error_naming_every_step() -> None:
    (error,) = errors_of(TaskAlpha, TaskBeta)

    assert (error.message, error.hint) == (
        "Dependency cycle: task.alpha:alpha_note -> task.beta:beta_note -> task.alpha:alpha_note",
        "each step on the cycle waits for the next: remove one of the commands or runtime "
        "variables that link 'task.alpha', 'task.beta'",
    )


def test_plan_raises_when_the_structure_does_not_validate() -> None:
    with pytest.raises(StructureError) as caught:
        plan_of(TaskAlpha, TaskBeta)

    assert [d.message.split(":")[0] for d in caught.value.diagnostics] == ["Dependency cycle"]


# ---------------------------------------------------------------------------------------
# ExecutionPlan
# ---------------------------------------------------------------------------------------


def test_step_returns_the_step_with_the_id() -> None:
    assert plan_of(TaskEssay).step("task.essay:body") == PlanStep(
        id="task.essay:body",
        node_tag="task.essay",
        element_path="task.essay",
        fields=("body",),
        modifier="sequential",
        model=None,
        resample=1,
        list_levels=0,
        depends_on=("task.essay:title",),
    )


def test_step_raises_key_error_for_an_unknown_id() -> None:
    with pytest.raises(KeyError, match=r"task\.essay:missing"):
        plan_of(TaskEssay).step("task.essay:missing")


class Scene(TreeNode):
    """! @parallel"""

    setting: str
    action: str = Field(description="! resample(2)")


class TaskScript(TreeNode):
    premise: str = Field(description='! llm("large")')
    scenes: list[Scene] = Field(default=[])


def test_to_mermaid_draws_one_box_per_step_and_an_arrow_per_dependency() -> None:
    assert plan_of(TaskScript).to_mermaid() == "\n".join(
        [
            "flowchart TD",
            '    s0["task.script\npremise\nmodel: large"]',
            '    s1["task.script.scenes[#42;]\nsetting"]',
            '    s2["task.script.scenes[#42;]\naction\nresample: 2"]',
            "    s0 --> s1",
            "    s0 --> s2",
        ]
    )


class TaskQuoted(TreeNode):
    answer: str = Field(description="""! llm('gpt "4" & co')""")


def test_to_mermaid_escapes_quotes_in_labels() -> None:
    assert plan_of(TaskQuoted).to_mermaid() == "\n".join(
        ["flowchart TD", '    s0["task.quoted\nanswer\nmodel: gpt #quot;4#quot; #amp; co"]']
    )


class TaskMarked(TreeNode):
    key_points: list[str] = Field(default=[])
    score: int = Field(
        description="""! transform("key_points | length * 2 ~ '<b>#1</b> _x_ `y` \\\\n'")"""
    )


def test_to_mermaid_codes_what_mermaid_would_read_as_markdown_or_html_in_labels() -> None:
    # Drawn, the label reads exactly as the expression is written: nothing in italics,
    # bold, struck through or code, no tag taken as HTML, no entity code decoded.
    assert plan_of(TaskMarked).to_mermaid() == "\n".join(
        [
            "flowchart TD",
            '    s0["task.marked\nscore\ntransform: key_points | length #42; 2 #126; '
            "'#lt;b#gt;#35;1#lt;/b#gt; #95;x#95; #96;y#96; #92;n'\"]",
        ]
    )


# ---------------------------------------------------------------------------------------
# Property: the order is valid for any tree
# ---------------------------------------------------------------------------------------

FIELD_KINDS = ("generated", "known", "node-known", "list-known", "node-generated")
ORDER_ERRORS = ("In @sequential ", "Dependency cycle: ")
NO_SOURCE = "generated_classes"  # a module without a file: no source for inspect to search


@st.composite
def node_classes(draw: st.DrawFn, prefix: str, visible: tuple[str, ...], depth: int) -> type:
    """A random node class: modifiers, defaults, nested nodes, and runtime variables that
    refer to fields of the node or of its ancestors."""
    kinds = FIELD_KINDS if depth < 2 else FIELD_KINDS[:2]
    chosen = draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=4))
    names = [f"{prefix}_{index}" for index in range(len(chosen))]
    leaves = (*visible, *(n for n, k in zip(names, chosen, strict=True) if k in kinds[:2]))
    mentions = [f" Mind {{{name}}}." for name in leaves]
    mention = st.sampled_from(["", *mentions])
    modifier = draw(st.sampled_from(("", "! @sequential\n", "! @parallel\n")))
    fields: dict[str, Any] = {}
    for name, kind in zip(names, chosen, strict=True):
        description = "Text." + draw(mention)
        if kind in ("generated", "known"):
            default = "x" if kind == "known" else ...
            fields[name] = (str, Field(default, description=description))
            continue
        child = draw(node_classes(name, leaves, depth + 1))
        if kind == "node-known":
            fields[name] = (child, Field(default_factory=child.model_construct))
        elif kind == "list-known":
            fields[name] = (list[child], Field(default=[], description=description))
        else:
            fields[name] = (child, Field(description=description))
    doc = modifier + "Node." + draw(mention)
    return create_model(
        prefix.capitalize(), __base__=TreeNode, __doc__=doc, __module__=NO_SOURCE, **fields
    )


@st.composite
def task_pairs(draw: st.DrawFn) -> tuple[type, type]:
    """Two random tasks, each of which may send a field to the other as a prompt variable."""
    first = draw(node_classes("p", (), 0))
    second = draw(node_classes("q", (), 0))
    tasks = []
    for name, task, other in (("TaskFirst", first, "second"), ("TaskSecond", second, "first")):
        fields: dict[str, Any] = {
            field_name: (info.annotation, info) for field_name, info in task.model_fields.items()
        }
        doc = task.__doc__ or ""
        if draw(st.booleans()):
            sent = f"from_{name.lower()}"
            fields[sent] = (str, Field(description=f"! @all->task.{other}@{{{{prompt.{sent}}}}}"))
        if draw(st.booleans()):
            doc += f" Consider {{from_task{other}}}."
        tasks.append(
            create_model(name, __base__=TreeNode, __doc__=doc, __module__=NO_SOURCE, **fields)
        )
    return tasks[0], tasks[1]


@given(task_pairs())
def test_every_step_comes_after_the_steps_it_depends_on(tasks: tuple[type, type]) -> None:
    structure = structure_of(*tasks)
    try:
        plan = structure.plan()
    except StructureError as error:
        messages = [d.message for d in error.diagnostics]
    else:
        messages = []
    if messages:
        assert all(message.startswith(ORDER_ERRORS) for message in messages), messages
        return
    done: set[str] = set()
    for step in plan.steps:
        assert set(step.depends_on) <= done, step
        done.add(step.id)
    assert len(done) == len(plan.steps)
