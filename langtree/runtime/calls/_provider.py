"""``LLMProvider``: the chat models a run may use, by key, the first being the default.

A model is any LangChain chat model, any runnable around one (``with_retry``,
``with_fallbacks``, ``configurable_fields``/``configurable_alternatives``, ``bind``, or a
user's own ``Runnable``), a function that builds one when first needed, or a provider
string (``"openai:gpt-4o-mini"``) that LangChain's ``init_chat_model`` builds when first
needed (``langtree.runtime.calls._provider_strings``). Wrapped in a
`ModelConfig`, it also says how LangTree calls it: the structured-output method,
the call timeout and the retry policy for that model alone. A provider may keep a response
cache for its models (``cache=``, see ``langtree.runtime.durable._cache``).

`LLMProvider.override()` swaps models for the duration of a block, where it was entered
(a context variable): a test's fakes in the application's own structures.

Every model a provider hands out (`LLMProvider.get()`, which a run calls for each
step's model before its first call) first passes the `model_check()` in place, if
any: ``langtree.testing.block_model_requests`` uses it to stop a test's run on a real
model before any request is made.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import KW_ONLY, dataclass, replace
from typing import TypeAlias

from langchain_core.runnables import Runnable

from langtree.dsl import suggest
from langtree.errors import Diagnostic, StructureError
from langtree.runtime.calls._built_models import BuiltModels, ChatRunnable
from langtree.runtime.calls._methods import METHOD_CHOICES, MethodChoice
from langtree.runtime.calls._provider_strings import provider_string_problems
from langtree.runtime.durable._cache import CacheSetting, ResponseCache, as_cache, cache_problems
from langtree.runtime.faults._retry import RetryPolicy

__all__ = ["ChatRunnable", "LLMProvider", "ModelCheck", "ModelConfig", "ModelSource", "model_check"]


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """A model and how LangTree calls it.

    Attributes:
        model: The chat model (or runnable around one), a function that builds it, or
            a provider string (``"openai:gpt-4o-mini"``) that ``init_chat_model`` builds.
        method: How structured output is asked for: ``"function_calling"`` (the schema
            as a tool the model must call), ``"json_schema"`` (the provider's native
            structured output), ``"json_mode"`` (the schema in the prompt, JSON mode
            where the model has it), or ``"auto"`` (the model's own default; see
            ``langtree.runtime.calls._methods``).
        call_timeout: Seconds one call to this model may take (``None``: the run's).
        retry: How this model's transient failures are retried (``None``: the run's).
        cache: Whether the provider's response cache serves this model (``False``:
            every run asks it anew).

    Examples:
        >>> from langtree.testing import FakeChatModel
        >>> ModelConfig(FakeChatModel(), method="json_schema", call_timeout=30).method
        'json_schema'
    """

    model: ChatRunnable | Callable[[], ChatRunnable] | str
    _: KW_ONLY
    method: MethodChoice = "auto"
    call_timeout: float | None = None
    retry: RetryPolicy | None = None
    cache: bool = True


ModelSource: TypeAlias = ChatRunnable | Callable[[], ChatRunnable] | str | ModelConfig
"""A chat model or runnable, a function without arguments that builds one when first
needed, a provider string (``"openai:gpt-4o-mini"``, built by LangChain's
``init_chat_model`` when first needed), or a `ModelConfig` holding one of them."""

ModelCheck: TypeAlias = Callable[[str, ChatRunnable], None]
"""Called with a model's key and the model each time a provider hands it out; it raises
to stop the run before any call."""

# One check for the whole process, not a context variable: a run may take its models on
# LangTree's loop thread or on a thread of the caller's own, and each must see it.
_model_check: ModelCheck | None = None


@contextmanager
def model_check(check: ModelCheck | None) -> Iterator[None]:
    """Within the block, every model a provider hands out passes ``check`` first.

    Blocks nest: the check in place before is back when the block ends.

    Args:
        check: The check (``None``: none, within the block).

    Examples:
        >>> def refuse(key, model):
        ...     raise RuntimeError(f"not {key!r}")
        >>> from langtree.testing import FakeChatModel
        >>> provider = LLMProvider({"fast": FakeChatModel()})
        >>> with model_check(refuse):
        ...     provider.get()
        Traceback (most recent call last):
        RuntimeError: not 'fast'
        >>> provider.get().model_name
        'langtree-fake'
    """
    global _model_check
    previous, _model_check = _model_check, check
    try:
        yield
    finally:
        _model_check = previous


@dataclass(frozen=True, slots=True, kw_only=True)
class _Override:
    """The models of one `LLMProvider.override()` block, for the keys it overrides."""

    provider: LLMProvider
    models: BuiltModels


# The override() blocks in force, innermost last. A context variable, so that a block holds
# where it was entered: a run started there sees it (on LangTree's loop too, whose tasks
# take a copy of the caller's context), and a run another task or thread starts meanwhile
# does not. One variable for every provider, at module level, as the contextvars
# documentation asks (a context holds its variables strongly).
_overrides: ContextVar[tuple[_Override, ...]] = ContextVar("langtree_model_overrides", default=())


class LLMProvider:
    """The chat models that ``llm(key)`` may name; the first key is the default.

    A factory is called once, on the first `get()` of its key, so a model whose
    client needs an API key is only built when a run uses it. A provider string
    (``"openai:gpt-4o-mini"``: ``provider:model``, as LangChain's ``init_chat_model``
    takes it) is built the same way, by ``init_chat_model``; it needs the ``langchain``
    package and the provider's (``langchain-openai``), checked here.

    Args:
        models: Keys to chat models, runnables, factories, provider strings or
            `ModelConfig`, in order (the first is the default).
        cache: A response cache every run through the provider reads from and adds to
            (a ``ResponseCache`` or the path of its file; ``None``: no cache).

    Raises:
        StructureError: ``models`` is not a mapping or is empty, or a key is not a
            string, or a value is none of those, or a string is not ``provider:model``
            with a provider ``init_chat_model`` knows, or the packages it needs are not
            installed, or a ``ModelConfig`` setting is wrong (every such key is
            reported), or ``cache`` is not a cache.

    Examples:
        >>> from langtree.testing import FakeChatModel
        >>> provider = LLMProvider({"fast": FakeChatModel(), "smart": lambda: FakeChatModel()})
        >>> provider.list_models(), provider.default
        (['fast', 'smart'], 'fast')
        >>> provider
        LLMProvider(models=['fast', 'smart'], default='fast')
    """

    def __init__(
        self, models: Mapping[str, ModelSource], *, cache: CacheSetting | None = None
    ) -> None:
        problems = _problems(models)
        if cache is not None:
            problems.extend(
                _error(problem, "e.g. LLMProvider(models, cache='answers.sqlite')")
                for problem in cache_problems(cache)
            )
        if problems:
            raise StructureError(problems)
        self.cache: ResponseCache | None = None if cache is None else as_cache(cache)
        """The response cache of the provider's models (``None``: none)."""
        self._models = BuiltModels({key: _as_config(value) for key, value in models.items()})

    @property
    def default(self) -> str:
        """The key of the default model (the first one given)."""
        # The first key given (dicts keep their order): DESIGN §3, "the first model is the
        # default".
        return next(iter(self._models.configs))

    def list_models(self) -> list[str]:
        """The model keys, the default first."""
        return list(self._models.configs)

    def config(self, name: str | None = None) -> ModelConfig:
        """How the model of a key is called (its ``ModelConfig``, the model unbuilt), in
        the `override()` block in force if it overrides the key.

        Raises:
            StructureError: The key is not a string, or no model has it.
        """
        key = self._key(name)
        return self._models_of(key).configs[key]

    def get(self, name: str | None = None) -> ChatRunnable:
        """The model for a key, building it on first use when a factory was given.

        Args:
            name: The model key (``None``: the default).

        Returns:
            The model; the same instance on every call for the same key (within an
            `override()` block that overrides the key, the block's model).

        Raises:
            StructureError: The key is not a string, or no model has it, or its factory
                did not return a chat model or runnable. What a factory raises propagates
                unchanged (and it is called again on the next ``get``).

        What the `model_check()` in place raises propagates too (a built model stays
        built, and is checked again on each ``get``).
        """
        key = self._key(name)
        model = self._models_of(key).get(key)
        # Checked on every ``get``, built before or not: a check put in place after the
        # model was built still stops a run that takes it.
        if _model_check is not None:
            _model_check(key, model)
        return model

    def override(
        self, model: ModelSource | None = None, /, **models: ModelSource
    ) -> AbstractContextManager[None]:
        """Within the block, runs take these models instead of the provider's, without
        rebuilding the provider or any structure that uses it (as pydantic-ai's
        ``Agent.override``): a test's fakes in the application's own structures.

        ``model`` stands in for every key, ``models`` for the keys they name (and win
        over ``model``). A model alone keeps the settings of the key it replaces
        (``method``, ``call_timeout``, ``retry``, ``cache``); a `ModelConfig` brings its
        own. A factory or a provider string is built on first use within the block.

        The override holds in the context that enters the block, as a context variable
        does: a run started there (``run()``, ``arun()``, streams, datasets, a built
        runnable) takes the block's models, and a run that another task or thread starts
        meanwhile keeps the provider's. A stream or a dataset takes the models in force
        as its run, or each row, starts. Blocks nest; leaving one, by an exception too,
        puts back the models that were in force before it.

        Args:
            model: The model for every key (``None``: none).
            **models: Models by key, as ``LLMProvider`` takes them.

        Returns:
            A context manager; the models change when the block is entered.

        Raises:
            StructureError: Raised here: a key the provider lacks, a value that is not
                a model, or a wrong `ModelConfig` setting (every problem is reported).

        Examples:
            >>> from langtree.testing import FakeChatModel
            >>> provider = LLMProvider({"fast": FakeChatModel(model_name="real")})
            >>> with provider.override(fast=FakeChatModel(model_name="stand-in")):
            ...     provider.get("fast").model_name
            'stand-in'
            >>> provider.get("fast").model_name
            'real'
        """
        problems = self._override_problems(model, models)
        if problems:
            raise StructureError(problems)
        every = dict.fromkeys(self._models.configs, model) if model is not None else {}
        # The models named by key come last, so they win over the one for every key.
        given = {**every, **models}
        return self._overriding({key: self._replacing(key, value) for key, value in given.items()})

    def _override_problems(
        self, model: ModelSource | None, models: Mapping[str, ModelSource]
    ) -> list[Diagnostic]:
        problems = [self._unknown(key) for key in models if key not in self._models.configs]
        if model is not None:
            problems.extend(_value_problems("The model for every key", model))
        for key, value in models.items():
            problems.extend(_value_problems(f"Model {key!r}", value))
        return problems

    def _replacing(self, key: str, value: ModelSource) -> ModelConfig:
        """``value`` as the config of ``key``: a model alone keeps the key's settings."""
        return (
            value
            if isinstance(value, ModelConfig)
            else replace(self._models.configs[key], model=value)
        )

    @contextmanager
    def _overriding(self, configs: Mapping[str, ModelConfig]) -> Iterator[None]:
        layer = _Override(provider=self, models=BuiltModels(configs))
        # A new tuple, never one changed in place: a context copied before the block (a run
        # started elsewhere) keeps the layers it had.
        token = _overrides.set((*_overrides.get(), layer))
        try:
            yield
        finally:
            _overrides.reset(token)

    def __repr__(self) -> str:
        cache = "" if self.cache is None else f", cache={str(self.cache.path)!r}"
        return f"LLMProvider(models={self.list_models()!r}, default={self.default!r}{cache})"

    def _key(self, name: str | None) -> str:
        if name is not None and not isinstance(name, str):
            raise StructureError([_error(f"Model key {name!r} is not a string", self._available())])
        key = self.default if name is None else name
        if key not in self._models.configs:
            raise StructureError([self._unknown(key)])
        return key

    def _available(self) -> str:
        return "the provider's models are " + ", ".join(repr(key) for key in self._models.configs)

    def _models_of(self, key: str) -> BuiltModels:
        """The models ``key`` is taken from: those of the innermost `override()` block
        in force that overrides it, else the provider's own."""
        # Innermost block first, so a nested ``override()`` of a key wins; a block of
        # another provider is passed over.
        for layer in reversed(_overrides.get()):
            if layer.provider is self and key in layer.models.configs:
                return layer.models
        return self._models

    def _unknown(self, key: str) -> Diagnostic:
        close = suggest(key, list(self._models.configs), fallback="")
        return _error(
            f"Model {key!r} is not in the provider",
            f"{close + ' ' if close else ''}{self._available()}",
        )


