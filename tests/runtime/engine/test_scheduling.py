"""Per-element scheduling: a step instance waits only for what its own branch needs."""

import asyncio
from collections.abc import Callable, Mapping

import pytest
from pydantic import Field

from langtree import ExecutionError, RunStructure, TreeNode
from langtree.prompts._state import Address
from langtree.runtime import LLMProvider
from langtree.runtime.engine._waits import InstanceWaits, shared_levels
from langtree.structure.planning._plan import ElementWait
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest


class Paragraph(TreeNode):
    """
    ! together
    Summarise one paragraph.
    """

    text: str = Field(description="The paragraph.")
    summary: str = Field(description="One sentence.")


class Section(TreeNode):
    """Summarise one section from its paragraph summaries."""

    heading: str = Field(description="The heading.")
    paragraphs: list[Paragraph] = Field(default=[], description="The paragraphs.")
    summary: str = Field(description="Two sentences.")


class TaskReport(TreeNode):
    """Summarise a report."""

    sections: list[Section] = Field(
        default=[],
        description="""
        The sections.

        ! @each[sections]->task.digest@{{value.section_summaries=sections.summary}}*
        """,
    )


class TaskDigest(TreeNode):
    """
    ! together
    Write a digest of the section summaries.
    """

    section_summaries: list[str] = Field(default=[], description="One per section.")
    digest: str = Field(description="One paragraph.")


class Note(TreeNode):
    """
    ! @sequential
    Write a note in two steps.
    """

    topic: str = Field(description="The topic.")
    draft: str = Field(description="A draft.")
    final: str = Field(description="The final note.")


class TaskNotes(TreeNode):
    """Write notes."""

    notes: list[Note] = Field(default=[], description="The notes.")


class Events:
    """A fake model that logs when each call starts and ends.

    Calls under ``slow`` answer last: they wait until every call in ``until`` (node path
    and fields) has started, or, without ``until``, yield to the event loop many times
    first. A test that asserts a call starts while a slow one is in flight names it in
    ``until``: the slow call finishes only once it has started, so the run ends (instead
    of timing out) only if the engine starts it first. The order is set by the test,
    never by the machine's clock or load.
    """

    def __init__(
        self, slow: str, until: tuple[tuple[str, tuple[str, ...]], ...] = (), yields: int = 200
    ) -> None:
        self.slow = slow
        self.until = set(until)
        self.yields = yields
        self.log: list[tuple[str, str, tuple[str, ...]]] = []
        self.released: asyncio.Event | None = None

    async def responder(self, request: FakeRequest) -> Mapping[str, object]:
        path = request.node_path or ""
        if self.released is None:
            self.released = asyncio.Event()
        self.log.append(("start", path, request.fields))
        self.until.discard((path, request.fields))
        if not self.until:
            self.released.set()
        if path.startswith(self.slow):
            await self._slow()
        else:
            await asyncio.sleep(0)
        self.log.append(("end", path, request.fields))
        return {name: f"{name} of {request.node_path}" for name in request.fields}

    async def _slow(self) -> None:
        assert self.released is not None
        if self.until:
            await self.released.wait()
            return
        for _ in range(self.yields):
            await asyncio.sleep(0)

    def model(self) -> FakeChatModel:
        return FakeChatModel(responder=self.responder)

    def at(self, event: str, path: str, fields: tuple[str, ...] | None = None) -> int:
        """Where the event happened in the log."""
        return next(
            index
            for index, (kind, node_path, called) in enumerate(self.log)
            if kind == event and node_path == path and (fields is None or called == fields)
        )

    def last(self, event: str, prefix: str) -> int:
        return max(
            index
            for index, (kind, node_path, _) in enumerate(self.log)
            if kind == event and node_path.startswith(prefix)
        )


def run(model: FakeChatModel, inputs: Mapping[type[TreeNode], object], *tasks: type[TreeNode]):
    structure = RunStructure(provider=LLMProvider({"default": model}))
    for task in tasks:
        structure.add(task)

    async def bounded():  # a deadlock fails the test instead of hanging it
        return await asyncio.wait_for(structure.arun(inputs), timeout=10)

    return asyncio.run(bounded())


