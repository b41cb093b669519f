"""What a run will cost before it starts: ``prompts()`` totals calls and input tokens."""

from __future__ import annotations

import json

from pydantic import Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.prompts._estimate import Cost, Prompts
from langtree.prompts._tokens import PromptTokens, count_tokens
from langtree.testing import FakeChatModel


class Item(TreeNode):
    """Name the item."""

    name: str = Field(
        description="""A short name.
    ! resample(3)
    ! llm("fast")"""
    )
    note: str = Field(description="One sentence.")


class TaskShelf(TreeNode):
    """! resample(2)"""

    items: list[Item]
    label: str = Field(description="The shelf's label.")


class Provider:
    def list_models(self) -> list[str]:
        return ["default", "fast"]


SHELF_INPUTS = {TaskShelf: {"items": [{}, {}]}}


def shelf_prompts(config: object = None) -> Prompts:
    structure = RunStructure(config, Provider())  # type: ignore[arg-type]
    structure.add(TaskShelf)
    return structure.prompts(SHELF_INPUTS)


def shelf_structure(models: dict[str, FakeChatModel]) -> RunStructure:
    """``TaskShelf`` on a provider of ``models``, whose first key is the default."""
    structure = RunStructure(provider=LLMProvider(models))
    structure.add(TaskShelf)
    return structure


def test_prompts_are_still_a_list() -> None:
    prompts = shelf_prompts()
    assert isinstance(prompts, list)
    assert [prompt.step_id for prompt in prompts][:2] == [
        "task.shelf.items:name",
        "task.shelf.items:name",
    ]
    assert [prompt.samples for prompt in prompts] == [3, 3, 1, 1, 2]  # the root resamples 2


def test_each_prompt_costs_one_call_per_sample() -> None:
    prompts = shelf_prompts()
    tokens = {prompt.step_id: prompt.call_tokens for prompt in prompts}
    by_step = prompts.by_step()

    assert by_step == {
        "task.shelf.items:name": Cost(
            prompts=2, calls=6, input_tokens=6 * tokens["task.shelf.items:name"]
        ),
        "task.shelf.items:note": Cost(
            prompts=2, calls=2, input_tokens=2 * tokens["task.shelf.items:note"]
        ),
        "task.shelf:label": Cost(prompts=1, calls=2, input_tokens=2 * tokens["task.shelf:label"]),
    }
    assert prompts.cost == Cost(
        prompts=5, calls=10, input_tokens=sum(cost.input_tokens for cost in by_step.values())
    )
    assert prompts.by_model() == {
        "fast": by_step["task.shelf.items:name"],
        "default": Cost(
            prompts=3,
            calls=4,
            input_tokens=by_step["task.shelf.items:note"].input_tokens
            + by_step["task.shelf:label"].input_tokens,
        ),
    }


def test_each_call_counts_its_output_schema_as_the_model_receives_it() -> None:
    model = FakeChatModel()
    structure = shelf_structure({"default": model, "fast": model})
    prompts = structure.prompts(SHELF_INPUTS)
    structure.run(SHELF_INPUTS)

    # What the model receives: the tool's name and its arguments' schema.
    sent = {
        call.tool_name: json.dumps({**call.schema, "title": call.tool_name}, separators=(",", ":"))
        for call in model.calls
        if call.schema is not None
    }
    assert [prompt.schema_tokens for prompt in prompts] == [
        PromptTokens(sent[name], model_name)
        for name, model_name in [
            ("Item_name", "fast"),
            ("Item_name", "fast"),
            ("Item_note", "default"),
            ("Item_note", "default"),
            ("TaskShelf_label", "default"),
        ]
    ]
    assert [prompt.call_tokens - prompt.token_count for prompt in prompts] == [
        count_tokens(sent[name]).count
        for name in ["Item_name", "Item_name", "Item_note", "Item_note", "TaskShelf_label"]
    ]
    assert prompts[0].schema_tokens is prompts[1].schema_tokens  # counted once per step kind


def test_prompts_over_their_budget_are_counted() -> None:
    prompts = shelf_prompts({"token_budget": {"fast": 10}})
    assert prompts.by_model()["fast"].over_budget == 2
    assert prompts.cost.over_budget == 2


def test_the_costs_as_markdown() -> None:
    prompts = shelf_prompts()
    cost = prompts.cost
    name, note, label = (prompts.by_step()[step] for step in prompts.by_step())
    assert prompts.cost_markdown() == (
        f"**10 call(s), {cost.input_tokens:,} input tokens** (5 prompt(s); retries and "
        "model-written lists add to it)\n\n"
        "| step | prompts | calls | input tokens | over budget |\n"
        "| --- | --- | --- | --- | --- |\n"
        f"| `task.shelf.items:name` | 2 | 6 | {name.input_tokens:,} | 0 |\n"
        f"| `task.shelf.items:note` | 2 | 2 | {note.input_tokens:,} | 0 |\n"
        f"| `task.shelf:label` | 1 | 2 | {label.input_tokens:,} | 0 |\n\n"
        "| model | prompts | calls | input tokens | over budget |\n"
        "| --- | --- | --- | --- | --- |\n"
        f"| `fast` | 2 | 6 | {name.input_tokens:,} | 0 |\n"
        f"| `default` | 3 | 4 | {note.input_tokens + label.input_tokens:,} | 0 |"
    )
    assert prompts._repr_markdown_().startswith(prompts.cost_markdown() + "\n\n---\n\n")


def test_by_model_files_each_call_under_the_key_the_run_reports() -> None:
    model = FakeChatModel()
    # The provider's default is 'smart': the steps that name no model call it.
    structure = shelf_structure({"smart": model, "fast": model})

    prompts = structure.prompts(SHELF_INPUTS)
    usage = structure.run(SHELF_INPUTS).usage

    assert prompts.default_model == "smart"
    assert {key: cost.calls for key, cost in prompts.by_model().items()} == {
        key: used.calls for key, used in usage.by_model.items()
    }
    assert list(prompts.by_model()) == ["fast", "smart"]
    assert [prompts.model_of(prompt) for prompt in prompts] == ["fast"] * 2 + ["smart"] * 3


def test_without_a_provider_the_default_model_is_filed_under_default() -> None:
    structure = RunStructure({"token_budget": {"default": 10}})
    structure.add(TaskShelf)

    prompts = structure.prompts({TaskShelf: {"items": [{}, {}]}})

    assert prompts.default_model == "default"
    assert list(prompts.by_model()) == ["fast", "default"]
    # The budget of a key applies to the prompts filed under it.
    assert {key: cost.over_budget for key, cost in prompts.by_model().items()} == {
        "fast": 0,
        "default": 3,
    }
