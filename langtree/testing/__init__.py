"""Test LangTree runs offline: a fake chat model that understands structured output.

``FakeChatModel`` is a real LangChain ``BaseChatModel``: pass it through ``LLMProvider``
like any other model. Without a responder it answers every structured-output request with
values valid for the requested schema (``example_value``), the same every time; with one,
it returns whatever the responder gives, so a test can make a step fail on purpose. Every
call is kept in ``FakeChatModel.calls`` as a ``FakeRequest``.
"""

from langtree.testing.examples import example_value
from langtree.testing.fake_model import (
    FakeChatModel,
    FakeRequest,
    Latency,
    Responder,
    ResponderResult,
)

__all__ = [
    "FakeChatModel",
    "FakeRequest",
    "Latency",
    "Responder",
    "ResponderResult",
    "example_value",
]
