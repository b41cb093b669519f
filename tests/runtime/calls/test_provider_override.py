"""``LLMProvider.override``: a block in which runs take other models, with no structure or
provider rebuilt; it holds in the context that entered it, so overlapping runs keep their
own models."""

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pytest
from pydantic import Field

from langtree import RunStructure, StructureError, TreeNode
from langtree.runtime import LLMProvider, ModelConfig, RunEvent, RunFinished, RunResult
from langtree.testing import FakeChatModel, FakeRequest


class TaskTitle(TreeNode):
    """Write a title for the article."""

    article: str = Field(description="The article.")
    title: str = Field(description="At most eight words.")
    summary: str = Field(description="! llm('smart')\nOne sentence.")


INPUTS: dict[object, object] = {TaskTitle: {"article": "Cats sleep a lot."}}


def app(provider: LLMProvider) -> RunStructure:
    """The application's structure, built once."""
    structure = RunStructure(provider=provider)
    structure.add(TaskTitle)
    return structure


def named(name: str) -> FakeChatModel:
    return FakeChatModel(model_name=name)


def answered_by(result: RunResult) -> dict[str, str | None]:
    return {",".join(record.fields): record.answered_by for record in result.trace}


@pytest.fixture
def provider() -> LLMProvider:
    return LLMProvider({"default": named("real"), "smart": named("real smart")})


def test_a_run_in_the_block_takes_the_overriding_model(provider: LLMProvider) -> None:
    structure = app(provider)

    with provider.override(default=named("stand-in")):
        inside = structure.run(INPUTS)
    after = structure.run(INPUTS)

    assert answered_by(inside) == {"title": "stand-in", "summary": "real smart"}
    assert answered_by(after) == {"title": "real", "summary": "real smart"}


def test_one_model_stands_in_for_every_key(provider: LLMProvider) -> None:
    with provider.override(named("stand-in")):
        result = app(provider).run(INPUTS)

    assert answered_by(result) == {"title": "stand-in", "summary": "stand-in"}


def test_a_model_by_key_wins_over_the_model_for_every_key(provider: LLMProvider) -> None:
    with provider.override(named("stand-in"), smart=named("smart stand-in")):
        result = app(provider).run(INPUTS)

    assert answered_by(result) == {"title": "stand-in", "summary": "smart stand-in"}


def finished(events: list[RunEvent]) -> list[RunResult]:
    return [event.result for event in events if isinstance(event, RunFinished)]


async def arun(structure: RunStructure) -> list[RunResult]:
    return [await structure.arun(INPUTS)]


async def astream(structure: RunStructure) -> list[RunResult]:
    return finished([event async for event in structure.astream(INPUTS)])


async def arun_many(structure: RunStructure) -> list[RunResult]:
    return [row.result async for row in structure.arun_many([INPUTS, INPUTS]) if row.result]


async def ainvoke(structure: RunStructure) -> list[RunResult]:
    return [await structure.build().ainvoke(INPUTS)]


RUNS: dict[str, Callable[[RunStructure], list[RunResult]]] = {
    "run": lambda structure: [structure.run(INPUTS)],
    "stream": lambda structure: finished(list(structure.stream(INPUTS))),
    "run_many": lambda structure: [
        row.result for row in structure.run_many([INPUTS, INPUTS]) if row.result
    ],
    "invoke": lambda structure: [structure.build().invoke(INPUTS)],
    # LangChain runs a batch's inputs on threads of its own.
    "batch": lambda structure: structure.build().batch([INPUTS, INPUTS]),
}


async def abatch(structure: RunStructure) -> list[RunResult]:
    return await structure.build().abatch([INPUTS, INPUTS])


ASYNC_RUNS = {
    "arun": arun,
    "astream": astream,
    "arun_many": arun_many,
    "ainvoke": ainvoke,
    "abatch": abatch,
}


@pytest.mark.parametrize("run", RUNS.values(), ids=RUNS.keys())
def test_every_way_to_run_takes_the_block_s_models_within_it_only(
    provider: LLMProvider, run: Callable[[RunStructure], list[RunResult]]
) -> None:
    structure = app(provider)

    with provider.override(smart=named("smart stand-in")):
        inside = run(structure)
    after = run(structure)

    assert [answered_by(result)["summary"] for result in inside] == ["smart stand-in"] * len(inside)
    assert [answered_by(result)["summary"] for result in after] == ["real smart"] * len(after)
    assert len(inside) == len(after) >= 1


