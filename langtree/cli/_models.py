"""The models a run uses (``--model``, ``--method``), built before it starts."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.runnables import Runnable

from langtree import RunStructure
from langtree.cli._named import named_object
from langtree.errors import LangTreeError
from langtree.prompts import DEFAULT_MODEL_KEY
from langtree.runtime import (
    ChatRunnable,
    LLMProvider,
    MethodChoice,
    ModelConfig,
    is_provider_string,
    provider_string_problems,
)
from langtree.testing import FakeChatModel


def model_keys(structure: RunStructure, inputs: dict[object, object]) -> list[str]:
    """The model keys the plan's steps use; `DEFAULT_MODEL_KEY` (``"default"``) first for
    steps without one (a transform calls no model)."""
    steps = structure.plan(inputs).steps
    models = [step.model for step in steps if step.transform is None]
    keys = list(dict.fromkeys(model for model in models if model is not None))
    if None in models or not keys:
        keys = [DEFAULT_MODEL_KEY, *(key for key in keys if key != DEFAULT_MODEL_KEY)]
    return keys


NO_MODEL = (
    "no model configured: pass --model fake, --model provider:model (e.g. "
    "openai:gpt-4o-mini), --model module:attribute, or install the local model with "
    "`make local-model`"
)


def provider_for(spec: str | None, keys: list[str], method: MethodChoice | None) -> LLMProvider:
    """The provider ``--model`` names, listing every key in ``keys``, with the models of
    ``keys`` built; a chat model is asked for structured output with ``method``.

    Raises:
        LangTreeError: The value names nothing usable, or building a model raised (the
            CLI exits with status 2).
    """
    return _built(named_provider(spec, keys, method), keys, spec)


def named_provider(spec: str | None, keys: list[str], method: MethodChoice | None) -> LLMProvider:
    """The provider ``--model`` names, as `provider_for()` gives it but with no model
    built by LangTree: a provider's factories, a provider string's model and the
    embedded local model wait for their first use (a function that ``--model`` names is
    called, to learn what it returns).

    A value whose part before the first colon is a provider of LangChain's
    ``init_chat_model`` (``openai:gpt-4o-mini``) is a provider string; any other is
    ``module:attribute`` (``langtree.runtime.calls._provider_strings``).

    Raises:
        LangTreeError: The value names nothing usable, or the function it names raised.
    """
    if spec is None:
        return _same_model(_local_model, keys, method)
    if spec == "fake":
        return _same_model(FakeChatModel, keys, method)
    if is_provider_string(spec):
        return _same_model(_checked_provider_string(spec), keys, method)
    found = named_object(
        "--model",
        spec,
        malformed=f"--model takes 'fake', provider:model or module:attribute, got {spec!r}\n"
        "  hint: e.g. --model openai:gpt-4o-mini, or --model my_models:provider (an "
        "LLMProvider or a chat model)",
    )
    return _as_provider(found, spec, keys, method)


def _checked_provider_string(spec: str) -> str:
    """``spec``, once nothing keeps its model from being built (told once, not per key).

    Raises:
        LangTreeError: It names no model, or a package it needs is not installed.
    """
    problems = provider_string_problems(spec)
    if problems:
        raise LangTreeError(
            "\n".join(f"--model {message}\n  hint: {hint}" for message, hint in problems)
        )
    return spec


def _as_provider(
    found: object, spec: str, keys: list[str], method: MethodChoice | None
) -> LLMProvider:
    if callable(found) and not isinstance(found, (LLMProvider, Runnable, type)):
        found = _called(found, spec)
    if isinstance(found, LLMProvider):
        if method is not None:
            raise LangTreeError(
                f"--method does not apply to --model {spec!r}, an LLMProvider\n"
                "  hint: set the method per model in the provider: "
                "LLMProvider({'key': ModelConfig(model, method=...)})"
            )
        return found
    if isinstance(found, Runnable):
        return _same_model(lambda: found, keys, method)
    raise LangTreeError(
        f"--model {spec!r} is a {type(found).__name__!r}, not an LLMProvider or a chat model\n"
        "  hint: name an LLMProvider, a langchain_core BaseChatModel (or a runnable around "
        "one), or a function without arguments returning one"
    )


def _local_model() -> ChatRunnable:
    """The embedded local model, built (its weights loaded) on first use."""
    try:  # the local model is an extra: import it only when it is built
        from langtree.models import default_local_model
    except ImportError:
        raise LangTreeError(NO_MODEL) from None
    return default_local_model()


def _called(factory: Callable[[], object], spec: str) -> object:
    try:
        return factory()
    except LangTreeError:
        raise
    # A factory is the user's code and may raise any type (a client without its API key):
    # the CLI reports it in one message, as an environment error, not with a traceback.
    except Exception as error:  # noqa: BLE001
        raise LangTreeError(_factory_failed(f"--model {spec!r}", error)) from None


def _built(provider: LLMProvider, keys: list[str], spec: str | None) -> LLMProvider:
    """``provider`` with the models the run uses built now, so that a factory that fails
    stops the CLI before the run starts (``LLMProvider`` calls each factory once)."""
    for key in keys:
        if key in provider.list_models():
            try:
                provider.get(key)
            except LangTreeError:
                raise
            # As in _called: what the factory raises becomes one message.
            except Exception as error:  # noqa: BLE001
                subject = (
                    f"Model {key!r} of --model {spec!r}"
                    if spec is not None
                    else "The embedded local model"
                )
                raise LangTreeError(_factory_failed(subject, error)) from None
    return provider


def _factory_failed(subject: str, error: Exception) -> str:
    described = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return (
        f"{subject} could not be built: {described}\n"
        "  hint: check what building the model needs (an API key in the environment, an "
        "installed package, a reachable server)"
    )


def _same_model(
    build: Callable[[], ChatRunnable] | str, keys: list[str], method: MethodChoice | None
) -> LLMProvider:
    """One model (built on first use, by a function or from a provider string) under
    every key, asked by ``method``."""
    model = ModelConfig(build, method=method or "auto")
    return LLMProvider(dict.fromkeys(keys, model))
