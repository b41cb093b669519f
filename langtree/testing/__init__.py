"""Test LangTree runs offline: a fake chat model that understands structured output.

``FakeChatModel`` is a real LangChain ``BaseChatModel``: pass it through ``LLMProvider``
like any other model. Without a responder it answers every structured-output request with
values valid for the requested schema (``example_value``), the same every time; with one,
it returns whatever the responder gives, so a test can make a step fail on purpose. Every
call is kept in ``FakeChatModel.calls`` as a ``FakeRequest``.

``block_model_requests()`` makes a run on a model not known to be offline fail before any
call (``allow_model_requests()`` lifts it, ``offline_model`` marks a fake class of your
own), and ``prompt_text`` renders prompts as stable text for snapshots. LangTree's pytest
plugin (``langtree.testing.pytest_plugin``) blocks requests in every test of a suite that
switches it on (``langtree_block_model_requests = true``) and offers the
fixtures ``fake_model``, ``fake_provider`` and ``prompt_snapshot``.
"""

from langtree.testing._examples import example_value
from langtree.testing._fake_model import (
    FakeChatModel,
    FakeRequest,
    Latency,
    Responder,
    ResponderResult,
)
from langtree.testing._model_requests import (
    allow_model_requests,
    block_model_requests,
    offline_model,
)
from langtree.testing._snapshots import prompt_text

__all__ = [
    "FakeChatModel",
    "FakeRequest",
    "Latency",
    "Responder",
    "ResponderResult",
    "allow_model_requests",
    "block_model_requests",
    "example_value",
    "offline_model",
    "prompt_text",
]
