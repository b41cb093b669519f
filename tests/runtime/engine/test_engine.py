"""RunStructure.run/arun: steps on a FakeChatModel through an LLMProvider (never patched)."""

import asyncio
import json
import pickle
from collections.abc import Mapping

import pytest
from catalogue_tree import Item, TaskCatalogue
from example_modules import load_example
from pydantic import Field

from langtree import ExecutionError, RunStructure, StructureError, TreeNode
from langtree.runtime import LLMProvider, RunResult, StepFailedError
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest, ResponderResult
from tests.runtime.fake_structures import structure_for

report_digest = load_example("report_digest")
review_rating = load_example("review_rating")


class TaskGreet(TreeNode):
    """Greet the person by name."""

    name: str = Field(description="Who to greet.")
    greeting: str = Field(description="One friendly sentence.")


class TaskStory(TreeNode):
    """
    ! @sequential
    Write a very short story.
    """

    title: str = Field(description="A title of at most five words.")
    body: str = Field(description="Three sentences.")


class TaskAddress(TreeNode):
    """Greet {audience}."""

    greeting: str = Field(description="One sentence.")


class TaskPick(TreeNode):
    """
    ! llm("smart")
    Pick a colour.
    """

    colour: str


class TaskShelf(TreeNode):
    """Describe every item on a shelf."""

    items: list[Item] = Field(default=[], description="The items.")


class TaskSource(TreeNode):
    """
    ! @all->task.sink@{{outputs.topic=topic}}
    Pick a topic.
    """

    topic: str = Field(description="A topic.")


class TaskSink(TreeNode):
    """Write a line."""

    line: str = Field(description="A line.")


def answers(*replies: ResponderResult) -> FakeChatModel:
    """A model that gives ``replies`` in turn."""
    queue = list(replies)
    return FakeChatModel(responder=lambda request: queue.pop(0))


def greet(model: FakeChatModel, **options: int) -> RunResult:
    return structure_for(TaskGreet, model=model).run({TaskGreet: {"name": "Ada"}}, **options)


GREET_TEXT = """\
You write one part of a larger structured document. The task below describes the whole
document down to the part you write; the context holds what is already known. Write only
the requested fields, as structured output.

# Greet

Greet the person by name.

## Greeting

One friendly sentence.

# Context

## Name

Ada

# Output

Write Greeting.
"""


# --- Results ------------------------------------------------------------------------------


def test_single_task_run_returns_a_validated_instance() -> None:
    result = greet(answers({"greeting": "Hello, Ada!"}))

    assert result[TaskGreet] == TaskGreet(name="Ada", greeting="Hello, Ada!")


def test_result_is_also_found_by_tag() -> None:
    result = greet(answers({"greeting": "Hello, Ada!"}))

    assert result["task.greet"] is result[TaskGreet]


def test_result_of_a_task_not_in_the_run_is_a_key_error() -> None:
    result = greet(answers({"greeting": "Hello, Ada!"}))

    with pytest.raises(KeyError, match=r"'task\.story' is not a task of this run"):
        result["task.story"]


def test_step_messages_are_those_of_the_dry_run() -> None:
    model = answers({"greeting": "Hello, Ada!"})
    structure = structure_for(TaskGreet, model=model)

    structure.run({TaskGreet: {"name": "Ada"}})

    assert model.calls[0].text == GREET_TEXT
    assert model.calls[0].messages == structure.prompts({TaskGreet: {"name": "Ada"}})[0].messages


def test_call_carries_the_node_path_and_only_the_step_fields() -> None:
    model = answers({"greeting": "Hello, Ada!"})

    greet(model)

    assert (model.calls[0].node_path, model.calls[0].fields) == ("task.greet", ("greeting",))


def test_sequential_field_sees_the_earlier_generated_value() -> None:
    model = answers({"title": "The Patient Owl"}, {"body": "It waited."})

    structure_for(TaskStory, model=model).run()

    assert model.calls[1].text.endswith(
        "# Context\n\n## Title\n\nThe Patient Owl\n\n# Output\n\nWrite Body.\n"
    )


