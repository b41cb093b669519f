"""The base of LangTree's own chat models: structured output as provider models offer it.

Shared by the offline fake and the embedded local model, so both take the three
structured-output methods (`langtree.runtime.calls._methods`) the way provider chat models
do: ``bind_tools(..., tool_choice=...)`` for ``"function_calling"``, and
``with_structured_output(schema, method=...)`` binding an OpenAI-style
``response_format`` for ``"json_schema"`` and ``"json_mode"``. A model reads what a call
asks for with `requested_output()`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.output_parsers import JsonOutputParser, PydanticOutputParser
from langchain_core.runnables import Runnable, RunnableMap, RunnablePassthrough
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel

from langtree.errors import ExecutionError
from langtree.prompts import asks_for_json
from langtree.runtime.calls._methods import Method

__all__ = ["RequestedOutput", "StructuredChatModel", "chosen_tool", "requested_output"]


class StructuredChatModel(BaseChatModel):
    """A chat model that binds tools in OpenAI's format and offers every structured-output
    method, as provider chat models do."""

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools in OpenAI's format.

        Args:
            tools: Pydantic classes, TypedDicts, JSON schemas, functions or tools.
            tool_choice: A tool's name, ``"any"``/``"required"``/``"auto"`` (the first
                tool) or ``"none"`` (a text reply).
            **kwargs: Further keyword arguments bound to the model.

        Returns:
            The model with ``tools`` and ``tool_choice`` bound.
        """
        # Converted once, here: `requested_output()` then reads one form whatever was bound.
        converted = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=converted, tool_choice=tool_choice, **kwargs)

    def with_structured_output(
        self,
        schema: dict[str, Any] | type,
        *,
        method: Method = "function_calling",
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
        """The model asked for output following ``schema``, by ``method``.

        ``"function_calling"`` binds the schema as the tool to call (LangChain's own
        implementation); ``"json_schema"`` binds ``response_format`` with the schema, and
        ``"json_mode"`` binds ``response_format={"type": "json_object", "schema": ...}``
        (llama.cpp's form of JSON mode with a schema; provider models need the schema in
        the prompt instead). The answer is parsed into the pydantic class, or a dict for
        a JSON schema.

        Raises:
            ValueError: ``method`` is none of the three.
        """
        if method == "function_calling":
            return super().with_structured_output(schema, include_raw=include_raw, **kwargs)
        if method not in ("json_schema", "json_mode"):
            raise ValueError(f"Unknown structured-output method {method!r}")
        function = convert_to_openai_tool(schema)["function"]
        parameters = function.get("parameters", {})
        response_format: dict[str, Any] = {"type": "json_object", "schema": parameters}
        if method == "json_schema":
            json_schema = {"name": function["name"], "schema": parameters}
            response_format = {"type": "json_schema", "json_schema": json_schema}
        # ``ls_structured_output_format`` as provider models bind it: tracers show the call
        # as structured output, and `DirectCall` takes it out as ``agenerate`` does.
        bound = self.bind(
            response_format=response_format,
            ls_structured_output_format={"kwargs": {"method": method}, "schema": schema},
        )
        parser = (
            PydanticOutputParser(pydantic_object=schema)
            if isinstance(schema, type) and issubclass(schema, BaseModel)
            else JsonOutputParser()
        )
        if not include_raw:
            return bound | parser
        parsed = RunnablePassthrough.assign(
            parsed=itemgetter("raw") | parser, parsing_error=lambda _: None
        )
        unparsed = RunnablePassthrough.assign(parsed=lambda _: None)
        # The shape of LangChain's own integrations, ``RunnableMap(raw=...) | ...``: a parse
        # failure lands in ``parsing_error``, and `langtree.runtime.calls._methods` unwraps
        # the ``raw`` branch as it does a provider model's.
        return RunnableMap(raw=bound) | parsed.with_fallbacks(
            [unparsed], exception_key="parsing_error"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestedOutput:
    """What structured output a call asks for.

    Attributes:
        method: How it is asked for.
        schema: The JSON schema of the output (``None``: JSON mode whose schema the call
            does not carry, e.g. LangTree's JSON instructions in the prompt of a model
            behind a runnable that binds nothing).
        tool_name: The tool to call (``"function_calling"``).
    """

    method: Method
    schema: Mapping[str, Any] | None
    tool_name: str | None = None


def requested_output(
    options: Mapping[str, object], messages: Sequence[BaseMessage]
) -> RequestedOutput | None:
    """What a call's options (bound tools, ``response_format``) ask for; ``None``: text.

    Raises:
        ExecutionError: ``tool_choice`` names no bound tool, or ``response_format`` is
            not one of OpenAI's forms.
    """
    tool = chosen_tool(options.get("tools"), options.get("tool_choice"))
    if tool is not None:
        return RequestedOutput(
            method="function_calling",
            schema=tool.get("parameters", {"type": "object"}),
            tool_name=tool["name"],
        )
    response_format = options.get("response_format")
    kind = response_format.get("type") if isinstance(response_format, Mapping) else None
    if response_format is None or kind == "text":
        return _prompted(messages)
    if kind == "json_schema":
        assert isinstance(response_format, Mapping)
        described = response_format.get("json_schema")
        schema = described.get("schema") if isinstance(described, Mapping) else None
        return RequestedOutput(method="json_schema", schema=schema or {"type": "object"})
    if kind == "json_object":
        assert isinstance(response_format, Mapping)
        given = response_format.get("schema")
        return RequestedOutput(
            method="json_mode", schema=given if isinstance(given, Mapping) else None
        )
    raise ExecutionError(
        f"response_format must be {{'type': 'json_schema', ...}}, {{'type': 'json_object'}} "
        f"or {{'type': 'text'}}, got {response_format!r}"
    )


def _prompted(messages: Sequence[BaseMessage]) -> RequestedOutput | None:
    """JSON asked for by LangTree's instructions in the prompt alone (a model behind a
    runnable that binds nothing: the schema is not known), or ``None``: a text reply."""
    asked = any(asks_for_json(m.text) for m in messages if isinstance(m, HumanMessage))
    return RequestedOutput(method="json_mode", schema=None) if asked else None


def chosen_tool(tools: object, choice: object) -> Mapping[str, Any] | None:
    """The ``function`` part of the tool to call, or ``None`` for a text reply.

    ``None``, ``True``, ``"any"``, ``"required"`` and ``"auto"`` choose the first tool, a
    name (or ``{"function": {"name": ...}}``) that tool, and ``"none"`` a text reply.

    Raises:
        ExecutionError: ``choice`` names no bound tool.
    """
    functions: list[Mapping[str, Any]] = [
        convert_to_openai_tool(tool)["function"]
        for tool in (tools if isinstance(tools, list | tuple) else ())
    ]
    # OpenAI's dict form of a choice names the tool as a plain name does.
    if isinstance(choice, Mapping):
        choice = choice.get("function", {}).get("name")
    if not functions or choice == "none":
        return None
    if choice in (None, True, "any", "required", "auto"):
        return functions[0]
    named = next((function for function in functions if function["name"] == choice), None)
    if named is None:
        names = [function["name"] for function in functions]
        raise ExecutionError(f"tool_choice {choice!r} names none of the bound tools {names!r}")
    return named