def _problems(models: Mapping[str, object]) -> list[Diagnostic]:
    """Keys that are not strings, values that cannot become a model, wrong settings."""
    if not isinstance(models, Mapping):
        return [
            _error(
                f"LLMProvider takes a dict of models by key, got {models!r}",
                "pass the models by key, e.g. LLMProvider({'default': ChatOpenAI(...)})",
            )
        ]
    if not models:
        return [
            _error(
                "LLMProvider needs at least one model",
                "pass the models by key, e.g. LLMProvider({'default': ChatOpenAI(...)})",
            )
        ]
    problems = [
        _error(f"Model key {key!r} is not a string", "name each model with a string")
        for key in models
        if not isinstance(key, str)
    ]
    for key, value in models.items():
        problems.extend(_value_problems(f"Model {key!r}", value))
    return problems


def _value_problems(subject: str, value: object) -> list[Diagnostic]:
    """What keeps ``value`` from being a model, each message led by ``subject``."""
    source = value.model if isinstance(value, ModelConfig) else value
    if not isinstance(source, Runnable | str) and not callable(source):
        return [
            _error(
                f"{subject} is a {type(source).__name__!r}, not a chat model or a factory",
                "pass a langchain_core BaseChatModel (or a runnable around one), a "
                "function without arguments that returns one, or a provider string "
                "(e.g. 'openai:gpt-4o-mini')",
            )
        ]
    problems = provider_string_problems(source) if isinstance(source, str) else []
    if isinstance(value, ModelConfig):
        problems.extend(_config_problems(value))
    return [_error(f"{subject}: {problem}", hint) for problem, hint in problems]