def test_supplied_values_are_not_generated_again() -> None:
    model = answers({"body": "It waited."})

    result = structure_for(TaskStory, model=model).run({TaskStory: {"title": "Mine"}})

    assert (result[TaskStory].title, [call.fields for call in model.calls]) == (
        "Mine",
        [("body",)],
    )


def test_external_variables_reach_the_prompt() -> None:
    model = answers({"greeting": "Hi all."})

    structure_for(TaskAddress, model=model).run(variables={"audience": "the team"})

    assert "Greet the team." in model.calls[0].text


def test_all_command_sends_a_generated_value_before_the_destination_step() -> None:
    model = FakeChatModel(
        responder=lambda request: (
            {"topic": "tides"} if request.fields == ("topic",) else {"line": "Waves."}
        )
    )

    structure_for(TaskSource, TaskSink, model=model).run()

    assert model.calls[-1].text.endswith(
        "# Context\n\n## Topic\n\ntides\n\n# Output\n\nWrite Line.\n"
    )


# --- Lists and @each ----------------------------------------------------------------------


def catalogue(count: int) -> dict[str, object]:
    return {"items": [{"name": f"item {index}"} for index in range(count)]}


def test_each_list_element_is_generated_as_its_own_node() -> None:
    model = FakeChatModel(responder=lambda request: {"blurb": f"about {request.node_path}"})

    result = structure_for(TaskCatalogue, model=model).run({TaskCatalogue: catalogue(2)})

    assert [item.blurb for item in result[TaskCatalogue].items] == [
        "about task.catalogue.items[0]",
        "about task.catalogue.items[1]",
    ]


def test_list_elements_with_supplied_values_are_not_generated_again() -> None:
    model = FakeChatModel(responder=lambda request: {"blurb": "Generated."})
    items = [{"name": "kept", "blurb": "Mine."}, {"name": "new"}]

    result = structure_for(TaskCatalogue, model=model).run({TaskCatalogue: {"items": items}})

    assert (
        [item.blurb for item in result[TaskCatalogue].items],
        [call.node_path for call in model.calls],
    ) == (["Mine.", "Generated."], ["task.catalogue.items[1]"])


def summaries(request: FakeRequest) -> ResponderResult:
    if request.fields == ("summary",):
        return {"summary": f"summary of {request.node_path}"}
    return {"headline": "Short", "digest": "Read it."}


def run_report_digest(model: FakeChatModel) -> RunResult:
    structure = structure_for(
        report_digest.TaskSummarizeReport, report_digest.TaskWriteDigest, model=model
    )
    sections = [
        {"title": "Costs", "paragraphs": [{"text": "Costs rose."}]},
        {"title": "Plans", "paragraphs": [{"text": "We grow."}]},
    ]
    return structure.run({report_digest.TaskSummarizeReport: {"sections": sections}})


def test_report_digest_example_runs_end_to_end() -> None:
    model = FakeChatModel(responder=summaries)

    result = run_report_digest(model)

    assert result[report_digest.TaskWriteDigest].model_dump() == {
        "section_summaries": [
            "summary of task.summarize_report.sections[0]",
            "summary of task.summarize_report.sections[1]",
        ],
        "headline": "Short",
        "digest": "Read it.",
    }


def test_each_fills_the_destination_list_before_its_step_runs() -> None:
    model = FakeChatModel(responder=summaries)

    run_report_digest(model)

    assert model.calls[-1].text.endswith(
        "# Context\n\n## Section Summaries\n\n[\n"
        '  "summary of task.summarize_report.sections[0]",\n'
        '  "summary of task.summarize_report.sections[1]"\n'
        "]\n\n# Output\n\nWrite Headline, Digest.\n"
    )


# --- Retries and failures -----------------------------------------------------------------


def test_invalid_output_is_retried_with_the_error_fed_back() -> None:
    model = answers({"greeting": 5}, {"greeting": "Hello, Ada!"})

    greet(model)

    assert model.calls[1].messages[2].content == (
        "Your previous answer could not be used:\n"
        "- greeting: Input should be a valid string\n\n"
        "Write Greeting again, as structured output."
    )


