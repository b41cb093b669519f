"""LLMProvider: models by key, the first the default, factories built once and lazily."""

import threading
import time

import pytest
from langchain_core.language_models import BaseChatModel

from langtree import LangTreeError, RunStructure, StructureError, TreeNode
from langtree.runtime import LLMProvider
from langtree.testing import FakeChatModel


class Factory:
    """A model factory that counts its calls."""

    def __init__(self, delay: float = 0.0) -> None:
        self.calls = 0
        self.delay = delay
        self.model = FakeChatModel()

    def __call__(self) -> BaseChatModel:
        self.calls += 1
        time.sleep(self.delay)
        return self.model


def messages(error: StructureError) -> list[tuple[str, str]]:
    return [(d.message, d.hint) for d in error.diagnostics]


# --- Keys and the default -----------------------------------------------------------------


def test_list_models_keeps_the_given_order() -> None:
    provider = LLMProvider({"smart": FakeChatModel(), "fast": FakeChatModel()})

    assert provider.list_models() == ["smart", "fast"]


def test_the_first_key_is_the_default() -> None:
    provider = LLMProvider({"smart": FakeChatModel(), "fast": FakeChatModel()})

    assert provider.default == "smart"


@pytest.mark.parametrize(
    ("name", "key"),
    [
        pytest.param(None, "smart", id="default"),
        pytest.param("smart", "smart", id="first"),
        pytest.param("fast", "fast", id="second"),
    ],
)
def test_get_returns_the_model_for_the_key(name: str | None, key: str) -> None:
    models = {"smart": FakeChatModel(), "fast": FakeChatModel()}

    assert LLMProvider(models).get(name) is models[key]


def test_repr_names_the_keys_and_the_default() -> None:
    provider = LLMProvider({"fast": FakeChatModel(), "smart": Factory()})

    assert repr(provider) == "LLMProvider(models=['fast', 'smart'], default='fast')"


# --- Factories ------------------------------------------------------------------------------


def test_factory_is_not_called_at_construction() -> None:
    factory = Factory()

    LLMProvider({"lazy": factory})

    assert factory.calls == 0


def test_factory_is_called_once_and_its_model_kept() -> None:
    factory = Factory()
    provider = LLMProvider({"lazy": factory})

    models = [provider.get("lazy"), provider.get(), provider.get("lazy")]

    assert (factory.calls, [model is factory.model for model in models]) == (1, [True] * 3)


def test_factory_is_called_once_from_many_threads() -> None:
    factory = Factory(delay=0.02)
    provider = LLMProvider({"lazy": factory})

    threads = [threading.Thread(target=provider.get) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert factory.calls == 1


def test_factory_of_another_key_is_not_called() -> None:
    factory = Factory()

    LLMProvider({"fast": FakeChatModel(), "lazy": factory}).get("fast")

    assert factory.calls == 0


class MissingKeyError(Exception):
    pass


def test_factory_errors_propagate_and_the_next_get_tries_again() -> None:
    attempts: list[int] = []

    def factory() -> BaseChatModel:
        attempts.append(1)
        if len(attempts) == 1:
            raise MissingKeyError("OPENAI_API_KEY is not set")
        return FakeChatModel()

    provider = LLMProvider({"remote": factory})
    with pytest.raises(MissingKeyError, match="OPENAI_API_KEY"):
        provider.get()

    assert isinstance(provider.get(), FakeChatModel)
    assert len(attempts) == 2


def test_factory_that_returns_no_chat_model_is_an_error() -> None:
    provider = LLMProvider({"broken": lambda: "gpt-4o"})  # type: ignore[dict-item,return-value]

    with pytest.raises(StructureError) as caught:
        provider.get("broken")

    assert str(caught.value) == (
        "LangTree found 1 problem:\n\n"
        "error: The factory of model 'broken' returned 'str', not a chat model\n"
        "  hint: return a langchain_core BaseChatModel (e.g. ChatOpenAI(...)) from the factory"
    )


# --- Unknown keys ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        pytest.param(
            "gpt-4o-mini",
            "did you mean 'gpt-4o'? the provider's models are 'gpt-4o', 'local'",
            id="close-key",
        ),
        pytest.param("claude", "the provider's models are 'gpt-4o', 'local'", id="no-close-key"),
    ],
)
def test_unknown_key_is_an_error_with_a_hint(name: str, hint: str) -> None:
    provider = LLMProvider({"gpt-4o": FakeChatModel(), "local": FakeChatModel()})

    with pytest.raises(StructureError) as caught:
        provider.get(name)

    assert messages(caught.value) == [(f"Model {name!r} is not in the provider", hint)]


