"""LLMProvider: models by key, the first the default, factories built once and lazily, and
each model's ModelConfig checked up front."""

import threading
import time
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel

from langtree import LangTreeError, RunStructure, StructureError, TreeNode
from langtree.runtime import LLMProvider, ModelConfig, RetryPolicy
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
        "  hint: return a langchain_core BaseChatModel (e.g. ChatOpenAI(...)) or a runnable "
        "around one from the factory"
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
        LLMProvider({"fast": FakeChatModel(), "smart": 4})  # type: ignore[dict-item]

    assert str(caught.value) == (
        "LangTree found 1 problem:\n\n"
        "error: Model 'smart' is a 'int', not a chat model or a factory\n"
        "  hint: pass a langchain_core BaseChatModel (or a runnable around one), a function "
        "without arguments that returns one, or a provider string (e.g. 'openai:gpt-4o-mini')"
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


# --- ModelConfig ----------------------------------------------------------------------------

METHOD_LIST = "'auto', 'function_calling', 'json_schema', 'json_mode'"
NEAR_MISS = "did you mean 'json_schema'?"


def timeout_problem(value: object) -> tuple[str, str]:
    return (
        f"Model 'm': call_timeout must be a number of seconds above 0 or None, got {value!r}",
        "e.g. ModelConfig(model, call_timeout=60)",
    )


def retry_problem(problem: str) -> tuple[str, str]:
    return (f"Model 'm': retry: {problem}", "e.g. RetryPolicy(max_retries=5)")


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        pytest.param(
            {"method": "json_shema"},
            (f"Model 'm': method must be one of {METHOD_LIST}, got 'json_shema'", NEAR_MISS),
            id="method-near-miss",
        ),
        pytest.param(
            {"method": "xml"},
            (f"Model 'm': method must be one of {METHOD_LIST}, got 'xml'", "use 'auto'"),
            id="method-unknown",
        ),
        pytest.param({"call_timeout": 0}, timeout_problem(0), id="timeout-zero"),
        pytest.param({"call_timeout": -1}, timeout_problem(-1), id="timeout-negative"),
        pytest.param({"call_timeout": "x"}, timeout_problem("x"), id="timeout-text"),
        pytest.param({"call_timeout": True}, timeout_problem(True), id="timeout-bool"),
        pytest.param(
            {"call_timeout": float("nan")}, timeout_problem(float("nan")), id="timeout-nan"
        ),
        pytest.param(
            {"retry": RetryPolicy(max_retries=-1)},
            retry_problem("max_retries must be a whole number of at least 0, got -1"),
            id="retry-max-retries",
        ),
        pytest.param(
            {"retry": RetryPolicy(max_retries=1.5)},  # type: ignore[arg-type]
            retry_problem("max_retries must be a whole number of at least 0, got 1.5"),
            id="retry-max-retries-fraction",
        ),
        pytest.param(
            {"retry": RetryPolicy(initial_delay=-0.5)},
            retry_problem("initial_delay must be a number of seconds of at least 0, got -0.5"),
            id="retry-initial-delay",
        ),
        pytest.param(
            {"retry": RetryPolicy(max_delay=float("inf"))},
            retry_problem("max_delay must be a number of seconds of at least 0, got inf"),
            id="retry-max-delay",
        ),
        pytest.param(
            {"retry": RetryPolicy(multiplier=0.5)},
            retry_problem("multiplier must be at least 1, got 0.5"),
            id="retry-multiplier",
        ),
        pytest.param(
            {"retry": RetryPolicy(max_wait=-60)},
            retry_problem("max_wait must be a number of seconds of at least 0, got -60"),
            id="retry-max-wait",
        ),
        pytest.param(
            {"retry": RetryPolicy(max_wait=float("inf"))},
            retry_problem("max_wait must be a number of seconds of at least 0, got inf"),
            id="retry-max-wait-unbounded",
        ),
        pytest.param(
            {"retry": RetryPolicy(clock=1700000000.0)},  # type: ignore[arg-type]
            retry_problem(
                "clock must be a function returning seconds since the epoch, got 1700000000.0"
            ),
            id="retry-clock",
        ),
        pytest.param(
            {"retry": RetryPolicy(sleep=None)},  # type: ignore[arg-type]
            retry_problem("sleep must be a function returning an awaitable, got None"),
            id="retry-sleep",
        ),
    ],
)
def test_model_config_setting_that_is_wrong_is_reported(
    config: dict[str, Any], problem: tuple[str, str]
) -> None:
    with pytest.raises(StructureError) as caught:
        LLMProvider({"m": ModelConfig(FakeChatModel(), **config)})

    assert messages(caught.value) == [problem]


