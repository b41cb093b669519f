"""Block real model requests, so that a test that forgot its fake fails instead of paying.

While requests are blocked (inside `block_model_requests()`, and in every test under
LangTree's pytest plugin), a run whose provider hands it a model that is not known to be
offline fails before its first call, with an ``ExecutionError`` naming the model's key
and class. Known to be offline: `FakeChatModel` and its
subclasses, ``langchain_core``'s fake chat models (``GenericFakeChatModel``, ...), and the
classes marked with `offline_model()`.

Every model inside a runnable counts: the one under ``bind``/``with_retry``/``with_config``,
each model of ``with_fallbacks`` (a fallback is called when the first model fails), the
default and each alternative of ``configurable_fields``/``configurable_alternatives``. A
runnable LangTree cannot look into (a ``RunnableLambda``, a ``Runnable`` of your own) is
not known to be offline either.

pydantic-ai's ``ALLOW_MODEL_REQUESTS`` is checked by each real model as it makes a
request; LangChain's models cannot be taught that, so the check is made where a run takes
its models from the provider (`langtree.runtime.calls._provider.model_check()`). Validation
and ``prompts()`` take no model and are never blocked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from langchain_core.language_models import fake_chat_models
from langchain_core.runnables import RunnableWithFallbacks
from langchain_core.runnables.base import RunnableBindingBase
from langchain_core.runnables.configurable import (
    DynamicRunnable,
    RunnableConfigurableAlternatives,
)

from langtree.errors import ExecutionError
from langtree.runtime import ChatRunnable, model_check
from langtree.testing._fake_model import FakeChatModel

__all__ = ["RealModelCheck", "allow_model_requests", "block_model_requests", "offline_model"]

_Class = TypeVar("_Class", bound=type)

_offline: set[type] = {
    FakeChatModel,
    fake_chat_models.FakeChatModel,
    fake_chat_models.FakeListChatModel,
    fake_chat_models.FakeMessagesListChatModel,
    fake_chat_models.GenericFakeChatModel,
    fake_chat_models.ParrotFakeChatModel,
}
"""The classes whose instances (and their subclasses' instances) answer offline."""


def offline_model(model_class: _Class) -> _Class:
    """Mark a chat model class of your own as offline: blocking never stops it.

    Use it as a class decorator on a test double that answers without a network; its
    subclasses are offline too.

    Args:
        model_class: The class.

    Returns:
        The class itself.

    Raises:
        ExecutionError: ``model_class`` is not a class.

    Examples:
        >>> from langchain_core.language_models import BaseChatModel
        >>> @offline_model
        ... class CannedModel(BaseChatModel): ...
        >>> CannedModel.__name__
        'CannedModel'
    """
    if not isinstance(model_class, type):
        raise ExecutionError(
            f"offline_model takes a class, got a {type(model_class).__name__!r} instance\n"
            "  hint: decorate the class: @offline_model above 'class MyFake(BaseChatModel):'"
        )
    _offline.add(model_class)
    return model_class


@dataclass(frozen=True, slots=True)
class RealModelCheck:
    """Refuse a model that holds any model not known to be offline (a ``ModelCheck``).

    Attributes:
        blocked_by: What blocks requests, for the message (``"this test blocks model
            requests"``).
        allow: How to allow them, for the hint.
    """

    blocked_by: str
    allow: str

    def __call__(self, key: str, model: ChatRunnable) -> None:
        """Raise when ``model`` holds a model not known to be offline.

        Raises:
            ExecutionError: Naming the key and the classes of those models.
        """
        offline = tuple(_offline)
        online = [
            type(part).__name__ for part in _models_in(model) if not isinstance(part, offline)
        ]
        if online:
            classes = ", ".join(repr(name) for name in dict.fromkeys(online))
            raise ExecutionError(
                f"Model {key!r} ({classes}) may make real requests, and {self.blocked_by}\n"
                f"  hint: inject a FakeChatModel (LLMProvider({{{key!r}: FakeChatModel()}})), "
                "mark a fake class of your own with @langtree.testing.offline_model, "
                f"or {self.allow}"
            )


@contextmanager
def block_model_requests() -> Iterator[None]:
    """Within the block, a run on a model not known to be offline fails before any call.

    Examples:
        >>> from langchain_core.runnables import RunnableLambda
        >>> from langtree import LLMProvider
        >>> provider = LLMProvider({"default": RunnableLambda(lambda messages: "Hi")})
        >>> with block_model_requests():
        ...     provider.get()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langtree.errors.ExecutionError: Model 'default' ('RunnableLambda') may make real requests...
    """
    check = RealModelCheck(
        blocked_by="model requests are blocked (block_model_requests())",
        allow="allow them around the run: with allow_model_requests(): ...",
    )
    with model_check(check):
        yield


@contextmanager
def allow_model_requests() -> Iterator[None]:
    """Within the block, runs may use any model, also inside a blocked test."""
    with model_check(None):
        yield


def _models_in(runnable: object) -> Iterator[object]:
    """The models a runnable may call: itself, or each one its wrappers hold (an
    alternative given as a factory is not built: it stays a model LangTree cannot see)."""
    if isinstance(runnable, RunnableBindingBase):
        yield from _models_in(runnable.bound)
    elif isinstance(runnable, RunnableWithFallbacks):
        for model in (runnable.runnable, *runnable.fallbacks):
            yield from _models_in(model)
    elif isinstance(runnable, RunnableConfigurableAlternatives):
        for choice in (runnable.default, *runnable.alternatives.values()):
            yield from _models_in(choice)
    elif isinstance(runnable, DynamicRunnable):
        yield from _models_in(runnable.default)
    else:
        yield runnable
