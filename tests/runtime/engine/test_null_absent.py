"""Null versus absent in mappings (docs/dsl.md, "Null, absent and strict mappings").

A source that is ``None`` sends ``None``: a target that accepts it takes it (its default
does not apply), any other target is an error naming both ends. A source never produced
(its step failed under ``on_error="continue"``, or its branch was skipped) is absent:
the target field takes its default (``default`` or ``default_factory``); a target without
one is a missing value, an error naming both ends, kept in the result when the run
continues after failures.
"""

from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from langtree import ExecutionError, RunStructure, TreeNode
from langtree.prompts._dataflow import apply_flow
from langtree.prompts._state import MissingValue, OnMissing, RunState
from langtree.runtime import LLMProvider
from langtree.structure._config import ConfigInput
from langtree.structure.commands._flows import resolve_flows
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest, ResponderResult

CONTINUE = {"on_error": "continue"}


def line_of(text: str) -> int:
    """The line of this file where ``text`` first stands."""
    lines = Path(__file__).read_text().splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)


def failing(*fields: str, **answers: object) -> FakeChatModel:
    """A model whose steps for ``fields`` give invalid output; the others answer from
    ``answers`` or with ``'<field> of <node path>'``."""

    def respond(request: FakeRequest) -> ResponderResult:
        if set(request.fields) & set(fields):
            return dict.fromkeys(request.fields, 42)  # not a str: invalid output
        return {f: answers.get(f, f"{f} of {request.node_path}") for f in request.fields}

    return FakeChatModel(responder=respond)


def run(
    *tasks: type[TreeNode],
    model: FakeChatModel,
    config: ConfigInput = None,
    inputs: dict[type[TreeNode], object] | None = None,
) -> Any:
    structure = RunStructure(config, provider=LLMProvider({"default": model}))
    for task in tasks:
        structure.add(task)
    return structure.run(inputs or {}, max_retries=0)


def carried_out(
    *tasks: type[TreeNode],
    inputs: dict[str, Any],
    on_missing: OnMissing = "raise",
    config: ConfigInput = None,
) -> RunState:
    """The state after carrying out every command once on ``inputs``, no step run."""
    structure = RunStructure(config)
    for task in tasks:
        structure.add(task)
    structure.validate()
    flows, _ = resolve_flows(structure.nodes)
    state = RunState.start(structure.nodes, inputs, on_missing=on_missing)
    for flow in flows:
        apply_flow(state, flow, structure.config.type_mapping)
    return state


# -- None: passed as it is ---------------------------------------------------------------


class TaskMood(TreeNode):
    """! @all->task.badge@{{value.mood=mood}}"""

    mood: str | None = Field(description="The mood, or null when there is none.")


class TaskBadge(TreeNode):
    mood: str | None = Field(default="calm", description="The mood shown.")


def test_none_reaches_an_optional_target_and_its_default_does_not_apply() -> None:
    result = run(TaskMood, TaskBadge, model=FakeChatModel(responder=lambda _: {"mood": None}))

    assert result[TaskBadge].mood is None


class TaskLead(TreeNode):
    """! @all->task.headline@{{value.text=lead}}"""

    lead: str | None = Field(description="The lead, or null.")


class TaskHeadline(TreeNode):
    text: str = Field(description="The text.")
    title: str = Field(description="A title for the text.")


def test_none_into_a_target_that_refuses_it_stops_the_run_before_its_step() -> None:
    model = FakeChatModel(responder=lambda _: {"lead": None})

    with pytest.raises(ExecutionError) as raised:
        run(TaskLead, TaskHeadline, model=model, config={"validation_strategy": "permissive"})

    assert str(raised.value) == (
        "'task.lead.lead' is None, and 'TaskHeadline.text' (str) does not accept None\n"
        '        """! @all->task.headline@{{value.text=lead}}"""\n'
        "                                   ^~~~~~~~~~~~~~~\n"
        f"  in TaskLead ({__file__}:{line_of('! @all->task.headline@')})\n"
        "  hint: declare 'TaskHeadline.text' as str | None, or make sure the source has a value"
    )
    assert [call.fields for call in model.calls] == [("lead",)]


