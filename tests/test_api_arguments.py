"""Wrongly typed arguments to the public API raise a LangTree error that names the fix.

One row per method and argument: ``RunStructure(config, provider)``, ``add``, ``get_node``,
``plan``, ``prompts``, ``run``, ``arun``, ``build`` (and its runnable's ``invoke``), and
``LLMProvider(models)``, ``get``, ``config`` with ``ModelConfig``'s settings. Inputs that
name the same task twice are refused, naming both keys.
"""

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from langtree import (
    ExecutionError,
    LLMProvider,
    ModelConfig,
    RunStructure,
    StructureError,
    TreeNode,
)
from langtree.testing import FakeChatModel


class TaskGreet(TreeNode):
    name: str
    greeting: str


class TaskThank(TreeNode):
    name: str
    thanks: str


INPUTS = {TaskGreet: {"name": "Ada"}}


def structure() -> RunStructure:
    built = RunStructure(provider=LLMProvider({"default": FakeChatModel()}))
    built.add(TaskGreet)
    return built


def provider() -> LLMProvider:
    return LLMProvider({"fast": FakeChatModel(), "smart": FakeChatModel()})


def problem(message: str, hint: str) -> str:
    """The text of a ``StructureError`` holding one problem without a location."""
    return f"LangTree found 1 problem:\n\nerror: {message}\n  hint: {hint}"


RUN_HINT = (
    "\n  hint: e.g. run(..., max_concurrency=8, call_timeout=60, "
    "retry=RetryPolicy(max_retries=5), usage_limits=UsageLimits(calls=500))"
)
SETTINGS = (
    "'asset_folders', 'cache', 'call_timeout', 'deadline', 'journal', 'journal_max_age', "
    "'max_asset_bytes', 'max_concurrency', 'max_retries', 'rate_limit', 'retry', 'usage_limits'"
)
WHOLE_NUMBER = "{} must be a whole number, got {}"
SECONDS = "{} must be a number of seconds above 0 or None, got {}"
NOT_A_SETTING = f"'workers' is not a run setting; the run settings are {SETTINGS}"
INPUTS_NOT_A_DICT = "Inputs must be a dict of task classes (or tags) to values, not {!r}"
INPUTS_HINT = "pass e.g. {TaskGreet: {'field': value}}"
VARIABLES_HINT = "\n  hint: e.g. variables={'company': 'Acme'}"
STRUCTURE_PROVIDER_HINT = (
    "pass the models by key, e.g. RunStructure(provider=LLMProvider({'default': ChatOpenAI(...)}))"
)
PROVIDER_HINT = "pass the models by key, e.g. LLMProvider({'default': ChatOpenAI(...)})"
MODELS = "the provider's models are 'fast', 'smart'"

# Calls refused with one problem: the call, the problem's message and its hint.
ONE_PROBLEM = {
    # RunStructure(config, provider)
    "RunStructure-provider-str": (
        lambda: RunStructure(provider="gpt-4o"),  # type: ignore[arg-type]
        "RunStructure's provider must be an LLMProvider or None, got 'gpt-4o'",
        STRUCTURE_PROVIDER_HINT,
    ),
    "RunStructure-provider-class": (
        lambda: RunStructure(provider=LLMProvider),  # type: ignore[arg-type]
        "RunStructure's provider must be an LLMProvider or None, got "
        "<class 'langtree.runtime.calls._provider.LLMProvider'>",
        STRUCTURE_PROVIDER_HINT,
    ),
    "RunStructure-config-list": (
        lambda: RunStructure(["strict"]),  # type: ignore[arg-type]
        "RunStructure's config must be a dict, a TypeMappingConfig or None, got ['strict']",
        "pass the settings by name, e.g. RunStructure({'validation_strategy': 'strict'})",
    ),
    "RunStructure-config-max_concurrency-str": (
        lambda: RunStructure({"max_concurrency": "8"}),
        "max_concurrency must be a whole number, got '8'",
        "e.g. RunStructure({'call_timeout': 60, 'retry': {'max_retries': 5}})",
    ),
    # add(task_class)
    "add-str": (
        lambda: structure().add("TaskGreet"),  # type: ignore[arg-type]
        "add() takes a TreeNode subclass, got 'TaskGreet'",
        "define the task as 'class TaskName(TreeNode): ...' and pass the class itself",
    ),
    # get_node(tag)
    "get_node-int": (
        lambda: structure().get_node(3),  # type: ignore[arg-type]
        "get_node() takes a tag, got 3",
        "pass the node's tag as a string, e.g. get_node('task.report.sections')",
    ),
    "get_node-class": (
        lambda: structure().get_node(TaskGreet),  # type: ignore[arg-type]
        f"get_node() takes a tag, got {TaskGreet!r}",
        "pass the task's tag: get_node('task.greet')",
    ),
    # LLMProvider(models)
    "LLMProvider-models-empty": (
        lambda: LLMProvider({}),
        "LLMProvider needs at least one model",
        PROVIDER_HINT,
    ),
    "LLMProvider-key-int": (
        lambda: LLMProvider({1: FakeChatModel()}),  # type: ignore[dict-item]
        "Model key 1 is not a string",
        "name each model with a string",
    ),
    "LLMProvider-model-str": (
        lambda: LLMProvider({"fast": "gpt-4o"}),
        "Model 'fast': 'gpt-4o' is not a provider string (provider:model)",
        "name the provider, as LangChain's init_chat_model takes it (e.g. "
        "'openai:gpt-4o-mini'), or pass a chat model (e.g. ChatOpenAI(model='gpt-4o-mini'))",
    ),
}