@pytest.mark.parametrize("run", ASYNC_RUNS.values(), ids=ASYNC_RUNS.keys())
def test_every_way_to_await_a_run_takes_the_block_s_models_within_it_only(
    provider: LLMProvider, run: Callable[[RunStructure], "asyncio.Future[list[RunResult]]"]
) -> None:
    structure = app(provider)

    async def main() -> tuple[list[RunResult], list[RunResult]]:
        with provider.override(smart=named("smart stand-in")):
            inside = await run(structure)
        return inside, await run(structure)

    inside, after = asyncio.run(main())

    assert [answered_by(result)["summary"] for result in inside] == ["smart stand-in"] * len(inside)
    assert [answered_by(result)["summary"] for result in after] == ["real smart"] * len(after)
    assert len(inside) == len(after) >= 1


def test_leaving_the_block_by_an_exception_puts_the_models_back(provider: LLMProvider) -> None:
    with provider.override(default=named("outer")):
        with pytest.raises(KeyError), provider.override(default=named("inner")):
            raise KeyError("the test failed")
        in_outer = provider.get().model_name  # type: ignore[attr-defined]

    assert (in_outer, provider.get().model_name) == ("outer", "real")  # type: ignore[attr-defined]


def test_blocks_nest(provider: LLMProvider) -> None:
    structure = app(provider)

    with provider.override(default=named("outer")):
        with provider.override(default=named("inner"), smart=named("inner smart")):
            inner = structure.run(INPUTS)
        outer = structure.run(INPUTS)
    after = structure.run(INPUTS)

    assert answered_by(inner) == {"title": "inner", "summary": "inner smart"}
    assert answered_by(outer) == {"title": "outer", "summary": "real smart"}
    assert answered_by(after) == {"title": "real", "summary": "real smart"}


@dataclass
class Factory:
    """Builds a model named ``name``, counting the models it built."""

    name: str
    built: list[FakeChatModel] = field(default_factory=list)

    def __call__(self) -> FakeChatModel:
        self.built.append(named(self.name))
        return self.built[-1]


def test_a_factory_in_the_block_is_built_on_first_use_once(provider: LLMProvider) -> None:
    factory = Factory("built")

    with provider.override(default=factory):
        unbuilt = list(factory.built)
        first, second = provider.get(), provider.get()

    assert unbuilt == []
    assert (first, second) == (factory.built[0], factory.built[0])
    assert len(factory.built) == 1


def test_an_outer_block_s_model_is_built_once_for_the_blocks_nested_in_it(
    provider: LLMProvider,
) -> None:
    factory = Factory("outer")

    with provider.override(default=factory):
        with provider.override(smart=named("inner smart")):
            inner = provider.get()
        outer = provider.get()

    assert (inner, outer) == (factory.built[0], factory.built[0])
    assert len(factory.built) == 1


def test_neither_the_structure_nor_the_provider_s_models_are_rebuilt() -> None:
    factory = Factory("real")
    provider = LLMProvider({"default": factory, "smart": named("real smart")})
    structure = app(provider)

    before = structure.run(INPUTS)
    with provider.override(named("stand-in")):
        inside = structure.run(INPUTS)
    after = structure.run(INPUTS)

    assert [answered_by(result)["title"] for result in (before, inside, after)] == [
        "real",
        "stand-in",
        "real",
    ]
    assert len(factory.built) == 1
    assert len(factory.built[0].calls) == 2


def test_a_model_alone_keeps_the_settings_of_the_key_it_replaces() -> None:
    provider = LLMProvider(
        {"default": ModelConfig(named("real"), method="json_mode"), "smart": named("smart")}
    )
    structure = app(provider)
    stand_in = named("stand-in")

    with provider.override(default=stand_in):
        structure.run(INPUTS)

    assert {request.method for request in stand_in.calls} == {"json_mode"}


def test_a_model_config_brings_its_own_settings() -> None:
    real = named("real")
    provider = LLMProvider(
        {"default": ModelConfig(real, method="json_mode"), "smart": named("smart")}
    )
    structure = app(provider)
    stand_in = named("stand-in")

    with provider.override(default=ModelConfig(stand_in, method="json_schema")):
        structure.run(INPUTS)
    structure.run(INPUTS)

    assert {request.method for request in stand_in.calls} == {"json_schema"}
    assert {request.method for request in real.calls} == {"json_mode"}