class Chapter(TreeNode):
    text: str = Field(description="The chapter.")
    gist: str = Field(description="The chapter in one sentence.")


class TaskBook(TreeNode):
    chapters: list[Chapter] = Field(
        default=[],
        description="! @each[chapters]->task.index@{{value.gists=chapters.gist, "
        "value.entries.gist=chapters.gist}}*",
    )


class Entry(TreeNode):
    gist: str = Field(default="(no gist)", description="The gist.")


class TaskIndex(TreeNode):
    gists: list[str] = Field(default=[], description="One gist per chapter.")
    entries: list[Entry] = Field(default=[], description="One entry per chapter.")


def test_none_in_one_iteration_names_the_element_on_both_ends() -> None:
    chapters = [{"text": "A", "gist": "a"}, {"text": "B", "gist": None}]

    with pytest.raises(ExecutionError) as raised:
        carried_out(TaskBook, TaskIndex, inputs={"task.book": {"chapters": chapters}})

    assert str(raised.value).splitlines()[0] == (
        "'task.book.chapters[1].gist' is None, and 'TaskIndex.gists[1]' (str) does not accept None"
    )


class Byline(TreeNode):
    author: str = Field(description="The author.")


class Article(TreeNode):
    byline: Byline | None = Field(default=None, description="The byline, if any.")


class TaskPress(TreeNode):
    articles: list[Article] = Field(
        default=[],
        description="! @each[articles]->task.credits@{{value.authors=articles.byline.author}}*",
    )


class TaskCredits(TreeNode):
    authors: list[str | None] = Field(default=[], description="One author per article.")


def test_a_path_through_a_node_that_is_none_sends_none_as_validate_says() -> None:
    articles = [{"byline": {"author": "Ada"}}, {"byline": None}]

    state = carried_out(TaskPress, TaskCredits, inputs={"task.press": {"articles": articles}})

    assert state.roots["task.credits"]["authors"] == ["Ada", None]


class TaskFeeling(TreeNode):
    """! @all->task.poster@{{prompt.feeling=mood}}"""

    mood: str | None = Field(description="The mood, or null.")


class TaskPoster(TreeNode):
    """Design a poster. Feeling: {feeling}."""

    slogan: str = Field(description="The slogan.")


def test_none_sent_to_a_prompt_variable_reads_null() -> None:
    model = FakeChatModel(responder=lambda r: {f: None if f == "mood" else "Go" for f in r.fields})

    run(TaskFeeling, TaskPoster, model=model)

    assert "Design a poster. Feeling: null." in model.calls[-1].text


# -- Absent: the target's default, else a missing value ----------------------------------


def test_an_absent_source_gives_the_target_its_default() -> None:
    result = run(TaskMood, TaskBadge, model=failing("mood"), config=CONTINUE)

    assert [error.step_id for error in result.errors] == ["task.mood:mood"]
    assert result[TaskBadge].mood == "calm"


class TaskTopics(TreeNode):
    """! @all->task.shelf@{{value.tags=topics}}"""

    topics: list[str] = Field(description="The topics.")


class TaskShelf(TreeNode):
    tags: list[str] = Field(default_factory=lambda: ["untagged"], description="The tags.")


def test_an_absent_source_gives_the_target_its_default_factory_value() -> None:
    result = run(TaskTopics, TaskShelf, model=failing("topics"), config=CONTINUE)

    assert result[TaskShelf].tags == ["untagged"]


