"""``LLMProvider``: the chat models a run may use, by key, the first being the default."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from langchain_core.language_models import BaseChatModel

from langtree.dsl.hints import suggest
from langtree.errors import Diagnostic, StructureError

__all__ = ["LLMProvider", "ModelSource"]

ModelSource = BaseChatModel | Callable[[], BaseChatModel]
"""A chat model, or a function without arguments that builds one when first needed."""


class LLMProvider:
    """The chat models that ``llm(key)`` may name; the first key is the default.

    A factory is called once, on the first :meth:`get` of its key, so a model whose
    client needs an API key is only built when a run uses it.

    Args:
        models: Keys to chat models or factories, in order (the first is the default).

    Raises:
        StructureError: ``models`` is empty, or a key is not a string, or a value is
            neither a chat model nor a callable (every such key is reported).

    >>> from langtree.testing import FakeChatModel
    >>> provider = LLMProvider({"fast": FakeChatModel(), "smart": lambda: FakeChatModel()})
    >>> provider.list_models(), provider.default
    (['fast', 'smart'], 'fast')
    >>> provider
    LLMProvider(models=['fast', 'smart'], default='fast')
    """

    def __init__(self, models: Mapping[str, ModelSource]) -> None:
        problems = _problems(models)
        if problems:
            raise StructureError(problems)
        self._sources = dict(models)
        self._built: dict[str, BaseChatModel] = {}
        self._lock = threading.Lock()

    @property
    def default(self) -> str:
        """The key of the default model (the first one given)."""
        return next(iter(self._sources))

    def list_models(self) -> list[str]:
        """The model keys, the default first."""
        return list(self._sources)

    def get(self, name: str | None = None) -> BaseChatModel:
        """The chat model for a key, building it on first use when a factory was given.

        Args:
            name: The model key (``None``: the default).

        Returns:
            The chat model; the same instance on every call for the same key.

        Raises:
            StructureError: No model has that key, or its factory did not return a chat
                model. What a factory raises propagates unchanged (and it is called again
                on the next ``get``).
        """
        key = self.default if name is None else name
        if key not in self._sources:
            raise StructureError([self._unknown(key)])
        with self._lock:
            if key not in self._built:
                self._built[key] = self._build(key)
            return self._built[key]

    def __repr__(self) -> str:
        return f"LLMProvider(models={self.list_models()!r}, default={self.default!r})"

    def _build(self, key: str) -> BaseChatModel:
        source = self._sources[key]
        if isinstance(source, BaseChatModel):
            return source
        model = source()
        if not isinstance(model, BaseChatModel):
            raise StructureError(
                [
                    _error(
                        f"The factory of model {key!r} returned {type(model).__name__!r}, "
                        "not a chat model",
                        "return a langchain_core BaseChatModel (e.g. ChatOpenAI(...)) "
                        "from the factory",
                    )
                ]
            )
        return model

    def _unknown(self, key: str) -> Diagnostic:
        available = ", ".join(repr(name) for name in self._sources)
        close = suggest(key, list(self._sources), fallback="")
        return _error(
            f"Model {key!r} is not in the provider",
            f"{close + ' ' if close else ''}the provider's models are {available}",
        )


def _problems(models: Mapping[str, object]) -> list[Diagnostic]:
    """Keys that are not strings, values that cannot become a chat model, or no models."""
    if not models:
        return [
            _error(
                "LLMProvider needs at least one model",
                "pass the models by key, e.g. LLMProvider({'default': ChatOpenAI(...)})",
            )
        ]
    return [
        *(
            _error(f"Model key {key!r} is not a string", "name each model with a string")
            for key in models
            if not isinstance(key, str)
        ),
        *(
            _error(
                f"Model {key!r} is a {type(value).__name__!r}, not a chat model or a factory",
                "pass a langchain_core BaseChatModel, or a function without arguments "
                "that returns one",
            )
            for key, value in models.items()
            if not isinstance(value, BaseChatModel) and not callable(value)
        ),
    ]


def _error(message: str, hint: str) -> Diagnostic:
    return Diagnostic(severity="error", message=message, hint=hint)
