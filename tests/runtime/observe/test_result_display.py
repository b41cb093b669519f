"""How a ``RunResult`` shows in a notebook (``_repr_markdown_``) and in ``repr``."""

import pytest
from pydantic import Field

from langtree import TreeNode
from langtree.prompts._tokens import PromptTokens
from langtree.runtime import RunResult, RunUsage, TraceRecord, TransformRecord
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest, ResponderResult
from tests.runtime.fake_structures import structure_for


class Item(TreeNode):
    """One item."""

    name: str = Field(description="The name.")
    note: str = Field(description="A note.")


class TaskList(TreeNode):
    """List things."""

    items: list[Item] = Field(default=[], description="The items.")
    summary: str = Field(description="The summary.")


def noted(request: FakeRequest) -> ResponderResult:
    return {name: f"{name} of {request.node_path}" for name in request.fields}


def second_note_missing(request: FakeRequest) -> ResponderResult:
    return {"note": None} if request.node_path == "task.list.items[1]" else noted(request)


def run_list(model: FakeChatModel, config: dict[str, object] | None = None) -> RunResult:
    structure = structure_for(TaskList, model=model, **(config or {}))
    return structure.run({TaskList: {"items": [{"name": "a"}, {"name": "b"}]}}, max_retries=0)


# The list's values as a result shows them, up to the second item's name: the rest
# depends on whether the second item's note was written.
LIST_VALUES_START = (
    "```json\n"
    "{\n"
    '  "items": [\n'
    "    {\n"
    '      "name": "a",\n'
    '      "note": "note of task.list.items[0]"\n'
    "    },\n"
    "    {\n"
    '      "name": "b"'
)


def test_a_run_shows_its_calls_tokens_and_tasks() -> None:
    result = run_list(FakeChatModel(responder=noted))

    assert result._repr_markdown_() == (
        "**Run**: 3 calls, 282 tokens (counted from the prompts where the model reported no "
        "usage)\n"
        "\n"
        "`task.list`\n"
        "\n" + LIST_VALUES_START + ",\n"
        '      "note": "note of task.list.items[1]"\n'
        "    }\n"
        "  ],\n"
        '  "summary": "summary of task.list"\n'
        "}\n"
        "```"
    )


def test_a_run_that_went_on_after_a_failure_shows_what_failed_and_was_skipped() -> None:
    result = run_list(FakeChatModel(responder=second_note_missing), {"on_error": "continue"})

    assert result._repr_markdown_() == (
        "**Run**: 2 calls, 1 failed, 164 tokens (counted from the prompts where the model "
        "reported no usage)\n"
        "\n"
        "`task.list` does not validate\n"
        "\n"
        "```text\n"
        "The values of 'TaskList' do not validate: 1 step instance(s) failed and 1 were "
        "skipped:\n"
        "  - items.1.note: Field required\n"
        "  - summary: Field required\n"
        "  hint: see result.errors and result.skipped; result.partial('TaskList') gives the "
        "values as plain data\n"
        "```\n"
        "\n" + LIST_VALUES_START + "\n"
        "    }\n"
        "  ]\n"
        "}\n"
        "```\n"
        "\n"
        "**1 step instance failed**\n"
        "\n"
        "`task.list.items:note` at `task.list.items[1]`\n"
        "\n"
        "```text\n"
        "Step 'task.list.items:note' gave no valid output for 'task.list.items[1]' in 1 "
        "attempt(s); the last error:\n"
        "- note: Input should be a valid string\n"
        "  hint: the raw outputs are in error.attempts; check the model's support for "
        "structured output (or choose another method with ModelConfig(model, method=...)), "
        "or pass max_retries=... to run()\n"
        "```\n"
        "\n"
        "**1 skipped instance**\n"
        "\n"
        "- `task.list:summary` at `task.list`, because of "
        "`task.list.items:note at task.list.items[1]`"
    )


def call(
    model: str = "default",
    *,
    attempt: int = 1,
    total_tokens: int | None = None,
    replayed: bool = False,
) -> TraceRecord:
    """One call of 100 prompt tokens (no text, 100 added); the provider reported
    ``total_tokens`` if given."""
    return TraceRecord(
        step_id="task.list:summary",
        node_path="task.list",
        fields=("summary",),
        model=model,
        attempt=attempt,
        messages=(),
        prompt_tokens=PromptTokens("", extra=100),
        usage=None if total_tokens is None else {"total_tokens": total_tokens},
        latency=0.0,
        raw_output="{}",
        error=None,
        replayed=replayed,
    )


TRANSFORM = TransformRecord(
    step_id="task.list:summary",
    node_path="task.list",
    field="summary",
    expression="items | length",
    value=2,
    latency=0.0,
)


def summary_of(*trace: TraceRecord, transforms: tuple[TransformRecord, ...] = ()) -> str:
    result = RunResult(tasks={}, trace=trace, transforms=transforms, usage=RunUsage.of_trace(trace))
    return result._repr_markdown_()


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        (
            summary_of(call(total_tokens=150), call(attempt=2, total_tokens=160)),
            "**Run**: 2 calls, 1 retry, 310 tokens",
        ),
        (
            summary_of(call(total_tokens=150), call(replayed=True)),
            "**Run**: 1 call, 150 tokens, 1 answer replayed",
        ),
        (
            summary_of(call(total_tokens=150), call()),
            "**Run**: 2 calls, 250 tokens (counted from the prompts where the model reported "
            "no usage)",
        ),
        (
            summary_of(transforms=(TRANSFORM, TRANSFORM)),
            "**Run**: 0 calls, 0 tokens, 2 transforms",
        ),
    ],
    ids=["retry", "replayed", "partly reported", "transforms"],
)
def test_the_summary_line_counts_what_the_run_did(summary: str, expected: str) -> None:
    assert summary == expected


def test_a_run_on_several_models_shows_each_models_calls_and_tokens() -> None:
    summary = summary_of(call("fast", total_tokens=50), call("smart"), call("fast"))

    assert summary == (
        "**Run**: 3 calls, 250 tokens (counted from the prompts where the model reported no "
        "usage)\n"
        "\n"
        "| model | calls | tokens |\n"
        "| --- | --- | --- |\n"
        "| `fast` | 2 | 150 |\n"
        "| `smart` | 1 | 100 |"
    )


class TaskLong(TreeNode):
    """Many lines."""

    lines: list[int] = Field(description="The lines.")


def test_a_long_task_is_clipped_and_says_where_to_see_it_all() -> None:
    result = RunResult(tasks={"task.long": TaskLong(lines=list(range(300)))}, trace=())

    shown = result._repr_markdown_().split("\n")

    assert shown[-4:] == [
        "    196,",
        "    197,",
        "… 104 more lines (result.dump('task.long') has them all)",
        "```",
    ]


def test_a_run_repr_is_one_line() -> None:
    result = run_list(FakeChatModel(responder=second_note_missing), {"on_error": "continue"})

    assert repr(result) == "RunResult(tasks=[], calls=2, tokens=164, errors=1)"