@dataclass
class Meeting:
    """Holds each call until ``expected`` calls have arrived, so that the runs whose
    calls meet here are all in flight at once (calls arrive on LangTree's loop)."""

    expected: int
    arrived: int = 0
    everyone: asyncio.Event = field(default_factory=asyncio.Event)

    async def reply(self, request: FakeRequest) -> dict[str, object]:
        self.arrived += 1
        if self.arrived == self.expected:
            self.everyone.set()
        await self.everyone.wait()
        return {"title": "A title"}


def meeting_models() -> tuple[FakeChatModel, FakeChatModel]:
    """A real model and its stand-in whose calls wait for each other's (two calls)."""
    meeting = Meeting(expected=2)
    return (
        FakeChatModel(responder=meeting.reply, model_name="real"),
        FakeChatModel(responder=meeting.reply, model_name="stand-in"),
    )


TITLE_ONLY: dict[object, object] = {TaskTitle: {"article": "Cats.", "summary": "Given."}}


def test_a_run_in_another_task_meanwhile_keeps_the_provider_s_models() -> None:
    real, stand_in = meeting_models()
    provider = LLMProvider({"default": real, "smart": real})
    structure = app(provider)

    async def overridden() -> RunResult:
        with provider.override(default=stand_in):
            return await structure.arun(TITLE_ONLY)

    async def main() -> list[RunResult]:
        return await asyncio.gather(overridden(), structure.arun(TITLE_ONLY))

    inside, outside = asyncio.run(main())

    assert (answered_by(inside), answered_by(outside)) == (
        {"title": "stand-in"},
        {"title": "real"},
    )


def test_a_run_another_thread_starts_meanwhile_keeps_the_provider_s_models() -> None:
    provider = LLMProvider({"default": named("real"), "smart": named("real smart")})
    structure = app(provider)
    # A thread of its own: it starts with no context variables set, and nothing copies
    # the caller's context into it (as asyncio.to_thread would).
    other_thread = ThreadPoolExecutor(max_workers=1)
    meanwhile: list[RunResult] = []

    async def run_another_on_first_call(request: FakeRequest) -> dict[str, object]:
        # Only the first: were the other run to call this model too, it must not wait.
        if len(stand_in.calls) == 1:
            loop = asyncio.get_running_loop()
            meanwhile.append(await loop.run_in_executor(other_thread, structure.run, TITLE_ONLY))
        return {"title": "A title"}

    stand_in = FakeChatModel(responder=run_another_on_first_call, model_name="stand-in")
    with other_thread, provider.override(default=stand_in):
        inside = structure.run(TITLE_ONLY)

    assert (answered_by(inside), [answered_by(result) for result in meanwhile]) == (
        {"title": "stand-in"},
        [{"title": "real"}],
    )


def test_a_key_the_provider_lacks_and_a_value_that_is_no_model_are_refused(
    provider: LLMProvider,
) -> None:
    with pytest.raises(StructureError) as caught:
        provider.override(smrat=named("stand-in"), default=4)  # type: ignore[arg-type]

    assert str(caught.value) == (
        "LangTree found 2 problems:\n\n"
        "error: Model 'smrat' is not in the provider\n"
        "  hint: did you mean 'smart'? the provider's models are 'default', 'smart'\n\n"
        "error: Model 'default' is a 'int', not a chat model or a factory\n"
        "  hint: pass a langchain_core BaseChatModel (or a runnable around one), a function "
        "without arguments that returns one, or a provider string (e.g. 'openai:gpt-4o-mini')"
    )


def test_a_model_for_every_key_that_is_no_model_is_refused(provider: LLMProvider) -> None:
    with pytest.raises(StructureError) as caught:
        provider.override("gpt-4o")

    assert str(caught.value) == (
        "LangTree found 1 problem:\n\n"
        "error: The model for every key: 'gpt-4o' is not a provider string (provider:model)\n"
        "  hint: name the provider, as LangChain's init_chat_model takes it (e.g. "
        "'openai:gpt-4o-mini'), or pass a chat model (e.g. ChatOpenAI(model='gpt-4o-mini'))"
    )


def test_a_wrong_setting_of_an_overriding_model_config_is_refused(
    provider: LLMProvider,
) -> None:
    with pytest.raises(StructureError) as caught:
        provider.override(smart=ModelConfig(named("stand-in"), call_timeout=0))

    assert str(caught.value) == (
        "LangTree found 1 problem:\n\n"
        "error: Model 'smart': call_timeout must be a number of seconds above 0 or None, "
        "got 0\n"
        "  hint: e.g. ModelConfig(model, call_timeout=60)"
    )
