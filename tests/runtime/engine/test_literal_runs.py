"""Mapping literals carried out in runs (docs/dsl.md, "Literals in mappings"): each
write receives the literal, the prompts show it like any value (a ``prompt`` variable,
an ``outputs`` context entry), and provenance records that a literal wrote it."""

from enum import Enum

from pydantic import Field

from langtree import RunStructure, TreeNode
from langtree.runtime import LLMProvider
from langtree.testing import FakeChatModel


class Status(Enum):
    DRAFT = "draft"
    FINAL = "final"


class Section(TreeNode):
    title: str = Field(description="The title.")


class TaskReport(TreeNode):
    """A report."""

    sections: list[Section] = Field(
        default=[],
        description='! @each[sections]->task.digest@{{value.entries.status="draft"}}*',
    )
    body: str = Field(
        default="",
        description="! @all->task.review@{{value.count=3, value.final=false, "
        'prompt.tone="calm", outputs.checked="by hand"}}',
    )


class Entry(TreeNode):
    status: Status = Field(default=Status.FINAL)


class TaskDigest(TreeNode):
    """Digest the entries."""

    entries: list[Entry] = Field(default=[])
    summary: str = Field(description="One sentence.")


class TaskReview(TreeNode):
    """Review in a {tone} tone."""

    count: float = 0
    final: bool = True
    verdict: str = Field(description="The verdict.")


INPUTS = {TaskReport: {"sections": [{"title": "A"}, {"title": "B"}], "body": "text"}}


def structure(model: FakeChatModel) -> RunStructure:
    built = RunStructure(provider=LLMProvider({"default": model}))
    for task in (TaskReport, TaskDigest, TaskReview):
        built.add(task)
    return built


DIGEST_CONTEXT = """\
# Context

## Entries

[
  {
    "status": "draft"
  },
  {
    "status": "draft"
  }
]
"""
REVIEW_PROMPT_END = """\
# Review

Review in a calm tone.

## Verdict

The verdict.

# Context

## Checked

by hand

## Count

3.0

## Final

false

# Output

Write Verdict.
"""


def test_literals_reach_their_targets() -> None:
    result = structure(FakeChatModel()).run(INPUTS)

    assert result[TaskDigest].entries == [Entry(status=Status.DRAFT)] * 2  # type: ignore[index]
    review = result[TaskReview]  # type: ignore[index]
    assert (review.count, review.final) == (3.0, False)


def test_the_prompts_show_the_literals() -> None:
    model = FakeChatModel()

    structure(model).run(INPUTS)

    digest, review = sorted(model.calls, key=lambda call: "# Review" in call.text)
    assert DIGEST_CONTEXT in digest.text
    assert review.text.endswith(REVIEW_PROMPT_END)


def test_the_dry_run_shows_the_literals() -> None:
    prompts = {prompt.step_id: prompt.text for prompt in structure(FakeChatModel()).prompts(INPUTS)}

    assert DIGEST_CONTEXT in prompts["task.digest:summary"]
    assert prompts["task.review:verdict"].endswith(REVIEW_PROMPT_END)


def test_provenance_records_a_literal_write() -> None:
    result = structure(FakeChatModel()).run(INPUTS)

    [record] = [r for r in result.provenance("task.review.final") if r.kind != "default"]
    assert (record.kind, record.value, record.source, record.location) == (
        "literal",
        False,
        "false",
        "TaskReport.body",
    )
    assert record.command == (
        "! @all->task.review@{{value.count=3, value.final=false, "
        'prompt.tone="calm", outputs.checked="by hand"}}'
    )
    statuses = [r.kind for r in result.provenance("task.digest.entries[1].status")]
    assert statuses == ["literal"]


def test_the_run_page_names_the_literal() -> None:
    html = structure(FakeChatModel()).run(INPUTS).to_html()

    assert (
        "the literal <code>&#34;draft&#34;</code> of <code>! @each[sections]-&gt;task.digest"
        "@{{value.entries.status=&#34;draft&#34;}}*</code> in <code>TaskReport.sections</code>"
    ) in html
