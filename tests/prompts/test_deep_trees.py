"""Node classes nested hundreds of levels deep: the structure and prompts stages and the
run walk them without recursion, so depth is never a ``RecursionError`` (DESIGN D10)."""

import json
from typing import Any

import pytest
from pydantic import Field

from langtree import ExecutionError, RunStructure, TreeNode
from langtree.runtime import LLMProvider
from langtree.testing import FakeChatModel


def chain(depth: int, *, known: bool, command: str = "") -> type[TreeNode]:
    """``TaskDeep`` holding ``depth`` nested node classes, each in the field ``child``; the
    last one has the field ``text``. ``known``: every node field defaults to an empty node,
    so the run descends to the last class; otherwise the task generates ``child`` whole.
    ``command`` ends the task's docstring."""
    node: type[TreeNode] = type(
        f"Level{depth}",
        (TreeNode,),
        {
            "__doc__": f"Level {depth}.",
            "__module__": __name__,
            "__annotations__": {"text": str},
            "text": Field(description="The text."),
        },
    )
    default = {"default_factory": dict} if known else {}
    for level in range(depth - 1, -1, -1):
        name = f"Level{level}" if level else "TaskDeep"
        node = type(
            name,
            (TreeNode,),
            {
                "__doc__": f"Level {level}." if level else f"Deep task.\n\n{command}",
                "__module__": __name__,
                "__annotations__": {"child": node},
                "child": Field(description="Down.", **default),  # type: ignore[call-overload]
            },
        )
    return node


def expected_document(depth: int, output: str) -> str:
    """One level after the other, each heading a level deeper (at most ``######``)."""
    blocks = ["# Deep", "Deep task."]
    for level in range(1, depth + 1):
        blocks += ["#" * min(level + 1, 6) + " Child", "Down.", f"Level {level}."]
    blocks += ["#" * min(depth + 2, 6) + " Text", "The text.", "# Output", f"Write {output}."]
    return "\n\n".join(blocks) + "\n"


def planned(task: type[TreeNode], model: FakeChatModel | None = None) -> RunStructure:
    provider = LLMProvider({"fake": model}) if model is not None else None
    structure = RunStructure(provider=provider)
    structure.add(task)
    structure.validate()
    return structure


@pytest.mark.parametrize("depth", [pytest.param(300, id="300"), pytest.param(1000, id="1000")])
def test_prompts_descend_through_a_deep_chain_of_known_nodes(depth: int) -> None:
    structure = planned(chain(depth, known=True))

    (prompt,) = structure.prompts()

    assert prompt.node_path == "task.deep" + ".child" * depth
    assert prompt.messages[1].content == expected_document(depth, "Text")


@pytest.mark.parametrize("depth", [pytest.param(300, id="300"), pytest.param(1000, id="1000")])
def test_a_deep_node_generated_whole_shows_every_nested_class(depth: int) -> None:
    structure = planned(chain(depth, known=False))

    (prompt,) = structure.prompts()

    assert prompt.step_id == "task.deep:child"
    assert prompt.messages[1].content == expected_document(depth, "Child")


@pytest.mark.parametrize("depth", [pytest.param(300, id="300"), pytest.param(1000, id="1000")])
def test_a_run_descends_through_deep_known_nodes(depth: int) -> None:
    model = FakeChatModel()
    task = chain(depth, known=True)
    structure = planned(task, model)

    result = structure.run()

    (call,) = model.calls
    assert call.messages[1].content == expected_document(depth, "Text")
    node: Any = result[task]
    partial: Any = result.partial(task)
    for _ in range(depth):
        node, partial = node.child, partial["child"]
    assert node.text == partial["text"] == "text 1"
    if depth < 400:  # deeper, Python's json module gives up (a clear ExecutionError)
        assert json.loads(result.to_json())["tasks"]["task.deep"]["child"]["child"] is not None
    else:
        with pytest.raises(ExecutionError, match="nest too deep for JSON text"):
            result.to_json()


def test_a_command_copies_a_deep_node_into_another_task() -> None:
    depth = 300
    task = chain(depth, known=True, command="! @all->task.copy@{{value.tree=child}}")
    copy_task = type(
        "TaskCopy",
        (TreeNode,),
        {
            "__doc__": "Copy.",
            "__module__": __name__,
            "__annotations__": {"tree": task.model_fields["child"].annotation, "summary": str},
            "tree": Field(description="The tree."),
            "summary": Field(description="One line."),
        },
    )
    structure = RunStructure()
    structure.add(task)
    structure.add(copy_task)
    tree: object = {"text": "leaf"}
    for _ in range(depth - 1):
        tree = {"child": tree}

    (prompt,) = structure.prompts({task: {"child": tree}})

    assert prompt.step_id == "task.copy:summary"
    assert prompt.messages[1].content == (
        "# Copy\n\nCopy.\n\n## Summary\n\nOne line.\n\n# Context\n\n## Tree\n\n"
        f"{json.dumps(tree, indent=2)}\n\n# Output\n\nWrite Summary.\n"
    )
