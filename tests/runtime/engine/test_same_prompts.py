"""A run sends the same prompts whichever of its calls finishes first.

The models here answer after yielding to the event loop a number of times the test
chooses per call, so the calls finish in an order the test sets, not the machine's
clock; each test runs in two opposite orders and compares the prompts.
"""

import asyncio
from collections.abc import Callable, Mapping

from pydantic import Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.prompts._state import Address
from langtree.runtime.engine._waits import InstanceWaits
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest
from tests.category_pages import PRODUCTS, TaskCatalogue, TaskCategoryPage

Delay = Callable[[FakeRequest], int]


def answering(delay: Delay) -> FakeChatModel:
    """A model that names each value after the call, once ``delay(request)`` yields."""

    async def responder(request: FakeRequest) -> Mapping[str, object]:
        for _ in range(delay(request)):
            await asyncio.sleep(0)
        return {name: f"{name} of {request.node_path}" for name in request.fields}

    return FakeChatModel(responder=responder)


def prompts_of(
    *tasks: type[TreeNode],
    inputs: Mapping[object, object],
    delay: Delay,
    models: tuple[str, ...] = ("default",),
) -> dict[tuple[str, tuple[str, ...]], str]:
    """Each call's prompt by node path and fields, in a run whose calls finish as
    ``delay`` says."""
    model = answering(delay)
    structure = RunStructure(provider=LLMProvider(dict.fromkeys(models, model)))
    for task in tasks:
        structure.add(task)
    structure.run(inputs)
    return {(call.node_path or "", call.fields): call.text for call in model.calls}


def slow(predicate: Callable[[FakeRequest], bool]) -> Delay:
    return lambda request: 20 if predicate(request) else 0


# -- an @each into the elements a step's context shows ----------------------------------------


INTRO = ("task.category_page", ("intro",))


def test_the_intro_shows_every_blurb_the_each_writes() -> None:
    for late in ("[0]", "[1]"):
        prompts = prompts_of(
            TaskCatalogue,
            TaskCategoryPage,
            inputs=PRODUCTS,
            delay=slow(lambda request, late=late: late in (request.node_path or "")),
        )
        intro = prompts[INTRO]
        assert '"blurb": "blurb of task.catalogue.products[0]"' in intro
        assert '"blurb": "blurb of task.catalogue.products[1]"' in intro


# -- context entries several commands send -------------------------------------------------


class TaskFirst(TreeNode):
    note: str = Field(description="A note.\n! @all->task.reader@{{outputs.first=note}}")


class TaskSecond(TreeNode):
    note: str = Field(description="A note.\n! @all->task.reader@{{outputs.second=note}}")


class TaskReader(TreeNode):
    """Read the notes."""

    answer: str = Field(description="The answer.")


def test_entries_from_several_commands_keep_their_definition_order() -> None:
    runs = [
        prompts_of(
            TaskFirst,
            TaskSecond,
            TaskReader,
            inputs={},
            delay=slow(lambda request, task=task: request.node_path == task),
        )
        for task in ("task.first", "task.second")
    ]

    prompt = runs[0][("task.reader", ("answer",))]
    assert runs[1][("task.reader", ("answer",))] == prompt
    assert prompt.index("## First") < prompt.index("## Second")


# -- the steps of a @parallel node --------------------------------------------------------------


class Draft(TreeNode):
    """! @parallel"""

    title: str = Field(description='! llm("strong")\nA title.')
    body: str = Field(description="A body that opens with {hook}.")


class TaskHook(TreeNode):
    hook: str = Field(
        description="An opening line.\n! @all->task.publish.draft@{{prompt.hook=hook}}"
    )


class TaskPublish(TreeNode):
    """Publish the draft."""

    draft: Draft = Field(default=Draft.model_construct(), description="The draft.")
    summary: str = Field(description="A summary of the draft.")


def test_steps_of_a_parallel_node_never_show_each_others_fields() -> None:
    # The title is done long before the body starts, which waits for the hook.
    prompts = prompts_of(
        TaskHook,
        TaskPublish,
        inputs={},
        delay=slow(lambda request: request.fields == ("hook",)),
        models=("default", "strong"),
    )

    assert "## Title" not in prompts[("task.publish.draft", ("body",))]
    assert "## Body" not in prompts[("task.publish.draft", ("title",))]


def test_a_node_written_by_steps_in_any_order_shows_its_fields_in_declared_order() -> None:
    summaries = {
        prompts_of(
            TaskHook,
            TaskPublish,
            inputs={},
            delay=slow(lambda request, late=late: request.fields == (late,)),
            models=("default", "strong"),
        )[("task.publish", ("summary",))]
        for late in ("title", "body")
    }

    (summary,) = summaries
    assert summary.index('"title"') < summary.index('"body"')


# -- commands that write one field ----------------------------------------------------------


class TaskSources(TreeNode):
    """! @parallel"""

    first: str = Field(description="A label.\n! @all->task.target@{{value.label=first}}")
    second: str = Field(description="A label.\n! @all->task.target@{{value.label=second}}")


class TaskTarget(TreeNode):
    label: str = Field(default="", description="The label.")
    answer: str = Field(description="The answer.")


def test_commands_that_write_one_field_go_in_definition_order() -> None:
    for late in ("first", "second"):
        model = answering(slow(lambda request, late=late: request.fields == (late,)))
        structure = RunStructure(provider=LLMProvider({"default": model, "other": model}))
        structure.add(TaskSources)
        structure.add(TaskTarget)

        result = structure.run({})

        assert result[TaskTarget].label == "second of task.sources"


# -- waiting through a step with no instances ------------------------------------------------


def test_an_instance_waits_for_the_prerequisites_of_a_step_with_no_instances() -> None:
    class Item(TreeNode):
        text: str = Field(description="The text.")

    class TaskChain(TreeNode):
        """! @parallel"""

        topic: str = Field(description='! llm("strong")\nThe topic.')
        items: list[Item] = Field(default=[], description="Items about {topic}.")
        verdict: str = Field(description="The verdict.")

    structure = RunStructure()
    structure.add(TaskChain)
    steps = structure.plan().steps
    assert [(s.id, s.depends_on) for s in steps] == [
        ("task.chain:topic", ()),
        ("task.chain.items:text", ("task.chain:topic",)),
        ("task.chain:verdict", ("task.chain.items:text",)),
    ]
    waits = InstanceWaits(structure.nodes, steps)
    waits.open(1, [])  # an empty list: the items' step has no instance
    waits.open(2, [Address("task.chain")])

    assert waits.take_ready() == []
    waits.open(0, [Address("task.chain")])
    assert waits.take_ready() == [(0, Address("task.chain"))]
    waits.finish(0, Address("task.chain"))
    assert waits.take_ready() == [(2, Address("task.chain"))]
