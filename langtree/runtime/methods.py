"""How a step asks its model for structured output.

Three methods, named as LangChain names them:

- ``"function_calling"``: the schema is bound as the one tool the model must call
  (``tool_choice`` names it); the answer is the tool call's arguments.
- ``"json_schema"``: the provider's native structured output (``response_format`` with the
  schema; Ollama's ``format``); the answer is JSON text.
- ``"json_mode"``: the form of the answer is in the prompt (:mod:`langtree.runtime.json_mode`),
  and the provider's JSON mode is asked for when the model has one; the answer is JSON text.

``"auto"`` takes, for a chat model, the method its own ``with_structured_output``
defaults to (langchain-openai's ``ChatOpenAI``: ``"json_schema"``; ChatAnthropic:
``"function_calling"``), or ``"function_calling"`` when it has no choice and binds tools;
for a runnable that cannot bind anything (a user's own ``Runnable`` around a chat model),
``"json_mode"``, which needs nothing from the model but text.

The binding is made once per plan step. The provider-specific part is left to the model's
own ``bind_tools`` / ``with_structured_output``; of the latter, only the bound model (the
``raw`` branch of ``include_raw=True``) is kept, so each call is the model's own
``ainvoke`` and the answer is read once, by LangTree (:mod:`langtree.runtime.replies`).
Wrappers are rebuilt around
the bound model: a ``RunnableBinding`` (``bind(...)``, ``with_retry(...)``,
``with_config(...)``) keeps its settings, ``with_fallbacks`` binds every model with the
method chosen for the first, and a configurable model (``configurable_fields`` /
``configurable_alternatives``) is bound per call, for the model its config selects.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.runnables import (
    Runnable,
    RunnableConfig,
    RunnableParallel,
    RunnableSequence,
    RunnableWithFallbacks,
)
from langchain_core.runnables.base import RunnableBindingBase
from langchain_core.runnables.configurable import DynamicRunnable
from langchain_core.utils.function_calling import convert_to_openai_tool

from langtree.errors import ExecutionError
from langtree.runtime.json_mode import json_instructions

__all__ = [
    "METHOD_CHOICES",
    "Method",
    "MethodChoice",
    "StepRunnable",
    "StructuredBinding",
    "bind_structured",
    "primary_chat_model",
    "resolve_method",
]

Method = Literal["function_calling", "json_schema", "json_mode"]
MethodChoice = Literal["auto", "function_calling", "json_schema", "json_mode"]
METHOD_CHOICES: tuple[str, ...] = get_args(MethodChoice)

StepRunnable = Runnable[LanguageModelInput, Any]
"""What a step calls with its messages: a bound model (it returns the ``AIMessage``), or a
``with_structured_output(..., include_raw=True)`` chain (it returns a dict)."""

_UNSUPPORTED = (NotImplementedError, ValueError, TypeError)
"""What ``with_structured_output`` raises for a method a model does not offer."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StructuredBinding:
    """A model bound to one step's output schema.

    Attributes:
        runnable: What each call invokes with the step's messages.
        method: The method in use (never ``"auto"``).
        tool_name: The tool the answer must call (``"function_calling"``).
        instructions: Text appended to the last human message (``"json_mode"``).
    """

    runnable: StepRunnable
    method: Method
    tool_name: str | None = None
    instructions: str | None = None


def bind_structured(
    model: Runnable[Any, Any], schema: Mapping[str, Any], method: MethodChoice = "auto"
) -> StructuredBinding:
    """Bind ``model`` to ``schema`` (a JSON schema with a ``title``) with ``method``.

    Raises:
        ExecutionError: The model does not offer the method.
    """
    chosen = resolve_method(model, method)
    name: str = convert_to_openai_tool(dict(schema))["function"]["name"]
    return StructuredBinding(
        runnable=_bound(model, schema, chosen),
        method=chosen,
        tool_name=name if chosen == "function_calling" else None,
        instructions=json_instructions(schema) if chosen == "json_mode" else None,
    )


def resolve_method(model: Runnable[Any, Any], choice: MethodChoice) -> Method:
    """The method ``"auto"`` stands for with this model (see the module), or ``choice``."""
    if choice != "auto":
        return choice
    chat = primary_chat_model(model)
    if chat is None:
        return "json_mode"
    default = _default_method(type(chat))
    if default is not None:
        return default
    return "function_calling" if _binds_tools(chat) else "json_mode"


