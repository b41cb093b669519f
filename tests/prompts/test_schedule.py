"""The readiness core that the dry run and the run share: step writes settle in any
order, and a command is carried out once everything it reads is settled."""

import pytest
from pydantic import Field

from langtree import RunStructure, TreeNode
from langtree.prompts._schedule import CommandReadiness, FlowSchedule
from langtree.prompts._state import RunState
from langtree.structure.commands._flows import Flow, resolve_flows
from langtree.structure.types._type_config import TypeMappingConfig


class Item(TreeNode):
    text: str = Field(description="The text.")


class TaskSource(TreeNode):
    title: str = Field(description="The title.")
    items: list[Item] = Field(description="! @each[items]->task.sink@{{value.texts=items.text}}*")


class TaskSink(TreeNode):
    texts: list[str] = Field(default=[], description="The texts.")
    summary: str = Field(description="The summary.")


INPUTS = {"task.source": {"title": "t", "items": [{"text": "a"}, {"text": "b"}]}}


def setup() -> tuple[RunStructure, list[Flow], RunState]:
    structure = RunStructure()
    structure.add(TaskSource)
    structure.add(TaskSink)
    flows, _ = resolve_flows(structure.nodes)
    return structure, flows, RunState.start(structure.nodes, INPUTS)


def test_plan_generates_items_in_the_middle_step() -> None:
    structure, _, _ = setup()

    assert [step.fields for step in structure.plan().steps] == [
        ("title",),
        ("items",),
        ("summary",),
    ]


def test_command_waits_until_the_step_generating_its_reads_settles_in_any_order() -> None:
    structure, flows, state = setup()
    config = structure.config.type_mapping
    readiness = CommandReadiness(structure.nodes, flows, structure.plan().steps)

    readiness.settle(2)
    readiness.settle(0)
    readiness.carry_out_ready(state, config)
    assert readiness.waiting == {0}
    assert state.roots["task.sink"].get("texts") != ["a", "b"]

    readiness.settle(1)
    readiness.carry_out_ready(state, config)
    assert readiness.waiting == set()
    assert state.roots["task.sink"]["texts"] == ["a", "b"]


def test_dry_run_schedule_carries_out_the_command_before_the_step_after_its_producer() -> None:
    structure, flows, state = setup()
    config = structure.config.type_mapping
    schedule = FlowSchedule(structure.nodes, flows, structure.plan().steps)

    schedule.carry_out_before(1, state, config)
    assert schedule.waiting == {0}

    schedule.carry_out_before(2, state, config)
    assert schedule.waiting == set()
    assert state.roots["task.sink"]["texts"] == ["a", "b"]


class FailingOnce(CommandReadiness):
    """Fails the first write, as a command whose value does not fit would."""

    failed = False

    def _write(self, state: RunState, flow: Flow, config: TypeMappingConfig) -> None:
        if not self.failed:
            self.failed = True
            raise ValueError("does not fit")
        super()._write(state, flow, config)


def test_commands_of_a_failed_batch_are_checked_again() -> None:
    structure, flows, state = setup()
    config = structure.config.type_mapping
    readiness = FailingOnce(structure.nodes, flows, structure.plan().steps)
    for position in range(3):
        readiness.settle(position)

    with pytest.raises(ValueError, match="does not fit"):
        readiness.carry_out_ready(state, config)
    readiness.carry_out_ready(state, config)

    assert readiness.waiting == set()
    assert state.roots["task.sink"]["texts"] == ["a", "b"]
