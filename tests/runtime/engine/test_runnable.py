"""``RunStructure.build()``: the whole run as a LangChain runnable."""

import asyncio
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler

from langtree import LLMProvider, RunStructure, StructureError, TreeNode
from langtree.errors import ExecutionError
from langtree.runtime.observe._progress import RunProgress
from langtree.testing import FakeChatModel
from tests.runtime.fake_structures import structure_for


class TaskGreet(TreeNode):
    """Greet the person, then say goodbye."""

    name: str
    greeting: str
    farewell: str


class Recorder(BaseCallbackHandler):
    """Every chain run's name, id and parent."""

    def __init__(self) -> None:
        self.runs: list[tuple[str | None, UUID, UUID | None]] = []

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self.runs.append((kwargs.get("name"), run_id, parent_run_id))


def structure(model: FakeChatModel | None = None) -> RunStructure:
    return structure_for(TaskGreet, model=model or FakeChatModel())


def test_invoke_takes_the_inputs_mapping_and_returns_the_run_result() -> None:
    result = structure().build().invoke({TaskGreet: {"name": "Ada"}})

    task = result[TaskGreet]
    assert task.name == "Ada"
    assert task.greeting
    assert task.farewell
    assert len(result.trace) == 2


def test_ainvoke_accepts_tags_too() -> None:
    result = asyncio.run(structure().build().ainvoke({"task.greet": {"name": "Ada"}}))

    assert result[TaskGreet].name == "Ada"


def test_batch_and_abatch_run_each_input() -> None:
    runnable = structure().build()
    inputs = [{TaskGreet: {"name": name}} for name in ("Ada", "Bo", "Cy")]

    results = runnable.batch(inputs, config={"max_concurrency": 2})
    async_results = asyncio.run(runnable.abatch(inputs, config={"max_concurrency": 2}))

    assert [r[TaskGreet].name for r in results] == ["Ada", "Bo", "Cy"]
    assert [r[TaskGreet].name for r in async_results] == ["Ada", "Bo", "Cy"]


def test_variables_are_bound_when_building() -> None:
    class TaskHello(TreeNode):
        """Say hello in {language}."""

        greeting: str

    built = RunStructure(provider=LLMProvider({"default": FakeChatModel()}))
    built.add(TaskHello)
    model = built.provider.get()  # type: ignore[union-attr]
    assert isinstance(model, FakeChatModel)

    built.build({"language": "Welsh"}).invoke(None)

    assert "Welsh" in model.calls[0].text


@pytest.mark.parametrize("invoke_async", [False, True])
def test_step_calls_are_named_child_runs_of_the_built_run(invoke_async: bool) -> None:
    recorder = Recorder()
    runnable = structure().build(name="greeting run")
    config: Any = {"callbacks": [recorder]}
    inputs = {TaskGreet: {"name": "Ada"}}

    if invoke_async:
        asyncio.run(runnable.ainvoke(inputs, config=config))
    else:
        runnable.invoke(inputs, config=config)

    root = [run for run in recorder.runs if run[2] is None]
    assert [run[0] for run in root] == ["greeting run"]
    children = sorted(name or "" for name, _, parent in recorder.runs if parent == root[0][1])
    assert children == ["task.greet: farewell", "task.greet: greeting"]


def test_invoke_inside_a_running_loop_keeps_the_parent() -> None:
    recorder = Recorder()
    runnable = structure().build()

    async def in_loop() -> None:
        runnable.invoke({TaskGreet: {"name": "Ada"}}, config={"callbacks": [recorder]})

    asyncio.run(in_loop())

    root = next(run_id for _, run_id, parent in recorder.runs if parent is None)
    assert sum(parent == root for _, _, parent in recorder.runs) == 2


def test_progress_counts_finished_and_failed_calls() -> None:
    def responder(request: Any) -> dict[str, object] | str:
        return "no tool call" if request.fields == ("farewell",) else {"greeting": "hi"}

    seen: list[tuple[int, int, int]] = []
    progress = RunProgress(2, on_change=lambda *counts: seen.append(counts))
    runnable = RunStructure(provider=LLMProvider({"default": FakeChatModel(responder=responder)}))
    runnable.add(TaskGreet)

    with pytest.raises(ExecutionError):
        runnable.build(max_retries=1).invoke(
            {TaskGreet: {"name": "Ada"}}, config={"callbacks": [progress]}
        )

    assert (progress.done, progress.failed) == (3, 2)
    assert seen[-1] == (3, 3, 2)


def test_a_non_mapping_input_is_the_error_run_gives() -> None:
    with pytest.raises(StructureError) as from_invoke:
        structure().build().invoke("Ada")
    with pytest.raises(StructureError) as from_run:
        structure().run("Ada")  # type: ignore[arg-type]

    assert from_invoke.value.diagnostics == from_run.value.diagnostics
    assert "Inputs must be a dict of task classes (or tags) to values, not 'str'" in str(
        from_invoke.value
    )


def test_progress_counts_answers_replayed_from_the_journal_apart(tmp_path: Any) -> None:
    journal = tmp_path / "greet.sqlite"
    structure = RunStructure(provider=LLMProvider({"default": FakeChatModel()}))
    structure.add(TaskGreet)
    inputs = {TaskGreet: {"name": "Ada"}}
    first = RunProgress(2)
    structure.build(journal=journal).invoke(inputs, config={"callbacks": [first]})
    seen: list[tuple[int, int, int]] = []
    second = RunProgress(2, on_change=lambda *counts: seen.append(counts))

    structure.build(journal=journal).invoke(inputs, config={"callbacks": [second]})

    assert (first.done, first.replayed) == (2, 0)
    assert (second.done, second.replayed, second.failed) == (2, 2, 0)
    assert seen == [(1, 2, 0), (2, 2, 0)]


class ChatRecorder(Recorder):
    """Chain runs as ``Recorder``, and each chat model run's parent and tags."""

    def __init__(self) -> None:
        super().__init__()
        self.chats: list[tuple[UUID | None, list[str]]] = []

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        self.chats.append((parent_run_id, sorted(tags or [])))


@pytest.mark.parametrize("run_async", [False, True])
def test_run_with_a_config_is_one_traced_run(run_async: bool) -> None:
    recorder = ChatRecorder()
    config: Any = {"callbacks": [recorder], "tags": ["nightly"], "run_name": "greetings"}
    inputs = {TaskGreet: {"name": "Ada"}}

    if run_async:
        result = asyncio.run(structure().arun(inputs, config=config))
    else:
        result = structure().run(inputs, config=config)

    assert result[TaskGreet].name == "Ada"
    [(name, root, _)] = [run for run in recorder.runs if run[2] is None]
    assert name == "greetings"
    steps = {run_id: step for step, run_id, parent in recorder.runs if parent == root}
    assert sorted(steps.values()) == ["task.greet: farewell", "task.greet: greeting"]
    # Each model call sits below its step's run and carries the run's tags.
    assert [parent in steps for parent, _ in recorder.chats] == [True, True]
    assert all("nightly" in tags for _, tags in recorder.chats)


def test_a_config_that_is_no_mapping_is_refused() -> None:
    with pytest.raises(ExecutionError) as caught:
        structure().run({TaskGreet: {"name": "Ada"}}, config=["callbacks"])  # type: ignore[arg-type]
    assert str(caught.value) == (
        "config must be a LangChain RunnableConfig (a dict), not 'list'\n"
        "  hint: e.g. config={'callbacks': [handler], 'tags': ['nightly'], 'run_name': 'report'}"
    )