def test_each_gives_each_absent_element_the_default_of_its_node_field() -> None:
    chapters = [{"text": "A"}, {"text": "B"}, {"text": "C"}]

    def respond(request: FakeRequest) -> ResponderResult:
        if request.node_path == "task.book.chapters[1]":
            return {"gist": 42}
        return {"gist": f"gist of {request.node_path}"}

    model = FakeChatModel(responder=respond)
    result = run(
        TaskBook, TaskIndex, model=model, config=CONTINUE, inputs={TaskBook: {"chapters": chapters}}
    )

    assert result.partial(TaskIndex)["entries"] == [
        {"gist": "gist of task.book.chapters[0]"},
        {"gist": "(no gist)"},
        {"gist": "gist of task.book.chapters[2]"},
    ]


def test_each_into_a_list_element_without_a_default_is_a_missing_value() -> None:
    chapters = [{"text": "A"}, {"text": "B"}]

    def respond(request: FakeRequest) -> ResponderResult:
        return {"gist": 42 if request.node_path.endswith("[1]") else "fine"}

    model = FakeChatModel(responder=respond)
    result = run(
        TaskBook, TaskIndex, model=model, config=CONTINUE, inputs={TaskBook: {"chapters": chapters}}
    )

    assert result.invalid["task.index"] == (
        "The values of 'TaskIndex' do not validate: 1 step instance(s) failed and 0 were "
        "skipped:\n"
        "  - gists.1: Input should be a valid string\n"
        "  - Missing value for 'TaskIndex.gists[1]': its source 'task.book.chapters[1].gist' "
        "was never produced, and a list element has no default\n"
        "    hint: map into a field of the list's nodes, which can have a default, or send "
        "the list with '@all' and a '.**.' pluck path, which leaves absent values out\n"
        "  hint: see result.errors and result.skipped; result.partial('TaskIndex') gives "
        "the values as plain data"
    )


class Paper(TreeNode):
    title: str = Field(description="The title.")
    summary: str = Field(description="Two sentences.")


class TaskSurvey(TreeNode):
    papers: list[Paper] = Field(
        default=[],
        description="! @each[papers]->task.table@{{value.rows.summary=papers.summary}}*",
    )


class Row(TreeNode):
    summary: str = Field(description="The paper's summary.")


class TaskTable(TreeNode):
    rows: list[Row] = Field(default=[], description="One row per paper.")


PAPERS = [{"title": "Tides", "summary": "Moon."}, {"title": "Waves"}]


def test_a_field_of_an_element_names_the_element_it_belongs_to() -> None:
    state = carried_out(
        TaskSurvey, TaskTable, inputs={"task.survey": {"papers": PAPERS}}, on_missing="continue"
    )

    assert state.roots["task.table"]["rows"] == [{"summary": "Moon."}, {}]
    assert [(m.message, m.hint) for m in state.missing] == [
        (
            "Missing value for 'Row.summary' in 'task.table.rows[1]': its source "
            "'task.survey.papers[1].summary' was never produced, and the field has no default",
            "give 'Row.summary' a default (Field(default=...) or default_factory=...) for "
            "when its source is absent",
        )
    ]


def test_none_into_a_field_of_an_element_names_the_element() -> None:
    papers = [PAPERS[0], {"title": "Waves", "summary": None}]

    with pytest.raises(ExecutionError) as raised:
        carried_out(TaskSurvey, TaskTable, inputs={"task.survey": {"papers": papers}})

    assert str(raised.value).splitlines()[0] == (
        "'task.survey.papers[1].summary' is None, and 'Row.summary' (str) in "
        "'task.table.rows[1]' does not accept None"
    )


class TaskSummary(TreeNode):
    """! @all->task.digest@{{value.summary=summary, prompt.topic=summary}}"""

    summary: str = Field(description="The summary.")


class TaskDigest(TreeNode):
    """Write a digest about {topic}."""

    summary: str = Field(description="The summary.")
    digest: str = Field(description="The digest.")