@pytest.mark.parametrize(("call", "message", "hint"), ONE_PROBLEM.values(), ids=ONE_PROBLEM)
def test_a_wrongly_typed_argument_is_a_clear_error(
    call: Callable[[], object], message: str, hint: str
) -> None:
    with pytest.raises(StructureError) as caught:
        call()

    assert str(caught.value) == problem(message, hint)


def test_a_build_name_that_is_not_a_string_is_a_clear_error() -> None:
    with pytest.raises(ExecutionError) as caught:
        structure().build(name=3)  # type: ignore[arg-type]

    assert str(caught.value) == (
        "build() takes a string name, got 3\n  hint: e.g. build(name='review run')"
    )


# Models that are not a dict of models by key, as LLMProvider refuses them.
NOT_MODELS = {
    "LLMProvider-models-str": "gpt-4o",
    "LLMProvider-models-None": None,
    "LLMProvider-models-list": [("fast", FakeChatModel)],
}


@pytest.mark.parametrize("models", NOT_MODELS.values(), ids=NOT_MODELS)
def test_models_that_are_not_a_dict_are_a_clear_error(models: object) -> None:
    with pytest.raises(StructureError) as caught:
        LLMProvider(models)  # type: ignore[arg-type]

    assert str(caught.value) == problem(
        f"LLMProvider takes a dict of models by key, got {models!r}", PROVIDER_HINT
    )


# ModelConfig settings refused: the settings, what the message says of them, the hint.
BAD_MODEL_SETTINGS = {
    "ModelConfig-retry-int": (
        {"retry": 3},
        "retry must be a RetryPolicy or None, got 3",
        "e.g. ModelConfig(model, retry=RetryPolicy(max_retries=5))",
    ),
    "ModelConfig-call_timeout-str": (
        {"call_timeout": "60"},
        SECONDS.format("call_timeout", "'60'"),
        "e.g. ModelConfig(model, call_timeout=60)",
    ),
    "ModelConfig-method-int": (
        {"method": 1},
        "method must be one of 'auto', 'function_calling', 'json_schema', 'json_mode', got 1",
        "use 'auto'",
    ),
}


@pytest.mark.parametrize(
    ("settings", "message", "hint"), BAD_MODEL_SETTINGS.values(), ids=BAD_MODEL_SETTINGS
)
def test_a_wrongly_typed_model_setting_is_a_clear_error(
    settings: dict[str, Any], message: str, hint: str
) -> None:
    with pytest.raises(StructureError) as caught:
        LLMProvider({"fast": ModelConfig(FakeChatModel(), **settings)})

    assert str(caught.value) == problem(f"Model 'fast': {message}", hint)


