"""langchain-openai's ``ChatOpenAI`` on a real OpenAI-compatible server: llama.cpp's.

What the server does with SmolLM2-135M, pinned because LangTree's documentation states it:
``json_schema`` structured output is constrained to the schema, ``json_mode`` only to some
JSON object, and tool calling is not available, because SmolLM2's chat template has no
tools. A tree runs on it with LangTree's default method for ``ChatOpenAI``. The server is
the session's ``openai_compatible_server`` (see ``conftest.py``).
"""

import asyncio
import json
import urllib.request
from enum import Enum
from typing import Any, Literal

import httpx
import pytest
from openai_server import OpenAICompatibleServer
from pydantic import BaseModel, Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.prompts._template import LEAN_TEMPLATE

pytestmark = [pytest.mark.local_model, pytest.mark.allow_hosts(["127.0.0.1"])]

REVIEW = "Review: The kettle broke after two days. Give a verdict."


class Color(Enum):
    RED = "red"
    GREEN = "green"
    BLUE = "blue"


class Verdict(BaseModel):
    """A verdict on a product review."""

    color: Color = Field(description="Green to recommend, red to avoid, blue if unsure.")
    reason: str = Field(description="One short sentence.")


class TaskRateReview(TreeNode):
    """Read the customer's review and rate the product it describes."""

    review: str = Field(description="The review, as the customer wrote it.")
    verdict: Color = Field(description="Green to recommend, red to avoid, blue if unsure.")
    reason: str = Field(description="One short sentence.")


def structured(
    server: OpenAICompatibleServer, method: Literal["json_schema", "json_mode"]
) -> dict[str, Any]:
    model = server.chat_model(max_tokens=96)
    runnable = model.with_structured_output(Verdict, method=method, include_raw=True)
    result: dict[str, Any] = runnable.invoke(REVIEW)
    return result


def test_a_call_gets_text_back(openai_compatible_server: OpenAICompatibleServer) -> None:
    reply = openai_compatible_server.chat_model(max_tokens=16).invoke("Say hello")

    assert isinstance(reply.content, str)
    assert reply.content.strip()
    assert reply.usage_metadata is not None
    assert 0 < reply.usage_metadata["output_tokens"] <= 16


def test_json_schema_output_is_a_valid_instance(
    openai_compatible_server: OpenAICompatibleServer,
) -> None:
    """llama.cpp compiles the schema to a grammar, so the enum field holds one of its values."""
    result = structured(openai_compatible_server, "json_schema")

    assert result["parsing_error"] is None
    assert isinstance(result["parsed"], Verdict)
    assert isinstance(result["parsed"].color, Color)


def test_json_mode_constrains_to_a_json_object_not_to_the_schema(
    openai_compatible_server: OpenAICompatibleServer,
) -> None:
    """``response_format={"type": "json_object"}``: the reply is JSON, any object.

    The review that ``json_schema`` turns into a verdict gets ``{}``: the schema is not in
    the request nor its keys in the prompt, so SmolLM2 closes the object at once.
    """
    result = structured(openai_compatible_server, "json_mode")

    assert json.loads(result["raw"].content) == {}
    assert result["parsed"] is None
    assert result["parsing_error"] is not None


def test_smollm2_chat_template_has_no_tools(
    openai_compatible_server: OpenAICompatibleServer,
) -> None:
    root = openai_compatible_server.base_url.removesuffix("/v1")

    with urllib.request.urlopen(f"{root}/props", timeout=10) as response:
        capabilities = json.load(response)["chat_template_caps"]

    assert capabilities["supports_tools"] is False
    assert capabilities["supports_tool_calls"] is False


def test_a_required_tool_call_gets_prose(
    openai_compatible_server: OpenAICompatibleServer,
) -> None:
    """llama.cpp accepts the tools and ``tool_choice``, then ignores them: no tool calls."""
    model = openai_compatible_server.chat_model(max_tokens=32)

    reply = model.bind_tools([Verdict], tool_choice="required").invoke(REVIEW)

    assert reply.tool_calls == []
    assert reply.invalid_tool_calls == []
    assert isinstance(reply.content, str)
    assert reply.content.strip()