def report(*paragraph_counts: int) -> dict[str, object]:
    return {
        "sections": [
            {"heading": f"S{s}", "paragraphs": [{"text": f"p{s}.{p}"} for p in range(count)]}
            for s, count in enumerate(paragraph_counts)
        ]
    }


SECTION = "task.report.sections[{}]"


def test_a_section_summary_starts_before_another_sections_paragraphs_finish() -> None:
    events = Events(
        slow=SECTION.format(0) + ".paragraphs", until=((SECTION.format(1), ("summary",)),)
    )

    run(events.model(), {TaskReport: report(2, 2)}, TaskReport, TaskDigest)

    second_summary = events.at("start", SECTION.format(1))
    assert second_summary < events.last("end", SECTION.format(0) + ".paragraphs")
    assert events.at("start", SECTION.format(1)) < events.at("start", SECTION.format(0))


def test_a_section_summary_waits_for_its_own_paragraphs() -> None:
    events = Events(slow=SECTION.format(1) + ".paragraphs")

    result = run(events.model(), {TaskReport: report(3, 2, 1)}, TaskReport, TaskDigest)

    for index in range(3):
        section = SECTION.format(index)
        assert events.at("start", section) > events.last("end", section + ".paragraphs")
    sections = result[TaskReport].sections
    assert [s.summary for s in sections] == [f"summary of {SECTION.format(i)}" for i in range(3)]


def test_a_cross_task_each_waits_for_every_section() -> None:
    events = Events(slow=SECTION.format(0))

    result = run(events.model(), {TaskReport: report(1, 1)}, TaskReport, TaskDigest)

    digest = events.at("start", "task.digest")
    assert digest > events.last("end", "task.report.sections")
    assert result[TaskDigest].section_summaries == [
        f"summary of {SECTION.format(0)}",
        f"summary of {SECTION.format(1)}",
    ]


def test_sequential_steps_wait_per_element() -> None:
    events = Events(slow="task.notes.notes[0]", until=(("task.notes.notes[1]", ("final",)),))

    result = run(
        events.model(), {TaskNotes: {"notes": [{"topic": "a"}, {"topic": "b"}]}}, TaskNotes
    )

    first, second = "task.notes.notes[0]", "task.notes.notes[1]"
    assert events.at("start", second, ("final",)) < events.at("end", first, ("draft",))
    for note in (first, second):
        assert events.at("start", note, ("final",)) > events.at("end", note, ("draft",))
    assert [n.final for n in result[TaskNotes].notes] == [f"final of {first}", f"final of {second}"]


def test_empty_lists_do_not_deadlock() -> None:
    events = Events(slow="nothing")

    result = run(
        events.model(), {TaskReport: report(0, 2), TaskNotes: {}}, TaskReport, TaskDigest, TaskNotes
    )

    assert result[TaskReport].sections[0].paragraphs == []
    assert result[TaskNotes].notes == []
    assert events.at("start", "task.digest") > events.last("end", "task.report.sections")


def test_no_sections_at_all_still_runs_the_digest() -> None:
    events = Events(slow="nothing")

    result = run(events.model(), {TaskReport: {}}, TaskReport, TaskDigest)

    assert result[TaskDigest].section_summaries == []
    assert [path for kind, path, _ in events.log if kind == "start"] == ["task.digest"]


# -- the bookkeeping on its own -----------------------------------------------------------


def report_structure() -> RunStructure:
    structure = RunStructure()
    structure.add(TaskReport)
    structure.add(TaskDigest)
    return structure


PARAGRAPHS = "task.report.sections.paragraphs"
SECTIONS = "task.report.sections"


def test_shared_levels_follow_the_longest_common_ancestor() -> None:
    nodes = report_structure().nodes

    assert shared_levels(nodes, PARAGRAPHS, PARAGRAPHS) == 2
    assert shared_levels(nodes, SECTIONS, PARAGRAPHS) == 1
    assert shared_levels(nodes, "task.report", PARAGRAPHS) == 0
    assert shared_levels(nodes, "task.digest", SECTIONS) == 0


