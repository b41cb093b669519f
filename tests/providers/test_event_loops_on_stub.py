"""``arun()`` and ``run()`` on one structure, with langchain-openai's ``ChatOpenAI``.

Its async httpx client (langchain-openai's default, shared by every model on the same base
URL) keeps its pooled connections bound to the event loop that opened them. The server is
a stub of the chat completions endpoint on 127.0.0.1 (``stub_openai.py``).
"""

import asyncio

import pytest
from stub_openai import StubServer

from langtree import LLMProvider, RunResult, RunStructure, TreeNode

pytestmark = [pytest.mark.allow_hosts(["127.0.0.1"]), pytest.mark.allow_model_requests]


class TaskGreet(TreeNode):
    """Greet the person by name."""

    name: str
    greeting: str


INPUTS: dict[object, object] = {TaskGreet: {"name": "Ada"}}


def greeting(server: StubServer) -> RunStructure:
    structure = RunStructure(provider=LLMProvider({"default": server.chat_model()}))
    structure.add(TaskGreet)
    return structure


def greetings(*results: RunResult) -> list[str]:
    return [result[TaskGreet].greeting for result in results]


def test_arun_in_a_script_then_run(stub_openai_server: StubServer) -> None:
    structure = greeting(stub_openai_server)

    first = asyncio.run(structure.arun(INPUTS))  # closes its loop
    second = structure.run(INPUTS)

    assert greetings(first, second) == ["greeting ok", "greeting ok"]
    assert len(stub_openai_server.requests) == 2


def test_await_arun_in_a_notebook_then_run(stub_openai_server: StubServer) -> None:
    structure = greeting(stub_openai_server)

    async def run_in_a_cell() -> RunResult:
        return structure.run(INPUTS)  # blocks the kernel's loop while it runs

    kernel = asyncio.new_event_loop()  # a notebook's loop, open throughout
    try:
        first = kernel.run_until_complete(structure.arun(INPUTS))
        second = kernel.run_until_complete(run_in_a_cell())
        third = kernel.run_until_complete(structure.arun(INPUTS))
    finally:
        kernel.close()

    assert greetings(first, second, third) == ["greeting ok"] * 3


def test_arun_on_one_loop_after_another(stub_openai_server: StubServer) -> None:
    """As two ``asyncio.run(main())`` in one script do, or async tests that each get a
    loop of their own."""
    structure = greeting(stub_openai_server)

    results = [asyncio.run(structure.arun(INPUTS)) for _ in range(2)]

    assert greetings(*results) == ["greeting ok", "greeting ok"]
