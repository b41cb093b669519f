"""The output schema as a model is shown it: its name, every description cleaned.

A step's output class (`langtree.runtime.calls._schema`) keeps its fields' descriptions
and its nested node classes' docstrings as the user wrote them; their prose is
instructions for the model, but their command lines (``! ...``) and ``{placeholders}``
are LangTree's.
`tool_schema()` is the class's JSON schema with each description read as the prompt
reads it (`langtree.structure.commands._placeholders.PLACEHOLDER`): command lines go, a
``{name}`` becomes ``name`` (a schema is built once per step kind, so it holds no
values), a line holding only a placeholder goes, ``{{name}}`` becomes ``{name}``, and
every other brace stays as written, as in the prompt.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from langtree.dsl import TEMPLATE_VARIABLES, extract_commands
from langtree.errors import CommandParseError
from langtree.structure import PLACEHOLDER, call_signatures, display_name

__all__ = ["clean_description", "tool_name", "tool_schema"]

_NOT_A_NAME = re.compile(r"[^A-Za-z0-9_]+")

_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
_NOT_SCHEMAS = frozenset({"default", "enum", "const", "examples"})


def tool_name(node_class: type, fields: tuple[str, ...]) -> str:
    """The name of a step's output class, which models see as the tool's name: the
    node's class and the fields the step writes, as one name a provider accepts.

    Examples:
        >>> tool_name(type("TaskGreet", (), {}), ("greeting", "name"))
        'TaskGreet_greeting_name'
    """
    return _NOT_A_NAME.sub("_", f"{display_name(node_class)}_{'_'.join(fields)}")


def tool_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a model is shown for ``model``: every description cleaned, and no
    titles but the schema's own (the tool's name).

    Examples:
        >>> from pydantic import Field
        >>> from langtree import TreeNode
        >>> class Part(TreeNode):
        ...     \"\"\"
        ...     ! @sequential
        ...     One part of {topic}.
        ...     \"\"\"
        ...     text: str = Field(description="! resample(2)\\nThe text.")
        >>> schema = tool_schema(Part)
        >>> schema["properties"]["text"]["description"]
        'The text.'
        >>> schema["description"]
        'One part of topic.'
    """
    schema = model.model_json_schema()
    cleaned = _cleaned(schema)
    assert isinstance(cleaned, dict)
    # The top-level title names the tool; pydantic's other titles repeat each field's
    # name in every call's input tokens (LangChain drops them the same way for classes).
    cleaned["title"] = schema["title"]
    return cleaned


def clean_description(text: str) -> str:
    """A docstring or description without command lines and placeholders.

    Command lines go (``extract_commands(text).text``); a line holding only a
    placeholder goes; ``{PROMPT_SUBTREE}``/``{COLLECTED_CONTEXT}`` go; any other
    ``{name}`` becomes ``name``; ``{{name}}`` becomes ``{name}``; other braces stay.

    Examples:
        >>> clean_description("! resample(3)\\nRate {item}.\\n{COLLECTED_CONTEXT}")
        'Rate item.'
    """
    try:
        text = extract_commands(text, signatures=call_signatures()).text
    except CommandParseError:
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("!"))
    lines = []
    for line in text.splitlines():
        alone = PLACEHOLDER.fullmatch(line.strip())
        if alone is None or alone["name"] is None:
            lines.append(PLACEHOLDER.sub(_replacement, line).rstrip())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _replacement(match: re.Match[str]) -> str:
    if match["escaped"] is not None:
        return "{" + match["escaped"] + "}"
    name: str = match["name"]
    return "" if name in TEMPLATE_VARIABLES else name


def _cleaned(schema: object) -> object:
    if isinstance(schema, list):
        return [_cleaned(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result: dict[str, object] = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            result[key] = {name: _cleaned(item) for name, item in value.items()}
        elif key == "description" and isinstance(value, str):
            text = clean_description(value)
            if text:
                result[key] = text
        elif key in _NOT_SCHEMAS:
            result[key] = value
        elif key == "title" and isinstance(value, str):
            continue
        else:
            result[key] = _cleaned(value)
    return result