def test_a_dependent_opened_first_waits_for_its_branch() -> None:
    structure = report_structure()
    steps = structure.plan({TaskReport: report(1, 1)}).steps
    assert [(s.node_tag, s.depends_on) for s in steps[:2]] == [
        (PARAGRAPHS, ()),
        (SECTIONS, (f"{PARAGRAPHS}:summary",)),
    ]
    waits = InstanceWaits(structure.nodes, steps)
    waits.open(1, [Address(SECTIONS, (0,)), Address(SECTIONS, (1,))])
    assert waits.take_ready() == []

    waits.open(0, [Address(PARAGRAPHS, (0, 0)), Address(PARAGRAPHS, (1, 0))])
    assert waits.take_ready() == [
        (0, Address(PARAGRAPHS, (0, 0))),
        (0, Address(PARAGRAPHS, (1, 0))),
    ]

    waits.finish(0, Address(PARAGRAPHS, (1, 0)))
    assert waits.take_ready() == [(1, Address(SECTIONS, (1,)))]
    assert waits.take_finished() == []

    waits.finish(0, Address(PARAGRAPHS, (0, 0)))
    assert waits.take_ready() == [(1, Address(SECTIONS, (0,)))]
    assert waits.take_finished() == [0]
    assert waits.deps_finished(1)


class TaskLetter(TreeNode):
    """
    ! @sequential
    Write to {audience} in {language}.
    """

    sender: str = Field(default="Ada", description="Signed by {sender}.")
    body: str = Field(description="Written for {audience}, about {topic}.")
    notes: list[Note] = Field(default=[], description="Notes on {subject}.")


@pytest.mark.parametrize(
    ("inputs", "variables"),
    [
        ({}, {}),
        ({}, {"audience": "you"}),
        ({"notes": [{"topic": "x"}]}, {"audience": "you", "language": "en"}),
        ({"body": "Hi", "notes": [{"topic": "x", "draft": "d", "final": "f"}]}, {}),
    ],
)
def test_the_run_names_the_missing_variables_the_prompts_would(
    inputs: dict[str, object], variables: dict[str, object]
) -> None:
    """The run finds them without assembling prompts; the dry run by assembling them."""
    structure = RunStructure(provider=LLMProvider({"default": FakeChatModel()}))
    structure.add(TaskLetter)

    expected = error_text(lambda: structure.prompts({TaskLetter: inputs}, variables))
    found = error_text(lambda: structure.run({TaskLetter: inputs}, variables))

    assert found == expected
    if inputs.get("body") is None:
        assert str(found).startswith("Missing external variable(s)")


def error_text(call: Callable[[], object]) -> str | None:
    try:
        call()
    except ExecutionError as error:
        return str(error)
    return None


# -- a reader through a further command waits for the first writer --------------------------


class TaskWriter(TreeNode):
    """
    Write a title.

    ! @all->task.middle@{{value.headline=title}}
    """

    title: str = Field(description="The title.")


class TaskMiddle(TreeNode):
    """
    Copy the headline.

    ! @all->task.answer@{{prompt.head=headline, outputs.head=headline}}
    """

    headline: str = Field(description="The headline.")
    copy_: str = Field(description="A copy.")


class TaskAnswer(TreeNode):
    """Use {head}."""

    answer: str = Field(description="The answer.")


def test_a_reader_through_a_further_command_waits_for_the_first_writer() -> None:
    # task.answer sorts before task.writer: only the dependency can put it after.
    structure = RunStructure()
    for task in (TaskAnswer, TaskMiddle, TaskWriter):
        structure.add(task)
    steps = {step.id: step.depends_on for step in structure.plan().steps}
    assert steps["task.answer:answer"] == ("task.writer:title",)

    events = Events(slow="task.writer")
    result = run(events.model(), {}, TaskAnswer, TaskMiddle, TaskWriter)

    assert events.at("start", "task.answer") > events.at("end", "task.writer")
    (answer,) = [record for record in result.trace if record.node_path == "task.answer"]
    prompt = "".join(str(message.content) for message in answer.messages)
    assert "Use title of task.writer." in prompt
    assert "## Head\n\ntitle of task.writer\n" in prompt