def test_a_required_target_of_an_absent_source_is_a_missing_value_in_the_result() -> None:
    result = run(TaskSummary, TaskDigest, model=failing("summary"), config=CONTINUE)

    assert [skipped.step_id for skipped in result.skipped] == ["task.digest:digest"]
    assert result.invalid["task.digest"] == (
        "The values of 'TaskDigest' do not validate: 1 step instance(s) failed and 1 were "
        "skipped:\n"
        "  - summary: Field required\n"
        "  - digest: Field required\n"
        "  - Missing value for 'TaskDigest.summary': its source 'task.summary.summary' was "
        "never produced, and the field has no default\n"
        "    hint: give 'TaskDigest.summary' a default (Field(default=...) or "
        "default_factory=...) for when its source is absent\n"
        "  - Missing value for {topic} in 'task.digest': its source 'task.summary.summary' "
        "was never produced, and a prompt variable has no default\n"
        "    hint: map the source into a field with a default ('value.<field>=...') and "
        "write {<field>} in the text instead\n"
        "  hint: see result.errors and result.skipped; result.partial('TaskDigest') gives "
        "the values as plain data"
    )


def test_a_missing_value_raises_where_the_run_does_not_continue() -> None:
    with pytest.raises(ExecutionError) as raised:
        carried_out(TaskSummary, TaskDigest, inputs={})

    assert str(raised.value) == (
        "Missing value for 'TaskDigest.summary': its source 'task.summary.summary' was never "
        "produced, and the field has no default\n"
        '        """! @all->task.digest@{{value.summary=summary, prompt.topic=summary}}"""\n'
        "                                 ^~~~~~~~~~~~~~~~~~~~~\n"
        f"  in TaskSummary ({__file__}:{line_of('! @all->task.digest@')})\n"
        "  hint: give 'TaskDigest.summary' a default (Field(default=...) or "
        "default_factory=...) for when its source is absent"
    )


def test_a_run_that_continues_keeps_missing_values_and_writes_nothing() -> None:
    state = carried_out(TaskSummary, TaskDigest, inputs={}, on_missing="continue")

    assert state.roots["task.digest"] == {}
    assert state.prompt_values == {}
    assert [(m.task, m.source, m.target) for m in state.missing] == [
        ("task.digest", "task.summary.summary", "'TaskDigest.summary'"),
        ("task.digest", "task.summary.summary", "{topic} in 'task.digest'"),
    ]
    assert all(isinstance(missing, MissingValue) for missing in state.missing)


class TaskNotes(TreeNode):
    """! @all->task.board@{{outputs.notes=notes}}"""

    notes: str = Field(description="The notes.")


class TaskBoard(TreeNode):
    board: str = Field(description="The board.")


def test_an_absent_source_of_a_context_entry_is_a_missing_value() -> None:
    state = carried_out(TaskNotes, TaskBoard, inputs={}, on_missing="continue")

    (missing,) = state.missing
    assert (missing.message, missing.hint) == (
        "Missing value for 'outputs.notes' in 'task.board': its source 'task.notes.notes' "
        "was never produced, and a context entry has no default",
        "map the source into a field with a default ('value.<field>=...'): a known field "
        "appears in the context",
    )
    assert state.outputs == {}


class Detail(TreeNode):
    """! @all->task.report_card@{{value.mood=mood, prompt.mood=mood}}"""

    size: int = Field(description="The size.")
    mood: str | None = Field(default=None, description="The mood, if any.")


class TaskProduct(TreeNode):
    detail: Detail = Field(description="The detail.")


class TaskReportCard(TreeNode):
    """The mood is {mood}."""

    mood: str | None = Field(default="unknown", description="The mood.")
    card: str = Field(description="The card.")


def test_a_field_a_model_leaves_out_of_a_node_holds_its_default_not_absent() -> None:
    def respond(request: FakeRequest) -> ResponderResult:
        if request.fields == ("detail",):
            return {"detail": {"size": 3}}  # no mood: pydantic gives it None
        return {"card": "A card."}

    model = FakeChatModel(responder=respond)
    result = run(TaskProduct, TaskReportCard, model=model)

    assert result[TaskReportCard].mood is None
    assert "The mood is null." in model.calls[-1].text


