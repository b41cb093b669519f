"""Names the DSL reserves, and why a variable cannot take them.

Assembly variables (``! name=value``) cannot be named ``true``, ``false`` or ``together``
(they read as a value or a command), after a built-in command (``! llm="fast"`` looks
like a call and would silently call nothing), or after a template variable: the
specification's ``{PROMPT_SUBTREE}`` and ``{COLLECTED_CONTEXT}`` "cannot be used as
Assembly Variables or user-defined Runtime Variables". Runtime variables (``{name}``, and
the ``prompt.name`` targets that define them) also cannot contain ``__``, which LangTree
uses in their internal names, and upper-case names are left to template variables
(DESIGN D9).
"""

from __future__ import annotations

from langtree.dsl._signatures import Signatures

__all__ = ["KEYWORDS", "TEMPLATE_VARIABLES", "assembly_name_problem", "reserved_runtime_name"]

KEYWORDS = ("true", "false", "together")
"""Words that read as a value or a command wherever a name could stand."""

TEMPLATE_VARIABLES = frozenset({"PROMPT_SUBTREE", "COLLECTED_CONTEXT"})
"""The placeholders LangTree fills itself: the next level of the prompt, and the context."""


def assembly_name_problem(name: str, signatures: Signatures) -> tuple[str, str] | None:
    """Why ``name`` cannot name an assembly variable (a message and a hint), or ``None``.

    Args:
        name: The variable's name.
        signatures: The call-style commands, whose names a variable cannot take.

    Examples:
        >>> assembly_name_problem("PROMPT_SUBTREE", {})[0]
        "'PROMPT_SUBTREE' is a template variable and cannot be an assembly variable"
        >>> assembly_name_problem("tone", {}) is None
        True
    """
    if name in KEYWORDS:
        return f"{name!r} is a reserved word and cannot be a variable name", "choose another name"
    if name in TEMPLATE_VARIABLES:
        return (
            f"{name!r} is a template variable and cannot be an assembly variable",
            f"choose another name: LangTree fills {{{name}}} itself",
        )
    signature = signatures.get(name)
    if signature is not None:
        return (
            f"{name!r} is a built-in command and cannot be a variable name",
            f"to call it, write {signature.usage}; otherwise choose another name",
        )
    return None


def reserved_runtime_name(name: str) -> str | None:
    """Why a runtime variable cannot be called ``name``, said of the name; ``None`` if it can.

    Examples:
        >>> reserved_runtime_name("TITLE")
        'is upper-case, and upper-case names are reserved for template variables'
        >>> reserved_runtime_name("title") is None
        True
    """
    if name in TEMPLATE_VARIABLES:
        return f"names the template variable {{{name}}}, which LangTree fills itself"
    if "__" in name:
        return "contains '__', which LangTree reserves"
    if name.isupper():
        return "is upper-case, and upper-case names are reserved for template variables"
    return None
