"""Runs under the ``exact`` strategy: values travel unconverted, and a value that would
need a conversion stops the run (docs/dsl.md, "Null, absent and strict mappings")."""

from pathlib import Path

import pytest
from pydantic import Field

from langtree import ExecutionError, RunStructure, TreeNode
from langtree.runtime import LLMProvider
from langtree.structure._config import ConfigInput
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest, ResponderResult


def line_of(text: str) -> int:
    lines = Path(__file__).read_text().splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)


class Step(TreeNode):
    name: str = Field(description="The step's name.")
    span: tuple[int, int] = Field(description="Its first and last day.")


class TaskPlan(TreeNode):
    """! @all->task.review@{{value.steps=steps, value.owner=owner}}"""

    owner: str = Field(description="Who owns the plan.")
    steps: list[Step] = Field(description="The steps.")


class TaskReview(TreeNode):
    owner: str = Field(description="The owner.")
    steps: list[Step] = Field(description="The steps.")
    verdict: str = Field(description="The verdict.")


def plan_answer(request: FakeRequest) -> ResponderResult:
    return {"verdict": "Fine."} if request.fields == ("verdict",) else {}


def run(model: FakeChatModel, config: ConfigInput, inputs: dict[type[TreeNode], object]):  # type: ignore[no-untyped-def]
    structure = RunStructure(config, provider=LLMProvider({"default": model}))
    structure.add(TaskPlan)
    structure.add(TaskReview)
    return structure.run(inputs)


def test_values_of_identical_types_travel_unconverted() -> None:
    steps = [{"name": "Draft", "span": (1, 3)}, {"name": "Ship", "span": (4, 4)}]
    model = FakeChatModel(responder=plan_answer)

    result = run(
        model, {"validation_strategy": "exact"}, {TaskPlan: {"owner": "Ada", "steps": steps}}
    )

    review = result[TaskReview]
    assert (review.owner, [step.span for step in review.steps]) == ("Ada", [(1, 3), (4, 4)])


class TaskCode(TreeNode):
    """! @all->task.lookup@{{value.number=code}}"""

    code: str = Field(description="The code.")


class TaskLookup(TreeNode):
    number: int = Field(description="The number.")
    label: str = Field(description="Its label.")


UNCHECKED = {"enable_type_validation": False}


def lookup(config: dict[str, object], model: FakeChatModel):  # type: ignore[no-untyped-def]
    structure = RunStructure(config, provider=LLMProvider({"default": model}))
    structure.add(TaskCode)
    structure.add(TaskLookup)
    return structure.run({TaskCode: {"code": "42"}})


def test_exact_refuses_a_value_that_strict_converts() -> None:
    model = FakeChatModel()

    with pytest.raises(ExecutionError) as raised:
        lookup({**UNCHECKED, "validation_strategy": "exact"}, model)

    assert str(raised.value) == (
        "'value.number' cannot take the value sent: '42' is not a value of int (the exact "
        "strategy converts nothing): Input should be a valid integer\n"
        '        """! @all->task.lookup@{{value.number=code}}"""\n'
        "                                 ^~~~~~~~~~~~~~~~~\n"
        f"  in TaskCode ({__file__}:{line_of('! @all->task.lookup@')})\n"
        "  hint: check the value of the source, or the type of 'number'"
    )
    assert model.calls == []


def test_strict_converts_the_same_value() -> None:
    result = lookup(UNCHECKED, FakeChatModel())

    assert result[TaskLookup].number == 42