def test_every_wrong_model_config_setting_is_reported_at_once() -> None:
    wrong = ModelConfig(
        FakeChatModel(),
        method="json_shema",  # type: ignore[arg-type]
        call_timeout=0,
        retry=RetryPolicy(max_retries=-1, multiplier=0.5),
    )

    late = ModelConfig(Factory(), call_timeout=-1)

    with pytest.raises(StructureError) as caught:
        LLMProvider({"a": wrong, "b": FakeChatModel(), "c": late})

    assert str(caught.value) == (
        "LangTree found 5 problems:\n\n"
        f"error: Model 'a': method must be one of {METHOD_LIST}, got 'json_shema'\n"
        "  hint: did you mean 'json_schema'?\n\n"
        "error: Model 'a': call_timeout must be a number of seconds above 0 or None, got 0\n"
        "  hint: e.g. ModelConfig(model, call_timeout=60)\n\n"
        "error: Model 'a': retry: max_retries must be a whole number of at least 0, got -1\n"
        "  hint: e.g. RetryPolicy(max_retries=5)\n\n"
        "error: Model 'a': retry: multiplier must be at least 1, got 0.5\n"
        "  hint: e.g. RetryPolicy(max_retries=5)\n\n"
        "error: Model 'c': call_timeout must be a number of seconds above 0 or None, got -1\n"
        "  hint: e.g. ModelConfig(model, call_timeout=60)"
    )


def test_model_config_of_no_model_names_the_key() -> None:
    with pytest.raises(StructureError) as caught:
        LLMProvider({"m": ModelConfig(4)})  # type: ignore[arg-type]

    assert messages(caught.value) == [
        (
            "Model 'm' is a 'int', not a chat model or a factory",
            "pass a langchain_core BaseChatModel (or a runnable around one), a function "
            "without arguments that returns one, or a provider string (e.g. "
            "'openai:gpt-4o-mini')",
        )
    ]


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({"method": "auto"}, id="auto"),
        pytest.param({"method": "json_mode", "call_timeout": 0.5}, id="float-timeout"),
        pytest.param({"call_timeout": 30, "retry": RetryPolicy(max_retries=0)}, id="no-retries"),
    ],
)
def test_model_config_with_good_settings_is_accepted(config: dict[str, Any]) -> None:
    model_config = ModelConfig(FakeChatModel(), **config)

    assert LLMProvider({"m": model_config}).config("m") is model_config


def test_model_config_infinite_call_timeout_is_reported() -> None:
    with pytest.raises(StructureError):
        LLMProvider({"m": ModelConfig(FakeChatModel(), call_timeout=float("inf"))})


def test_model_config_bool_max_retries_is_reported() -> None:
    with pytest.raises(StructureError):
        LLMProvider({"m": ModelConfig(FakeChatModel(), retry=RetryPolicy(max_retries=True))})


@pytest.mark.parametrize(
    ("key", "method"),
    [
        pytest.param(None, "json_mode", id="default"),
        pytest.param("tuned", "json_mode", id="model-config"),
        pytest.param("bare", "auto", id="bare-model"),
        pytest.param("lazy", "json_schema", id="factory-in-model-config"),
    ],
)
def test_config_gives_each_keys_model_config(key: str | None, method: str) -> None:
    provider = LLMProvider(
        {
            "tuned": ModelConfig(FakeChatModel(), method="json_mode", call_timeout=5),
            "bare": FakeChatModel(),
            "lazy": ModelConfig(Factory(), method="json_schema"),
        }
    )

    assert provider.config(key).method == method


def test_config_of_a_bare_model_has_the_defaults() -> None:
    model = FakeChatModel()

    assert LLMProvider({"bare": model}).config("bare") == ModelConfig(model)


def test_config_does_not_build_the_model() -> None:
    factory = Factory()

    LLMProvider({"lazy": ModelConfig(factory, method="json_mode")}).config("lazy")

    assert factory.calls == 0


def test_get_builds_the_factory_of_a_model_config() -> None:
    factory = Factory()

    assert LLMProvider({"lazy": ModelConfig(factory)}).get("lazy") is factory.model


def test_config_of_an_unknown_key_is_an_error() -> None:
    with pytest.raises(StructureError) as caught:
        LLMProvider({"fast": FakeChatModel()}).config("fats")

    assert messages(caught.value) == [
        (
            "Model 'fats' is not in the provider",
            "did you mean 'fast'? the provider's models are 'fast'",
        )
    ]
