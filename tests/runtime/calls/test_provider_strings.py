"""Provider strings: ``LLMProvider({"default": "openai:gpt-4o-mini"})``, built by LangChain's
``init_chat_model`` on first use, with every problem of the string told up front."""

import importlib.util
import sys

import pytest

from langtree import StructureError
from langtree.runtime import LLMProvider, ModelConfig
from langtree.runtime.calls._provider_strings import PROVIDER_PACKAGES

needs_langchain = pytest.mark.skipif(
    importlib.util.find_spec("langchain") is None
    or importlib.util.find_spec("langchain_openai") is None,
    reason="langchain and langchain-openai are not installed: pip install -e '.[dev]'",
)

# Building ChatOpenAI probes socket options on a throwaway socket (never connected), which
# pytest-socket refuses and langchain-openai tolerates.
OPENAI_PROBE = pytest.mark.filterwarnings("ignore:A test tried to use socket.socket")


def problems(error: StructureError) -> list[tuple[str, str]]:
    return [(d.message, d.hint) for d in error.diagnostics]


@needs_langchain
@OPENAI_PROBE
@pytest.mark.allow_model_requests  # ChatOpenAI is a real model; nothing is sent
def test_a_provider_string_is_built_by_init_chat_model_on_first_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langchain_openai import ChatOpenAI

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider = LLMProvider({"default": "openai:gpt-4o-mini"})  # no API key needed yet
    monkeypatch.setenv("OPENAI_API_KEY", "not-needed")

    model = provider.get()

    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "gpt-4o-mini"
    assert provider.get() is model


@needs_langchain
@OPENAI_PROBE
@pytest.mark.allow_model_requests
def test_a_model_config_takes_a_provider_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "not-needed")
    provider = LLMProvider({"fast": ModelConfig("openai:gpt-4o-mini", method="json_schema")})

    assert provider.config("fast").method == "json_schema"
    assert provider.get("fast").model_name == "gpt-4o-mini"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param(
            "gpt-4o",
            (
                "Model 'fast': 'gpt-4o' is not a provider string (provider:model)",
                "name the provider, as LangChain's init_chat_model takes it (e.g. "
                "'openai:gpt-4o-mini'), or pass a chat model (e.g. "
                "ChatOpenAI(model='gpt-4o-mini'))",
            ),
            id="no-provider",
        ),
        pytest.param(
            "opnai:gpt-4o",
            (
                "Model 'fast': 'opnai:gpt-4o' names the provider 'opnai', which LangChain's "
                "init_chat_model does not know",
                "did you mean 'openai'?",
            ),
            id="misspelled-provider",
        ),
        pytest.param(
            "nosuch:model",
            (
                "Model 'fast': 'nosuch:model' names the provider 'nosuch', which LangChain's "
                "init_chat_model does not know",
                "the providers are " + ", ".join(PROVIDER_PACKAGES),
            ),
            id="unknown-provider",
        ),
    ],
)
def test_a_string_that_is_not_a_provider_string_is_refused(
    value: str, problem: tuple[str, str]
) -> None:
    with pytest.raises(StructureError) as caught:
        LLMProvider({"fast": value})

    assert problems(caught.value) == [problem]


@needs_langchain
def test_a_provider_string_without_a_model_is_refused() -> None:
    with pytest.raises(StructureError) as caught:
        LLMProvider({"fast": "openai:"})

    assert str(caught.value) == (
        "LangTree found 1 problem:\n\n"
        "error: Model 'fast': 'openai:' names no model\n"
        "  hint: e.g. 'openai:gpt-4o-mini'"
    )


def test_without_langchain_a_provider_string_names_the_packages_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "langchain", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "langchain_openai", None)

    with pytest.raises(StructureError) as caught:
        LLMProvider({"default": "openai:gpt-4o-mini"})

    assert str(caught.value) == (
        "LangTree found 1 problem:\n\n"
        "error: Model 'default': 'openai:gpt-4o-mini' is built by LangChain's init_chat_model "
        "with the package 'langchain' and 'langchain-openai', which are not installed\n"
        "  hint: pip install langchain langchain-openai"
    )


def test_a_missing_provider_package_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_anthropic", None)

    with pytest.raises(StructureError) as caught:
        LLMProvider({"default": "anthropic:claude-sonnet-4-5"})

    assert problems(caught.value)[-1] == (
        "Model 'default': 'anthropic:claude-sonnet-4-5' is built by LangChain's "
        f"init_chat_model with the package {missing_packages('langchain-anthropic')}",
        f"pip install {' '.join(missing_names('langchain-anthropic'))}",
    )


def missing_names(package: str) -> list[str]:
    """``langchain`` when it is not installed here, then ``package``."""
    return [*(["langchain"] if importlib.util.find_spec("langchain") is None else []), package]


def missing_packages(package: str) -> str:
    names = missing_names(package)
    listed = " and ".join(repr(name) for name in names)
    return f"{listed}, which {'is' if len(names) == 1 else 'are'} not installed"


@needs_langchain
def test_every_provider_is_one_init_chat_model_knows_with_its_package() -> None:
    """LangTree's table may lag behind LangChain's (a provider added later is not taken
    for one), never disagree with it."""
    from langchain.chat_models import base

    known = {
        provider: module.split(".")[0].replace("_", "-")
        for provider, (module, *_) in base._BUILTIN_PROVIDERS.items()
    }

    assert {provider: known.get(provider) for provider in PROVIDER_PACKAGES} == dict(
        PROVIDER_PACKAGES
    )
