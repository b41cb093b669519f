"""How a step asks its model for structured output.

Three methods, named as LangChain names them:

- ``"function_calling"``: the schema is bound as the one tool the model must call
  (``tool_choice`` names it); the answer is the tool call's arguments.
- ``"json_schema"``: the provider's native structured output (``response_format`` with the
  schema; Ollama's ``format``); the answer is JSON text.
- ``"json_mode"``: the form of the answer is in the prompt (`langtree.prompts._json_form`),
  and the provider's JSON mode is asked for when the model has one; the answer is JSON text.

``"auto"`` takes, for a chat model, the method its own ``with_structured_output``
defaults to (langchain-openai's ``ChatOpenAI``: ``"json_schema"``; ChatAnthropic:
``"function_calling"``), or ``"function_calling"`` when it has no choice and binds tools;
for a runnable that cannot bind anything (a user's own ``Runnable`` around a chat model),
``"json_mode"``, which needs nothing from the model but text.

The binding is made once per plan step. The provider-specific part is left to the model's
own ``bind_tools`` / ``with_structured_output``; of the latter, only the bound model (the
``raw`` branch of ``include_raw=True``) is kept, so each call is the model's own
``ainvoke`` and the answer is read once, by LangTree (`langtree.runtime.calls._replies`).
Wrappers are rebuilt around
the bound model: a ``RunnableBinding`` (``bind(...)``, ``with_retry(...)``,
``with_config(...)``) keeps its settings, ``with_fallbacks`` binds every model with the
method chosen for the first, and a configurable model (``configurable_fields`` /
``configurable_alternatives``) is bound per call, for the model its config selects.

A chat model bound by ``bind_tools`` or ``bind`` alone can also be called without
LangChain's run bookkeeping (`DirectCall`), for calls that no callback handler
would see.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import BaseMessage
from langchain_core.runnables import (
    Runnable,
    RunnableBinding,
    RunnableConfig,
    RunnableParallel,
    RunnableSequence,
    RunnableWithFallbacks,
)
from langchain_core.runnables.base import RunnableBindingBase
from langchain_core.runnables.config import ensure_config
from langchain_core.runnables.configurable import DynamicRunnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_core.utils.uuid import uuid7

from langtree.errors import ExecutionError
from langtree.prompts import json_instructions

__all__ = [
    "METHOD_CHOICES",
    "DirectCall",
    "Method",
    "MethodChoice",
    "StepRunnable",
    "StructuredBinding",
    "bind_structured",
    "primary_chat_model",
    "resolve_method",
]

Method = Literal["function_calling", "json_schema", "json_mode"]
"""A structured-output method LangChain's `with_structured_output()` knows."""
MethodChoice = Literal["auto", "function_calling", "json_schema", "json_mode"]
"""How a step asks its model for structured output (``ModelConfig(method=...)``):
``"auto"`` takes the chat model's own choice (see the module), the others name one."""
METHOD_CHOICES: tuple[str, ...] = get_args(MethodChoice)
"""The values `ModelConfig(method=...)` and the command line's `--method` accept."""

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
        direct: The same call without LangChain's run bookkeeping, when ``runnable`` is
            a chat model bound by ``bind_tools`` or ``bind`` alone (``None``: every call
            goes through ``runnable``).
    """

    runnable: StepRunnable
    method: Method
    tool_name: str | None = None
    instructions: str | None = None
    direct: DirectCall | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectCall:
    """A chat model bound by ``bind_tools`` or ``bind`` alone, called as its ``ainvoke``
    calls it when no callback handler is attached.

    ``RunnableBinding.ainvoke`` → ``BaseChatModel.ainvoke`` → ``agenerate`` merge the
    config twice, build a callback manager, format the messages and the invocation
    parameters for tracers, send the run's start and end events (the end in a task of
    its own) and run the generation in another task. With no handler all of that ends in
    a run manager without handlers, handed to ``_agenerate_with_cache``, which does the
    work that matters: the LLM cache, the model's rate limiter, streaming when the model
    asks for it, ``output_version``, the message id and the response metadata. A direct
    call builds that run manager (the run's tags and metadata and the model's own, but
    not the ``ls_*`` invocation parameters, which only tracers read; no handlers) and
    calls ``_agenerate_with_cache``; the answer is the same message. That method is
    private to langchain-core: ``tests/runtime/calls/test_direct_calls.py`` checks that both
    ways give the same answer, so that a langchain-core release that changes it fails
    there.

    Attributes:
        model: The chat model.
        stop: The bound stop sequences.
        options: The other bound keyword arguments (tools, ``tool_choice``,
            ``response_format``), as ``agenerate`` passes them on.
    """

    model: BaseChatModel
    stop: list[str] | None = None
    options: Mapping[str, Any]

    @classmethod
    def of(cls, runnable: Runnable[Any, Any]) -> DirectCall | None:
        """The direct call of ``runnable``, or ``None`` when it is not a chat model bound
        by ``bind``: other wrappers, a config of its own, or a model class that changes
        how ``ainvoke`` reaches ``agenerate``."""
        # A subclass of RunnableBinding that keeps its ainvoke (chat models' bind returns
        # one) only binds keyword arguments; one that overrides ainvoke may do anything.
        if not isinstance(runnable, RunnableBinding) or not _keeps_ainvoke(type(runnable)):
            return None
        model = runnable.bound
        # A binding with a config of its own merges it into each call: a direct call would
        # leave it out.
        if runnable.config or runnable.config_factories or not isinstance(model, BaseChatModel):
            return None
        if not _plain_chat_model(type(model)):
            return None
        options = dict(runnable.kwargs)
        stop = options.pop("stop", None)
        # agenerate takes the schema for tracers out of the options (the older name
        # only when the newer one is absent or empty).
        if not options.pop("ls_structured_output_format", None):
            options.pop("structured_output_format", None)
        return cls(model=model, stop=stop, options=options)

    def applies(self, messages: list[BaseMessage]) -> bool:
        """Whether these messages may be sent directly: the model has no callbacks of
        its own and is not verbose (their handlers see every call), and every message is
        text (``agenerate`` converts content blocks to the standard form first)."""
        model = self.model
        if model.callbacks or model.verbose:
            return False
        return all(isinstance(message.content, str) for message in messages)

    async def ainvoke(self, messages: list[BaseMessage], config: RunnableConfig) -> BaseMessage:
        """The model's answer to ``messages``, as ``ainvoke(messages, config)`` gives it.

        The caller has made sure that no handler observes the call (see
        `applies()`).
        """
        config = ensure_config(config)
        tags, metadata = config.get("tags", []), config.get("metadata", {})
        model = self.model
        # As ``agenerate`` sets up the model's run: the model's own tags and metadata join
        # the run's, but only the run's are handed down to its children.
        manager = AsyncCallbackManagerForLLMRun(
            run_id=config.pop("run_id", None) or uuid7(),
            handlers=[],
            inheritable_handlers=[],
            tags=[*tags, *(model.tags or [])],
            inheritable_tags=tags,
            metadata={**metadata, **(model.metadata or {})},
            inheritable_metadata=metadata,
        )
        result = await model._agenerate_with_cache(
            messages, stop=self.stop, run_manager=manager, **self.options
        )
        # One list of messages asks for one generation.
        return result.generations[0].message


def _keeps_ainvoke(binding: type[RunnableBinding[Any, Any]]) -> bool:
    return binding.ainvoke is RunnableBinding.ainvoke


def _plain_chat_model(model: type[BaseChatModel]) -> bool:
    """Whether ``ainvoke`` reaches ``_agenerate_with_cache`` through BaseChatModel's own
    ``agenerate_prompt`` and ``agenerate`` (and a langchain-core without that private
    method gets every call through ``ainvoke``)."""
    return (
        hasattr(BaseChatModel, "_agenerate_with_cache")
        and model.ainvoke is BaseChatModel.ainvoke
        and model.agenerate_prompt is BaseChatModel.agenerate_prompt
        and model.agenerate is BaseChatModel.agenerate
    )


def bind_structured(
    model: Runnable[Any, Any], schema: Mapping[str, Any], method: MethodChoice = "auto"
) -> StructuredBinding:
    """Bind ``model`` to ``schema`` (a JSON schema with a ``title``) with ``method``.

    Raises:
        ExecutionError: The model does not offer the method.
    """
    chosen = resolve_method(model, method)
    # The tool's name as LangChain derives it from the schema: the name a reply's tool call
    # must carry to be read as the answer.
    name: str = convert_to_openai_tool(dict(schema))["function"]["name"]
    runnable = _bound(model, schema, chosen)
    return StructuredBinding(
        runnable=runnable,
        method=chosen,
        tool_name=name if chosen == "function_calling" else None,
        instructions=json_instructions(schema) if chosen == "json_mode" else None,
        direct=DirectCall.of(runnable),
    )


def resolve_method(model: Runnable[Any, Any], choice: MethodChoice) -> Method:
    """The method ``"auto"`` stands for with this model (see the module), or ``choice``."""
    if choice != "auto":
        return choice
    chat = primary_chat_model(model)
    # No chat model known inside: only the prompt can carry the form of the answer.
    if chat is None:
        return "json_mode"
    default = _default_method(type(chat))
    if default is not None:
        return default
    return "function_calling" if _binds_tools(chat) else "json_mode"


def primary_chat_model(model: Runnable[Any, Any]) -> BaseChatModel | None:
    """The chat model a runnable wraps first (for fallbacks, the first model), if known."""
    seen = 0
    # A bound on the depth: a wrapper that holds itself cannot hang the run.
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
    # A copy with only the bound model swapped keeps the wrapper's arguments, config and
    # retries.
    if isinstance(model, RunnableBindingBase):
        return model.model_copy(update={"bound": _bound(model.bound, schema, method)})
    # Every fallback with the first model's method: the answer is read one way (its tool
    # name, its JSON instructions) whichever model gave it.
    if isinstance(model, RunnableWithFallbacks):
        return model.model_copy(
            update={
                "runnable": _bound(model.runnable, schema, method),
                "fallbacks": [_bound(fallback, schema, method) for fallback in model.fallbacks],
            }
        )
    # Which model a configurable runnable is comes from each call's config only.
    if isinstance(model, DynamicRunnable):
        return _BoundPerCall(model, schema, method)
    # A user's runnable binds nothing, and the prompt carries the form of the answer.
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
            # The one tool, forced by name: a model that may choose answers in text instead.
            # ``ls_structured_output_format`` lets tracers show the call as structured
            # output, as ``with_structured_output`` would.
            return model.bind_tools(
                [dict(schema)],
                tool_choice=name,
                ls_structured_output_format={
                    "kwargs": {"method": "function_calling"},
                    "schema": dict(schema),
                },
            )
        # No ``bind_tools``: the model's ``with_structured_output`` may still call functions
        # its own way.
        except NotImplementedError:
            pass
    try:
        if method == "function_calling":
            chain = model.with_structured_output(dict(schema), include_raw=True)
        else:
            chain = model.with_structured_output(dict(schema), method=method, include_raw=True)
    except _UNSUPPORTED as error:
        # The prompt carries the form of the answer: a model without JSON mode is still
        # asked for JSON text, unbound.
        if method == "json_mode":
            return model
        raise ExecutionError(
            f"{type(model).__name__!r} does not offer structured output with method "
            f"{method!r}: {error}\n"
            "  hint: choose another method; 'json_mode' works with every chat model: "
            "LLMProvider({'key': ModelConfig(model, method='json_mode')})"
        ) from error
    # The bound model alone when it can be had, so that LangTree reads each answer once;
    # a chain of another shape is called whole, and its dict read.
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
            # Bounded: a config that builds a new model for every call would otherwise grow
            # the cache for the run's whole life.
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
    # Read from the signature, where each integration states its default.
    parameter = inspect.signature(model_class.with_structured_output).parameters.get("method")
    default = parameter.default if parameter is not None else None
    return default if default in get_args(Method) else None


def _binds_tools(model: BaseChatModel) -> bool:
    return type(model).bind_tools is not BaseChatModel.bind_tools