class Shelf(TreeNode):
    label: str = Field(default="", description="The label.")
    topic: str = Field(default="(none)", description="The topic.")


class TaskSubject(TreeNode):
    """! @all->task.library@{{value.shelves.topic=subject}}*"""

    subject: str = Field(description="The subject.")


class TaskLibrary(TreeNode):
    shelves: list[Shelf] = Field(default=[], description="The shelves.")


def test_a_broadcast_of_an_absent_source_gives_every_element_its_default() -> None:
    inputs = {"task.library": {"shelves": [{"topic": "old"}, {"label": "b"}]}}

    state = carried_out(TaskSubject, TaskLibrary, inputs=inputs)

    assert state.roots["task.library"]["shelves"] == [
        {"topic": "(none)", "label": ""},
        {"label": "b", "topic": "(none)"},
    ]


class Passage(TreeNode):
    text: str = Field(description="The text.")


class Part(TreeNode):
    passages: list[Passage] = Field(default=[], description="The passages.")


class TaskManual(TreeNode):
    parts: list[Part] = Field(
        default=[],
        description="! @each[parts]->task.outline@{{value.texts=parts.passages.text}}*",
    )


class TaskOutline(TreeNode):
    texts: list[Any] = Field(default=[], description="The texts of each part.")


def test_a_path_crossing_a_list_keeps_none_for_an_element_whose_value_is_none() -> None:
    parts = [{"passages": [{"text": "a"}, {"text": None}]}]

    state = carried_out(TaskManual, TaskOutline, inputs={"task.manual": {"parts": parts}})

    assert state.roots["task.outline"]["texts"] == [["a", None]]


def test_a_path_crossing_a_list_misses_an_element_never_produced() -> None:
    parts = [{"passages": [{"text": "a"}, {}]}]

    state = carried_out(
        TaskManual, TaskOutline, inputs={"task.manual": {"parts": parts}}, on_missing="continue"
    )

    assert state.roots["task.outline"]["texts"] == [None]
    assert [(m.target, m.message) for m in state.missing] == [
        (
            "'TaskOutline.texts[0]'",
            "Missing value for 'TaskOutline.texts[0]': its source "
            "'task.manual.parts[0].passages[1].text' was never produced, and a list element "
            "has no default",
        )
    ]


class ItemDetail(TreeNode):
    note: str = Field(description="The note.")


class Item(TreeNode):
    detail: ItemDetail | None = Field(default=None, description="The detail, if any.")


class TaskItems(TreeNode):
    items: list[Item] = Field(
        default=[], description="! @each[items]->task.jottings@{{value.notes=items.detail.note}}*"
    )


class TaskJottings(TreeNode):
    notes: list[str] = Field(default=[], description="One note per item.")


def test_a_node_on_the_path_that_is_none_makes_the_source_none() -> None:
    items = [{"detail": {"note": "a"}}, {"detail": None}]
    permissive = {"validation_strategy": "permissive"}  # strict refuses it at validate()

    with pytest.raises(ExecutionError) as raised:
        carried_out(
            TaskItems, TaskJottings, inputs={"task.items": {"items": items}}, config=permissive
        )

    assert str(raised.value).splitlines()[0] == (
        "'task.items.items[1].detail.note' is None, and 'TaskJottings.notes[1]' (str) does not "
        "accept None"
    )


class TaskParcel(TreeNode):
    """! @all->task.label@{{value.note=note}}"""

    note: str | None = Field(default=None, description="! input()")
    weight: int = Field(description="The weight in grams.")


class TaskLabel(TreeNode):
    note: str | None = Field(default="(no note)", description="The note printed.")


def test_a_field_only_the_caller_gives_left_out_sends_none_not_absent() -> None:
    state = carried_out(TaskParcel, TaskLabel, inputs={"task.parcel": {"weight": 300}})

    assert state.roots["task.label"] == {"note": None}