# Model keys that are not strings: the provider's method that looks a model up, the key.
NOT_KEYS = {
    "LLMProvider.get-int": ("get", 0),
    "LLMProvider.get-list": ("get", ["fast"]),
    "LLMProvider.config-int": ("config", 0),
}


@pytest.mark.parametrize(("method", "key"), NOT_KEYS.values(), ids=NOT_KEYS)
def test_a_model_key_that_is_not_a_string_is_a_clear_error(method: str, key: object) -> None:
    with pytest.raises(StructureError) as caught:
        getattr(provider(), method)(key)

    assert str(caught.value) == problem(f"Model key {key!r} is not a string", MODELS)


# Each method that takes the inputs, called on them as a user calls it.
ON_INPUTS: dict[str, Callable[[RunStructure, Any], object]] = {
    "plan": lambda built, inputs: built.plan(inputs),
    "prompts": lambda built, inputs: built.prompts(inputs),
    "run": lambda built, inputs: built.run(inputs),
    "arun": lambda built, inputs: asyncio.run(built.arun(inputs)),
    "build-invoke": lambda built, inputs: built.build().invoke(inputs),
}
# Inputs that are not a dict: the method, the inputs, and the type the message names.
NOT_A_DICT = {
    "plan-inputs-list": ("plan", [TaskGreet], "list"),
    "prompts-inputs-str": ("prompts", "Ada", "str"),
    "run-inputs-list": ("run", [TaskGreet], "list"),
    "arun-inputs-str": ("arun", "Ada", "str"),
    "build-invoke-list": ("build-invoke", [TaskGreet], "list"),
}


@pytest.mark.parametrize(("method", "inputs", "kind"), NOT_A_DICT.values(), ids=NOT_A_DICT)
def test_inputs_that_are_not_a_dict_are_a_clear_error(
    method: str, inputs: object, kind: str
) -> None:
    with pytest.raises(StructureError) as caught:
        ON_INPUTS[method](structure(), inputs)

    assert str(caught.value) == problem(INPUTS_NOT_A_DICT.format(kind), INPUTS_HINT)


# Each method that takes the external variables, called with them on the inputs.
WITH_VARIABLES: dict[str, Callable[[RunStructure, Any], object]] = {
    "prompts": lambda built, variables: built.prompts(INPUTS, variables=variables),
    "run": lambda built, variables: built.run(INPUTS, variables=variables),
    "arun": lambda built, variables: asyncio.run(built.arun(INPUTS, variables=variables)),
    "build": lambda built, variables: built.build(variables),
}
VARIABLES_NOT_A_DICT = "variables must be a dict of names to values, not {!r}"
# Variables refused: the method, the variables, and the message.
BAD_VARIABLES = {
    "prompts-variables-str": ("prompts", "Acme", VARIABLES_NOT_A_DICT.format("str")),
    "prompts-variables-list": (
        "prompts",
        [("company", "Acme")],
        VARIABLES_NOT_A_DICT.format("list"),
    ),
    "prompts-variables-int-name": ("prompts", {1: "Acme"}, "variables are named by strings, got 1"),
    "run-variables-str": ("run", "x", VARIABLES_NOT_A_DICT.format("str")),
    "arun-variables-int": ("arun", 3, VARIABLES_NOT_A_DICT.format("int")),
    "build-variables-str": ("build", "Acme", VARIABLES_NOT_A_DICT.format("str")),
}


@pytest.mark.parametrize(
    ("method", "variables", "message"), BAD_VARIABLES.values(), ids=BAD_VARIABLES
)
def test_wrongly_typed_variables_are_a_clear_error(
    method: str, variables: object, message: str
) -> None:
    with pytest.raises(ExecutionError) as caught:
        WITH_VARIABLES[method](structure(), variables)

    assert str(caught.value) == message + VARIABLES_HINT


