"""The models of a set of `ModelConfig` by key, each built on its first use.

A provider holds one such set for its own models, and one more for each
``LLMProvider.override`` block in force (`langtree.runtime.calls._provider`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from langchain_core.runnables import Runnable

from langtree.errors import Diagnostic, StructureError
from langtree.runtime.calls._provider_strings import chat_model_from_string

if TYPE_CHECKING:
    from langtree.runtime.calls._provider import ModelConfig

__all__ = ["BuiltModels", "ChatRunnable"]

ChatRunnable: TypeAlias = Runnable[Any, Any]
"""A chat model, or a runnable that takes messages and returns the model's message."""


class BuiltModels:
    """Model configs by key, each model built once, on its first `get()` (thread-safe).

    Args:
        configs: How each key's model is called, the model unbuilt.
    """

    def __init__(self, configs: Mapping[str, ModelConfig]) -> None:
        self.configs = dict(configs)
        self._built: dict[str, ChatRunnable] = {}
        # Runs on several threads (LangTree's loop, LangChain's batch workers) may ask
        # for a model at once: a factory must still be called once.
        self._lock = threading.Lock()

    def get(self, key: str) -> ChatRunnable:
        """The model of ``key``, built now if it was not.

        Raises:
            StructureError: Its factory did not return a chat model or runnable. What a
                factory (or ``init_chat_model``) raises propagates unchanged, and it is
                called again on the next ``get``.
        """
        with self._lock:
            if key not in self._built:
                self._built[key] = _build(key, self.configs[key].model)
            return self._built[key]


def _build(key: str, source: ChatRunnable | Callable[[], ChatRunnable] | str) -> ChatRunnable:
    if isinstance(source, Runnable):
        return source
    if isinstance(source, str):
        return chat_model_from_string(source)
    model = source()
    if not isinstance(model, Runnable):
        raise StructureError(
            [
                Diagnostic(
                    severity="error",
                    message=f"The factory of model {key!r} returned {type(model).__name__!r}, "
                    "not a chat model",
                    hint="return a langchain_core BaseChatModel (e.g. ChatOpenAI(...)) or a "
                    "runnable around one from the factory",
                )
            ]
        )
    return model
