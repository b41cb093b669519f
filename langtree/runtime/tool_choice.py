"""Binding tools and choosing the one to call, as provider chat models do.

Shared by LangTree's own chat models (the offline fake and the embedded local model), so
both take ``bind_tools(..., tool_choice=...)`` the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from langtree.errors import ExecutionError

__all__ = ["ToolCallingChatModel", "chosen_tool"]


class ToolCallingChatModel(BaseChatModel):
    """A chat model that binds tools in OpenAI's format, as provider chat models do."""

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
        converted = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=converted, tool_choice=tool_choice, **kwargs)


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
