"""Which bound tool a chat model calls, as provider models decide it.

Shared by LangTree's own chat models (the offline fake and the embedded local model), so
both read ``bind_tools(..., tool_choice=...)`` the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.utils.function_calling import convert_to_openai_tool

from langtree.errors import ExecutionError

__all__ = ["chosen_tool"]


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