def test_retry_keeps_the_original_messages_first() -> None:
    model = answers({"greeting": 5}, {"greeting": "Hello, Ada!"})

    greet(model)

    assert model.calls[1].messages[:2] == model.calls[0].messages


def test_reply_without_structured_output_is_retried() -> None:
    model = answers("Hello there", {"greeting": "Hello, Ada!"})

    result = greet(model)

    assert (result[TaskGreet].greeting, model.calls[1].messages[2].content) == (
        "Hello, Ada!",
        "Your previous answer could not be used:\n"
        "- the answer held no tool call, only text: 'Hello there'\n\n"
        "Write Greeting again, as structured output.",
    )


def test_trace_records_every_attempt() -> None:
    model = answers({"greeting": 5}, {"greeting": "Hello, Ada!"})

    trace = greet(model).trace

    assert [(r.attempt, r.raw_output, r.error) for r in trace] == [
        (1, '{"greeting": 5}', "- greeting: Input should be a valid string"),
        (2, '{"greeting": "Hello, Ada!"}', None),
    ]


def test_trace_record_describes_the_call() -> None:
    record = greet(answers({"greeting": "Hello, Ada!"})).trace[0]

    assert (
        record.step_id,
        record.node_path,
        record.fields,
        record.model,
        record.token_count > 0,
        record.usage,
        record.latency >= 0,
        record.messages[1].content,
    ) == (
        "task.greet:greeting",
        "task.greet",
        ("greeting",),
        "default",
        True,
        None,
        True,
        GREET_TEXT.split("structured output.\n\n", 1)[1],
    )


def failing_story() -> FakeChatModel:
    return FakeChatModel(
        responder=lambda request: {"title": "Owl"} if request.fields == ("title",) else {}
    )


def test_persistent_failure_raises_step_failed_error() -> None:
    with pytest.raises(StepFailedError) as caught:
        structure_for(TaskStory, model=failing_story()).run()

    assert str(caught.value) == (
        "Step 'task.story:body' gave no valid output for 'task.story' in 3 attempt(s); "
        "the last error:\n- body: Field required\n"
        "  hint: the raw outputs are in error.attempts; check the model's support for "
        "structured output (or choose another method with ModelConfig(model, method=...)), "
        "or pass max_retries=... to run()"
    )


def test_step_failed_error_carries_every_attempt() -> None:
    with pytest.raises(StepFailedError) as caught:
        structure_for(TaskStory, model=failing_story()).run()

    assert [(r.attempt, r.raw_output) for r in caught.value.attempts] == [
        (1, "{}"),
        (2, "{}"),
        (3, "{}"),
    ]


def test_step_failed_error_carries_the_partial_results() -> None:
    with pytest.raises(StepFailedError) as caught:
        structure_for(TaskStory, model=failing_story()).run()

    assert (caught.value.step_id, caught.value.node_path, caught.value.partial) == (
        "task.story:body",
        "task.story",
        {"task.story": {"title": "Owl"}},
    )


def test_step_failed_error_is_an_execution_error_that_pickles() -> None:
    with pytest.raises(ExecutionError) as caught:
        structure_for(TaskStory, model=failing_story()).run(max_retries=0)

    copy = pickle.loads(pickle.dumps(caught.value))
    assert (str(copy), copy.attempts) == (str(caught.value), caught.value.attempts)


def test_max_retries_zero_calls_once() -> None:
    model = FakeChatModel(responder=lambda request: {})

    with pytest.raises(StepFailedError):
        greet(model, max_retries=0)

    assert len(model.calls) == 1


# --- Concurrency --------------------------------------------------------------------------


class InFlight:
    """An async responder that counts the calls in flight."""

    def __init__(self) -> None:
        self.current = 0
        self.peak = 0

    async def __call__(self, request: FakeRequest) -> Mapping[str, object]:
        self.current += 1
        self.peak = max(self.peak, self.current)
        await asyncio.sleep(0.02)
        self.current -= 1
        return {"blurb": "Fine."}


