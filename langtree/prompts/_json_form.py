"""JSON mode's instructions: the shape of the answer, written as a model can copy it.

In JSON mode (``"json_mode"``) the schema travels in the prompt, appended to the step's
last human message (`add_instructions()`). Shown a JSON schema, small models answer
with a JSON schema; shown the *form* of the answer, they fill it in. So the prompt holds
the form, built from the schema: the keys in order, and for each value what it may be.

| schema | form |
|---|---|
| an object with properties | ``{"key": <value>, ...}`` |
| a string | ``"<text>"`` (``"<date-time>"`` etc. with a ``format``) |
| an enum, a const | the values as JSON, joined by `` | `` |
| an integer, a number | ``<integer>``, ``<number>`` |
| a boolean, null | ``true | false``, ``null`` |
| an array | ``[<item>, ...]`` |
| ``anyOf``/``oneOf`` | the forms joined by `` | `` |
| a map (``additionalProperties``) | ``{"<key>": <value>, ...}`` |

``$ref`` is followed into the schema's ``$defs``; a schema nested deeper than
``_DEEPEST`` levels (a recursive model) is shown as ``{...}``. Descriptions are not
repeated: the prompt already holds every field's description.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

__all__ = ["add_instructions", "asks_for_json", "json_form", "json_instructions"]

_DEEPEST = 8
_INSTRUCTIONS = "Answer with one JSON object, and nothing else, in this form:"
_SCALARS = {"integer": "<integer>", "number": "<number>", "boolean": "true | false", "null": "null"}


def json_form(schema: Mapping[str, Any]) -> str:
    """The form of an answer that follows ``schema``.

    Examples:
        >>> json_form({
        ...     "type": "object",
        ...     "properties": {
        ...         "rating": {"enum": ["BAD", "OK", "GOOD"]},
        ...         "tags": {"type": "array", "items": {"type": "string"}},
        ...         "score": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        ...     },
        ... })
        '{"rating": "BAD" | "OK" | "GOOD", "tags": ["<text>", ...], "score": <integer> | null}'
    """
    return _Form(schema.get("$defs", {})).of(schema, 0)


class _Form:
    """Writes forms, following ``$ref`` into one schema's definitions."""

    def __init__(self, definitions: Mapping[str, Any]) -> None:
        self.definitions = definitions

    def of(self, schema: Mapping[str, Any], depth: int) -> str:
        if depth > _DEEPEST:
            return "{...}"
        reference = schema.get("$ref")
        if isinstance(reference, str):
            return self.of(self.definitions.get(reference.rsplit("/", 1)[-1], {}), depth + 1)
        if "const" in schema:
            return json.dumps(schema["const"], ensure_ascii=False)
        if isinstance(schema.get("enum"), list):
            return " | ".join(json.dumps(value, ensure_ascii=False) for value in schema["enum"])
        options = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(options, list):
            return " | ".join(dict.fromkeys(self.of(option, depth + 1) for option in options))
        return self._typed(schema, depth)

    def _typed(self, schema: Mapping[str, Any], depth: int) -> str:
        kind = schema.get("type")
        if isinstance(kind, list):
            return " | ".join(self._typed({**schema, "type": one}, depth) for one in kind)
        if kind == "string":
            return f'"<{schema.get("format", "text")}>"'
        if kind in _SCALARS:
            return _SCALARS[kind]
        if kind == "array":
            return f"[{self.of(schema.get('items', {}), depth + 1)}, ...]"
        if kind == "object" or "properties" in schema:
            return self._object(schema, depth)
        return "<any JSON value>"

    def _object(self, schema: Mapping[str, Any], depth: int) -> str:
        properties = schema.get("properties")
        if isinstance(properties, Mapping) and properties:
            pairs = (
                f"{json.dumps(name, ensure_ascii=False)}: {self.of(value, depth + 1)}"
                for name, value in properties.items()
            )
            return "{" + ", ".join(pairs) + "}"
        values = schema.get("additionalProperties")
        value = self.of(values, depth + 1) if isinstance(values, Mapping) else "<any JSON value>"
        return '{"<key>": ' + value + ", ...}"


def json_instructions(schema: Mapping[str, Any]) -> str:
    """The text that asks for JSON following ``schema`` (``"json_mode"``): the answer's
    form rather than the schema itself, which small models copy instead of following
    (see the module).

    Examples:
        >>> schema = {"properties": {"title": {"type": "string"}, "year": {"type": "integer"}}}
        >>> print(json_instructions(schema))
        Answer with one JSON object, and nothing else, in this form:
        {"title": "<text>", "year": <integer>}
    """
    return f"{_INSTRUCTIONS}\n{json_form(schema)}"


def asks_for_json(text: str) -> bool:
    """Whether ``text`` holds the instructions of `json_instructions()`."""
    return _INSTRUCTIONS in text


def add_instructions(messages: tuple[BaseMessage, ...], text: str) -> tuple[BaseMessage, ...]:
    """The messages with ``text`` as a new paragraph of the last human message.

    Appending keeps the roles alternating, which some chat templates require.
    """
    at = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    if at < 0:
        return (*messages, HumanMessage(content=text))
    last = messages[at]
    content: str | list[str | dict[Any, Any]]
    if isinstance(last.content, str):
        kept = last.content.rstrip()
        content = f"{kept}\n\n{text}" if kept else text
    else:
        content = [*last.content, {"type": "text", "text": text}]
    return (*messages[:at], last.model_copy(update={"content": content}), *messages[at + 1 :])