@pytest.mark.xfail(
    raises=RuntimeError,
    strict=True,
    reason=(
        "httpx pools each connection on the event loop that opened it: a second asyncio.run "
        "reuses it and fails with 'Event loop is closed'. ChatOpenAI's default async client "
        "is cached per base URL and timeout, so this holds across instances too."
    ),
)
def test_two_asyncio_runs_in_a_row(openai_compatible_server: OpenAICompatibleServer) -> None:
    """One ``ChatOpenAI``, called by ``ainvoke`` in two event loops one after the other.

    The model gets an async client of its own, so the connection left on the closed loop
    does not reach other tests through langchain-openai's shared default client.
    """
    model = openai_compatible_server.chat_model(max_tokens=8, http_async_client=httpx.AsyncClient())

    asyncio.run(model.ainvoke("Say hi"))
    asyncio.run(model.ainvoke("Say hi"))


def test_a_tree_runs_twice_on_chat_openai(
    openai_compatible_server: OpenAICompatibleServer,
) -> None:
    """LangTree's default method for ``ChatOpenAI`` is ``json_schema``, which works here.

    Synchronous runs share one event loop that LangTree keeps, so the second run reuses
    the pooled connections of the first, which two ``asyncio.run`` calls cannot.
    """
    model = openai_compatible_server.chat_model(max_tokens=128)
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskRateReview)
    review = {"review": "The kettle broke after two days."}

    results = [structure.run({TaskRateReview: review}) for _ in range(2)]

    assert all(isinstance(result[TaskRateReview].verdict, Color) for result in results)
    assert [record.error for result in results for record in result.trace] == [None] * 4


def test_run_then_arun_in_a_notebook_on_chat_openai(
    openai_compatible_server: OpenAICompatibleServer,
) -> None:
    """A notebook cell's ``run()`` (blocking inside the kernel's loop), then ``await
    arun()``: both go through LangTree's loop, where the pooled connections live."""
    model = openai_compatible_server.chat_model(max_tokens=128)
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskRateReview)
    review = {TaskRateReview: {"review": "The kettle broke after two days."}}

    async def cell() -> list[Any]:
        first = structure.run(review)
        second = await structure.arun(review)
        return [first, second]

    results = asyncio.run(cell())

    assert [record.error for result in results for record in result.trace] == [None] * 4


class Review(TreeNode):
    """
    ! together
    Rate the product this review describes.
    """

    text: str = Field(description="The review, as the customer wrote it.")
    verdict: Color = Field(description="Green to recommend, red to avoid, blue if unsure.")
    reason: str = Field(description="One short sentence.")


class TaskRateReviews(TreeNode):
    """You help a shop decide which products to keep."""

    reviews: list[Review] = Field(description="The reviews of this week.")


def test_lean_prompts_run_on_chat_openai(
    openai_compatible_server: OpenAICompatibleServer,
) -> None:
    """The lean settings leave the fields to the schema that ``json_schema`` sends: the
    server constrains the answers to it, and each review gets a valid one (an answer cut
    off at the output limit is asked again, as in any run)."""
    model = openai_compatible_server.chat_model(max_tokens=256)
    lean = {"outline": "root", "field_descriptions": "schema", "prompt_template": LEAN_TEMPLATE}
    structure = RunStructure(lean, provider=LLMProvider({"default": model}))
    structure.add(TaskRateReviews)
    texts = ["The kettle broke after two days.", "Best toaster I ever owned."]

    result = structure.run({TaskRateReviews: {"reviews": [{"text": t} for t in texts]}})

    assert all(isinstance(review.verdict, Color) for review in result[TaskRateReviews].reviews)
    answered = [record for record in result.trace if record.error is None]
    assert len(answered) == 2
    assert {record.messages[0].text for record in answered} == {
        "# Rate Reviews\n\nYou help a shop decide which products to keep.\n\n"
        "## Review\n\nRate the product this review describes."
    }
    assert sorted(record.messages[1].text for record in answered) == [
        f"# Context\n\n## Text\n\n{text}\n" for text in sorted(texts)
    ]