def _as_config(value: ModelSource) -> ModelConfig:
    return value if isinstance(value, ModelConfig) else ModelConfig(value)


def _config_problems(config: ModelConfig) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    if config.method not in METHOD_CHOICES:
        listed = ", ".join(repr(name) for name in METHOD_CHOICES)
        close = suggest(str(config.method), list(METHOD_CHOICES), fallback="")
        problems.append(
            (f"method must be one of {listed}, got {config.method!r}", close or "use 'auto'")
        )
    timeout = config.call_timeout
    if timeout is not None and not (_seconds(timeout) and timeout > 0):
        problems.append(
            (
                f"call_timeout must be a number of seconds above 0 or None, got {timeout!r}",
                "e.g. ModelConfig(model, call_timeout=60)",
            )
        )
    if config.retry is not None and not isinstance(config.retry, RetryPolicy):
        problems.append(
            (
                f"retry must be a RetryPolicy or None, got {config.retry!r}",
                "e.g. ModelConfig(model, retry=RetryPolicy(max_retries=5))",
            )
        )
    elif config.retry is not None:
        problems.extend(
            (f"retry: {problem}", "e.g. RetryPolicy(max_retries=5)")
            for problem in config.retry.problems()
        )
    if not isinstance(config.cache, bool):
        problems.append(
            (
                f"cache must be True or False, got {config.cache!r}",
                "give the provider the cache (LLMProvider(models, cache=...)) and "
                "ModelConfig(model, cache=False) to keep a model out of it",
            )
        )
    return problems


def _seconds(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _error(message: str, hint: str) -> Diagnostic:
    return Diagnostic(severity="error", message=message, hint=hint)