def test_list_elements_run_concurrently() -> None:
    counter = InFlight()
    structure = structure_for(TaskCatalogue, model=FakeChatModel(responder=counter))

    structure.run({TaskCatalogue: catalogue(5)})

    assert counter.peak == 5


def test_independent_tasks_run_concurrently() -> None:
    counter = InFlight()
    structure = structure_for(TaskCatalogue, TaskShelf, model=FakeChatModel(responder=counter))

    structure.run({TaskCatalogue: catalogue(1), TaskShelf: catalogue(1)})

    assert counter.peak == 2


def test_max_concurrency_caps_calls_in_flight() -> None:
    counter = InFlight()
    structure = structure_for(TaskCatalogue, model=FakeChatModel(responder=counter))

    structure.run({TaskCatalogue: catalogue(6)}, max_concurrency=2)

    assert counter.peak == 2


def test_run_works_inside_a_running_event_loop() -> None:
    async def notebook_cell() -> RunResult:
        return greet(answers({"greeting": "Hello, Ada!"}))

    result = asyncio.run(notebook_cell())

    assert result[TaskGreet].greeting == "Hello, Ada!"


def test_arun_runs_on_the_callers_loop() -> None:
    structure = structure_for(TaskGreet, model=answers({"greeting": "Hello, Ada!"}))

    result = asyncio.run(structure.arun({TaskGreet: {"name": "Ada"}}))

    assert result[TaskGreet].greeting == "Hello, Ada!"


def test_max_concurrency_below_one_is_an_error() -> None:
    with pytest.raises(ExecutionError, match="max_concurrency must be at least 1, got 0"):
        greet(FakeChatModel(), max_concurrency=0)


# --- Checks before any call ---------------------------------------------------------------


def test_run_without_provider_fails_before_any_call() -> None:
    structure = RunStructure()
    structure.add(TaskGreet)

    with pytest.raises(ExecutionError) as caught:
        structure.run({TaskGreet: {"name": "Ada"}})

    assert str(caught.value) == (
        "Cannot run: no provider\n"
        "  hint: pass the models when building the structure: "
        "RunStructure(provider=LLMProvider({...}))"
    )


def test_missing_external_variable_fails_before_any_call() -> None:
    model = FakeChatModel()

    with pytest.raises(ExecutionError) as caught:
        structure_for(TaskAddress, model=model).run()

    assert str(caught.value) == (
        "Missing external variable(s) 'audience': the texts of 'task.address' use them "
        "and nothing supplies them\n"
        "  hint: pass variables={'audience': ...} to prompts() or run()"
    )

    assert model.calls == []


def test_unknown_model_key_fails_before_any_call() -> None:
    model = FakeChatModel()
    structure = RunStructure(provider=LLMProvider({"fast": model}))
    structure.add(TaskPick)

    with pytest.raises(StructureError) as caught:
        structure.run()

    assert [(d.message, d.hint) for d in caught.value.diagnostics] == [
        ("Model 'smart' is not in the provider", "the provider's models are 'fast'")
    ]

    assert model.calls == []


def test_unknown_input_field_fails_before_any_call() -> None:
    model = FakeChatModel()

    with pytest.raises(StructureError):
        structure_for(TaskGreet, model=model).run({TaskGreet: {"nme": "Ada"}})

    assert model.calls == []


def test_unknown_input_task_fails_before_any_call() -> None:
    model = FakeChatModel()

    with pytest.raises(StructureError) as caught:
        structure_for(TaskGreet, model=model).run({"task.nobody": {}})

    assert str(caught.value) == (
        "LangTree found 1 problem:\n\n"
        "error: Inputs name 'task.nobody', which is not an added task\n"
        "  hint: the added tasks are 'task.greet'"
    )

    assert model.calls == []


# --- JSON ---------------------------------------------------------------------------------


def test_to_json_holds_the_tasks_and_the_trace() -> None:
    data = json.loads(greet(answers({"greeting": "Hello, Ada!"})).to_json())

    assert (data["tasks"], [r["attempt"] for r in data["trace"]]) == (
        {"task.greet": {"name": "Ada", "greeting": "Hello, Ada!"}},
        [1],
    )