# -- an element-wise @each: element i waits for iteration i alone (D3, D4, D7) -------------


class Chapter(TreeNode):
    """Summarise the chapter."""

    text: str = Field(description="The chapter.")
    summary: str = Field(description="One sentence.")


class TaskBook(TreeNode):
    """Summarise a book."""

    chapters: list[Chapter] = Field(
        default=[],
        description="! @each[chapters]->task.reviews.items@{{value.source=chapters.summary}}*",
    )


class Review(TreeNode):
    """Review one chapter summary."""

    source: str = Field(description="The summary to review.")
    review: str = Field(description="The review.")


class TaskReviews(TreeNode):
    """Review every chapter."""

    items: list[Review] = Field(default=[], description="One per chapter.")


CHAPTER, REVIEW = "task.book.chapters[{}]", "task.reviews.items[{}]"
BOOK = {TaskBook: {"chapters": [{"text": "one"}, {"text": "two"}, {"text": "three"}]}}


def test_an_element_wise_each_is_planned_element_by_element() -> None:
    structure = RunStructure()
    structure.add(TaskBook)
    structure.add(TaskReviews)

    review = structure.plan(BOOK).step("task.reviews.items:review")

    assert review.depends_on == ("task.book.chapters:summary",)
    assert review.element_waits == (ElementWait(step_id="task.book.chapters:summary", levels=1),)


def test_a_destination_element_waits_only_for_its_own_source_element() -> None:
    reviews = tuple((REVIEW.format(index), ("review",)) for index in (0, 2))
    events = Events(slow=CHAPTER.format(1), until=reviews)

    result = run(events.model(), BOOK, TaskBook, TaskReviews)

    assert events.at("start", REVIEW.format(0)) < events.at("end", CHAPTER.format(1))
    assert events.at("start", REVIEW.format(2)) < events.at("end", CHAPTER.format(1))
    for index in range(3):
        assert events.at("start", REVIEW.format(index)) > events.at("end", CHAPTER.format(index))
    items = result[TaskReviews].items
    assert [item.source for item in items] == [f"summary of {CHAPTER.format(i)}" for i in range(3)]
    assert [item.review for item in items] == [f"review of {REVIEW.format(i)}" for i in range(3)]
    (written,) = [
        record
        for record in result.provenance("task.reviews.items[1].source")
        if record.kind == "mapping"
    ]
    assert written.value == f"summary of {CHAPTER.format(1)}"


def test_a_failed_source_element_skips_only_its_own_destination_element() -> None:
    def responder(request: FakeRequest) -> Mapping[str, object]:
        if request.node_path == CHAPTER.format(1):
            raise ValueError("no summary for this one")
        return {name: f"{name} of {request.node_path}" for name in request.fields}

    structure = RunStructure(
        {"on_error": "continue"},
        provider=LLMProvider({"default": FakeChatModel(responder=responder)}),
    )
    structure.add(TaskBook)
    structure.add(TaskReviews)

    result = structure.run(BOOK)

    assert [(s.step_id, s.node_path) for s in result.skipped] == [
        ("task.reviews.items:review", REVIEW.format(1))
    ]
    reviewed = [r.node_path for r in result.trace if r.node_path.startswith("task.reviews")]
    assert sorted(reviewed) == [REVIEW.format(0), REVIEW.format(2)]


class TaskCollected(TreeNode):
    """Summarise a book, and collect the summaries."""

    chapters: list[Chapter] = Field(
        default=[],
        description=(
            "! @each[chapters]->task.reviews.items@{{value.source=chapters.summary, "
            "outputs.all_summaries=chapters.summary}}*"
        ),
    )


def test_an_each_that_also_sends_every_iteration_waits_for_all_of_them() -> None:
    events = Events(slow="task.collected.chapters[0]")
    inputs = {TaskCollected: BOOK[TaskBook]}

    run(events.model(), inputs, TaskCollected, TaskReviews)

    assert events.at("start", REVIEW.format(1)) > events.last("end", "task.collected.chapters")
