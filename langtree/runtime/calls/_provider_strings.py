"""Provider strings: a chat model named as ``"openai:gpt-4o-mini"``.

``LLMProvider({"default": "openai:gpt-4o-mini"})`` and ``langtree run --model
openai:gpt-4o-mini`` build the model with LangChain's own ``init_chat_model``, which
imports the provider's package (``langchain-openai``) and builds its chat model
(``ChatOpenAI(model="gpt-4o-mini")``, its API key and base URL read from the environment
as the class reads them). ``init_chat_model`` lives in the ``langchain`` package, which
LangTree does not depend on: the ``providers`` extra installs it.

A provider string is ``provider:model`` with one of the providers that ``init_chat_model``
knows (`PROVIDER_PACKAGES`, which also says which package holds each provider's model).
LangTree checks the form and that both packages are installed when the provider is
built, and builds the model on its first use, as it calls a factory: a provider string
needs no API key until a run uses it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from types import MappingProxyType

from langchain_core.language_models import BaseChatModel

from langtree.dsl import suggest

__all__ = [
    "PROVIDER_PACKAGES",
    "chat_model_from_string",
    "is_provider_string",
    "provider_string_problems",
]

PROVIDER_PACKAGES: Mapping[str, str] = MappingProxyType(
    {
        "anthropic": "langchain-anthropic",
        "anthropic_bedrock": "langchain-aws",
        "azure_ai": "langchain-azure-ai",
        "azure_openai": "langchain-openai",
        "baseten": "langchain-baseten",
        "bedrock": "langchain-aws",
        "bedrock_converse": "langchain-aws",
        "bedrock_mantle_anthropic": "langchain-aws",
        "bedrock_mantle_openai": "langchain-aws",
        "cohere": "langchain-cohere",
        "deepseek": "langchain-deepseek",
        "fireworks": "langchain-fireworks",
        "google_anthropic_vertex": "langchain-google-vertexai",
        "google_genai": "langchain-google-genai",
        "google_vertexai": "langchain-google-vertexai",
        "groq": "langchain-groq",
        "huggingface": "langchain-huggingface",
        "ibm": "langchain-ibm",
        "langsmith": "langchain-openai",
        "litellm": "langchain-litellm",
        "meta": "langchain-meta",
        "mistralai": "langchain-mistralai",
        "nvidia": "langchain-nvidia-ai-endpoints",
        "ollama": "langchain-ollama",
        "openai": "langchain-openai",
        "openrouter": "langchain-openrouter",
        "perplexity": "langchain-perplexity",
        "together": "langchain-together",
        "upstage": "langchain-upstage",
        "xai": "langchain-xai",
    }
)
"""Each provider ``init_chat_model`` knows (langchain 1.5), and the package of its model."""

_EXAMPLE = "'openai:gpt-4o-mini'"


def is_provider_string(value: str) -> bool:
    """Whether ``value`` is ``provider:model`` with a provider of `PROVIDER_PACKAGES`.

    Examples:
        >>> is_provider_string("openai:gpt-4o-mini"), is_provider_string("my_models:chat")
        (True, False)
    """
    provider, colon, _ = value.partition(":")
    return bool(colon) and provider in PROVIDER_PACKAGES


def provider_string_problems(value: str) -> list[tuple[str, str]]:
    """What keeps ``value`` from naming a model that can be built, as (message, hint)
    pairs: not ``provider:model``, a provider ``init_chat_model`` does not know, no model
    after the colon, or ``langchain`` or the provider's package not installed."""
    provider, colon, model = value.partition(":")
    if not colon:
        return [
            (
                f"{value!r} is not a provider string (provider:model)",
                f"name the provider, as LangChain's init_chat_model takes it (e.g. "
                f"{_EXAMPLE}), or pass a chat model (e.g. ChatOpenAI(model='gpt-4o-mini'))",
            )
        ]
    if provider not in PROVIDER_PACKAGES:
        return [
            (
                f"{value!r} names the provider {provider!r}, which LangChain's "
                "init_chat_model does not know",
                suggest(provider, list(PROVIDER_PACKAGES), fallback="")
                or "the providers are " + ", ".join(PROVIDER_PACKAGES),
            )
        ]
    problems: list[tuple[str, str]] = []
    if not model:
        problems.append((f"{value!r} names no model", f"e.g. {_EXAMPLE}"))
    missing = [
        package for package in ("langchain", PROVIDER_PACKAGES[provider]) if not _installed(package)
    ]
    if missing:
        listed = " and ".join(repr(package) for package in missing)
        problems.append(
            (
                f"{value!r} is built by LangChain's init_chat_model with the package "
                f"{listed}, which {'is' if len(missing) == 1 else 'are'} not installed",
                f"pip install {' '.join(missing)}",
            )
        )
    return problems


def chat_model_from_string(value: str) -> BaseChatModel:
    """The chat model that ``init_chat_model(value)`` builds.

    Call it on a value that `provider_string_problems()` found nothing wrong with.

    Returns:
        The provider's chat model.

    What ``init_chat_model`` or the model's class raises propagates unchanged (e.g. the
    provider's error for an API key missing from the environment).
    """
    # langchain is an optional extra: imported only when a provider string is built.
    from langchain.chat_models import init_chat_model

    return init_chat_model(value)


def _installed(package: str) -> bool:
    return importlib.util.find_spec(package.replace("-", "_")) is not None