def primary_chat_model(model: Runnable[Any, Any]) -> BaseChatModel | None:
    """The chat model a runnable wraps first (for fallbacks, the first model), if known."""
    seen = 0
    while not isinstance(model, BaseChatModel) and seen < 32:
        seen += 1
        if isinstance(model, RunnableBindingBase):
            model = model.bound
        elif isinstance(model, RunnableWithFallbacks):
            model = model.runnable
        elif isinstance(model, DynamicRunnable):
            model = model.default
        else:
            return None
    return model if isinstance(model, BaseChatModel) else None


def _bound(model: Runnable[Any, Any], schema: Mapping[str, Any], method: Method) -> StepRunnable:
    """``model`` bound to ``schema``, wrappers rebuilt around the bound model."""
    if isinstance(model, BaseChatModel):
        return _bind_chat_model(model, schema, method)
    if isinstance(model, RunnableBindingBase):
        return model.model_copy(update={"bound": _bound(model.bound, schema, method)})
    if isinstance(model, RunnableWithFallbacks):
        return model.model_copy(
            update={
                "runnable": _bound(model.runnable, schema, method),
                "fallbacks": [_bound(fallback, schema, method) for fallback in model.fallbacks],
            }
        )
    if isinstance(model, DynamicRunnable):
        return _BoundPerCall(model, schema, method)
    if method == "json_mode":
        return model
    raise ExecutionError(
        f"A {type(model).__name__!r} cannot be bound to a schema with method {method!r}\n"
        "  hint: use method='json_mode' (the schema goes into the prompt), the default "
        "for runnables that are not chat models"
    )


def _bind_chat_model(
    model: BaseChatModel, schema: Mapping[str, Any], method: Method
) -> StepRunnable:
    if method == "function_calling":
        name: str = convert_to_openai_tool(dict(schema))["function"]["name"]
        try:
            return model.bind_tools(
                [dict(schema)],
                tool_choice=name,
                ls_structured_output_format={
                    "kwargs": {"method": "function_calling"},
                    "schema": dict(schema),
                },
            )
        except NotImplementedError:
            pass
    try:
        if method == "function_calling":
            chain = model.with_structured_output(dict(schema), include_raw=True)
        else:
            chain = model.with_structured_output(dict(schema), method=method, include_raw=True)
    except _UNSUPPORTED as error:
        if method == "json_mode":
            return model
        raise ExecutionError(
            f"{type(model).__name__!r} does not offer structured output with method "
            f"{method!r}: {error}\n"
            "  hint: choose another method; 'json_mode' works with every chat model: "
            "LLMProvider({'key': ModelConfig(model, method='json_mode')})"
        ) from error
    return _raw_branch(chain) or chain


def _raw_branch(chain: Runnable[Any, Any]) -> StepRunnable | None:
    """The bound model inside ``with_structured_output(..., include_raw=True)``.

    LangChain's integrations build that chain as ``RunnableMap(raw=bound_model) | parsers``;
    anything else is used whole.
    """
    if isinstance(chain, RunnableSequence) and isinstance(chain.first, RunnableParallel):
        branches = chain.first.steps__
        if list(branches) == ["raw"]:
            return branches["raw"]
    return None


class _BoundPerCall(Runnable[LanguageModelInput, Any]):
    """A configurable model, bound for the model each call's config selects."""

    def __init__(self, model: DynamicRunnable[Any, Any], schema: Mapping[str, Any], method: Method):
        self.model = model
        self.schema = schema
        self.method = method
        self._bound: dict[int, tuple[Runnable[Any, Any], StepRunnable]] = {}

    def _prepare(self, config: RunnableConfig | None) -> tuple[StepRunnable, RunnableConfig]:
        selected, config = self.model.prepare(config)
        known = self._bound.get(id(selected))
        if known is None or known[0] is not selected:
            # Keyed by identity; the model is kept so that its id stays its own.
            if len(self._bound) >= 64:
                self._bound.clear()
            known = (selected, _bound(selected, self.schema, self.method))
            self._bound[id(selected)] = known
        return known[1], config

    def invoke(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Any:
        runnable, config = self._prepare(config)
        return runnable.invoke(input, config, **kwargs)

    async def ainvoke(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Any:
        runnable, config = self._prepare(config)
        return await runnable.ainvoke(input, config, **kwargs)


def _default_method(model_class: type[BaseChatModel]) -> Method | None:
    """The ``method`` a chat model class's ``with_structured_output`` defaults to."""
    parameter = inspect.signature(model_class.with_structured_output).parameters.get("method")
    default = parameter.default if parameter is not None else None
    return default if default in get_args(Method) else None


def _binds_tools(model: BaseChatModel) -> bool:
    return type(model).bind_tools is not BaseChatModel.bind_tools