# Each method that takes run settings, called with them (on the inputs, where it takes them).
WITH_SETTINGS: dict[str, Callable[[RunStructure, dict[str, Any]], object]] = {
    "run": lambda built, settings: built.run(INPUTS, **settings),
    "arun": lambda built, settings: asyncio.run(built.arun(INPUTS, **settings)),
    "build": lambda built, settings: built.build(**settings),
}
# Run settings refused: the method, the settings, and the message.
BAD_SETTINGS = {
    "run-max_concurrency-str": (
        "run",
        {"max_concurrency": "8"},
        WHOLE_NUMBER.format("max_concurrency", "'8'"),
    ),
    "run-max_retries-float": ("run", {"max_retries": 2.5}, WHOLE_NUMBER.format("max_retries", 2.5)),
    "run-call_timeout-str": ("run", {"call_timeout": "60"}, SECONDS.format("call_timeout", "'60'")),
    "run-deadline-list": ("run", {"deadline": [60]}, SECONDS.format("deadline", [60])),
    "run-retry-int": (
        "run",
        {"retry": 5},
        "retry must be a RetryPolicy or a dict of its fields, got 5",
    ),
    "run-usage_limits-int": (
        "run",
        {"usage_limits": 500},
        "usage_limits must be a UsageLimits or a dict of its fields, got 500",
    ),
    "run-misspelt-setting": (
        "run",
        {"max_concurency": 8},
        "'max_concurency' is not a run setting; did you mean 'max_concurrency'?",
    ),
    "run-unknown-setting": ("run", {"workers": 8}, NOT_A_SETTING),
    "arun-max_concurrency-str": (
        "arun",
        {"max_concurrency": "8"},
        WHOLE_NUMBER.format("max_concurrency", "'8'"),
    ),
    "build-max_concurrency-str": (
        "build",
        {"max_concurrency": "8"},
        WHOLE_NUMBER.format("max_concurrency", "'8'"),
    ),
    "build-unknown-setting": ("build", {"workers": 8}, NOT_A_SETTING),
}


@pytest.mark.parametrize(("method", "settings", "message"), BAD_SETTINGS.values(), ids=BAD_SETTINGS)
def test_a_wrongly_typed_run_setting_is_a_clear_error(
    method: str, settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ExecutionError) as caught:
        WITH_SETTINGS[method](structure(), settings)

    assert str(caught.value) == message + RUN_HINT


def twice(first: str, second: str) -> str:
    return problem(
        f"Inputs give the values of 'task.greet' twice: as {first} and as {second}",
        "keep one of them",
    )


TWICE = [
    pytest.param(
        {TaskGreet: {"name": "Ada"}, "task.greet": {"name": "Bob"}},
        twice("TaskGreet", "'task.greet'"),
        id="class-and-tag",
    ),
    pytest.param(
        {TaskGreet: {"name": "Ada"}, "TaskGreet": {"name": "Bob"}},
        twice("TaskGreet", "'TaskGreet'"),
        id="class-and-class-name",
    ),
    pytest.param(
        {"task.greet": {"name": "Ada"}, "TaskGreet": {"name": "Bob"}},
        twice("'task.greet'", "'TaskGreet'"),
        id="tag-and-class-name",
    ),
]


@pytest.mark.parametrize("method", ON_INPUTS.values(), ids=ON_INPUTS)
@pytest.mark.parametrize(("inputs", "message"), TWICE)
def test_a_task_given_twice_in_the_inputs_is_refused_naming_both_keys(
    method: Callable[[RunStructure, object], object], inputs: dict[object, object], message: str
) -> None:
    with pytest.raises(StructureError) as caught:
        method(structure(), inputs)

    assert str(caught.value) == message


def test_every_task_given_twice_is_reported() -> None:
    built = structure()
    built.add(TaskThank)
    inputs = {
        TaskGreet: {"name": "Ada"},
        "task.greet": {"name": "Ada"},
        "TaskThank": {"name": "Bob"},
        TaskThank: {"name": "Bob"},
    }

    with pytest.raises(StructureError) as caught:
        built.plan(inputs)

    assert [diagnostic.message for diagnostic in caught.value.diagnostics] == [
        "Inputs give the values of 'task.greet' twice: as TaskGreet and as 'task.greet'",
        "Inputs give the values of 'task.thank' twice: as 'TaskThank' and as TaskThank",
    ]


def test_a_catalog_that_lists_its_models_is_still_accepted_as_provider() -> None:
    class Catalog:
        def list_models(self) -> list[str]:
            return ["fast"]

    built = RunStructure(provider=Catalog())
    built.add(TaskGreet)

    assert built.validate() == ()