def test_unknown_key_error_text_is_pinned() -> None:
    provider = LLMProvider({"gpt-4o": FakeChatModel(), "local": FakeChatModel()})

    with pytest.raises(StructureError) as caught:
        provider.get("gpt-4o-mini")

    assert str(caught.value) == (
        "LangTree found 1 problem:\n\n"
        "error: Model 'gpt-4o-mini' is not in the provider\n"
        "  hint: did you mean 'gpt-4o'? the provider's models are 'gpt-4o', 'local'"
    )


def test_unknown_key_error_is_a_value_error_and_a_langtree_error() -> None:
    with pytest.raises(StructureError) as caught:
        LLMProvider({"local": FakeChatModel()}).get("remote")

    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, LangTreeError)


# --- Construction errors --------------------------------------------------------------------


def test_empty_provider_is_an_error() -> None:
    with pytest.raises(StructureError) as caught:
        LLMProvider({})

    assert str(caught.value) == (
        "LangTree found 1 problem:\n\n"
        "error: LLMProvider needs at least one model\n"
        "  hint: pass the models by key, e.g. LLMProvider({'default': ChatOpenAI(...)})"
    )


def test_value_that_is_no_model_names_the_key() -> None:
    with pytest.raises(StructureError) as caught:
        LLMProvider({"fast": FakeChatModel(), "smart": "gpt-4o"})  # type: ignore[dict-item]

    assert str(caught.value) == (
        "LangTree found 1 problem:\n\n"
        "error: Model 'smart' is a 'str', not a chat model or a factory\n"
        "  hint: pass a langchain_core BaseChatModel, or a function without arguments that "
        "returns one"
    )


def test_every_bad_value_is_reported() -> None:
    with pytest.raises(StructureError) as caught:
        LLMProvider({"a": 1, "b": FakeChatModel(), "c": None})  # type: ignore[dict-item]

    assert [message for message, _ in messages(caught.value)] == [
        "Model 'a' is a 'int', not a chat model or a factory",
        "Model 'c' is a 'NoneType', not a chat model or a factory",
    ]


def test_key_that_is_not_a_string_is_an_error() -> None:
    with pytest.raises(StructureError) as caught:
        LLMProvider({1: FakeChatModel()})  # type: ignore[dict-item]

    assert messages(caught.value) == [
        ("Model key 1 is not a string", "name each model with a string")
    ]


# --- As the catalog of RunStructure ---------------------------------------------------------


class TaskSummary(TreeNode):
    """! llm("smart")"""

    text: str


def test_run_structure_accepts_keys_the_provider_lists() -> None:
    structure = RunStructure(provider=LLMProvider({"fast": FakeChatModel(), "smart": Factory()}))
    structure.add(TaskSummary)

    assert structure.validate() == ()


def test_run_structure_reports_keys_the_provider_lacks() -> None:
    structure = RunStructure(provider=LLMProvider({"fast": FakeChatModel()}))
    structure.add(TaskSummary)

    with pytest.raises(StructureError) as caught:
        structure.validate()

    assert messages(caught.value) == [
        ("Model 'smart' is not in the provider", "the provider's models are 'fast'")
    ]
