"""Deterministic example values for JSON schemas: what ``FakeChatModel`` answers by default.

A value is built from the schema alone, so the same schema always gets the same value:

- a string is the field's name and a number (``"title 1"``), the name cut or the text
  padded with ``x`` to fit ``minLength``/``maxLength``; a ``format`` (date, time, UUID,
  URL, address...) gets a fixed valid example, a ``pattern`` a string that matches it
  (best effort);
- a number is the element's position (1 for a single value) moved inside
  ``minimum``/``maximum`` (exclusive too) onto a ``multipleOf``;
- ``enum`` takes its members in turn (the first for a single value), ``const`` its value,
  a boolean is ``True``;
- an array has two elements unless ``minItems``/``maxItems`` say otherwise, element *i*
  built with number *i*; ``prefixItems`` (tuples) are filled in order;
- an object fills every property; ``$ref`` is resolved against ``$defs``; ``anyOf`` and
  ``oneOf`` take their first branch that is not ``null``.

A schema that says nothing (``{}``) is where LangChain cut a recursive model when it inlined
the references, or where a ``$ref`` comes back to a model already being built: the smallest
value is chosen there (``null`` in a union, no elements in a list, an optional property
left out), so recursive models still validate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import pydantic_core

from langtree.testing._patterns import example_match

__all__ = ["example_value"]

_ARRAY_LENGTH = 2
_FORMATS = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "12:00:00",
    "duration": "PT1H",
    "email": "user{index}@example.com",
    "idn-email": "user{index}@example.com",
    "uri": "https://example.com/{index}",
    "iri": "https://example.com/{index}",
    "uri-reference": "https://example.com/{index}",
    "hostname": "example.com",
    "ipv4": "192.0.2.{index}",
    "ipv6": "2001:db8::{index}",
    "ipvanyaddress": "192.0.2.{index}",
    "ipv4interface": "192.0.2.{index}/32",
    "ipv6interface": "2001:db8::{index}/128",
    "ipvanyinterface": "192.0.2.{index}/32",
    "ipv4network": "192.0.2.0/24",
    "ipv6network": "2001:db8::/32",
    "ipvanynetwork": "192.0.2.0/24",
}
_UUID_VERSIONS = {"uuid": 4, "uuid1": 1, "uuid3": 3, "uuid4": 4, "uuid5": 5}


def example_value(schema: Mapping[str, object], *, label: str = "value") -> object:
    """A value valid for a JSON schema, the same every time.

    Args:
        schema: A JSON schema (with ``$defs`` where it uses ``$ref``), e.g. a pydantic
            model's ``model_json_schema()`` or the ``parameters`` of a LangChain tool.
        label: The text that strings start with when the schema is not an object.

    Returns:
        A JSON-compatible value: dicts, lists, strings, numbers, booleans or ``None``.

    Examples:
        >>> example_value({"type": "object", "properties": {
        ...     "title": {"type": "string"}, "score": {"type": "integer", "minimum": 5},
        ...     "tags": {"type": "array", "items": {"type": "string"}}}})
        {'title': 'title 1', 'score': 5, 'tags': ['tags 1', 'tags 2']}
    """
    return _Examples(schema).value(schema, label=label, index=1)


class _Examples:
    """Builds values for the schemas under one root, tracking the ``$ref`` being built."""

    def __init__(self, root: Mapping[str, object]) -> None:
        self.root = root
        self.building: list[str] = []

    def value(self, schema: object, *, label: str, index: int) -> object:
        if not isinstance(schema, Mapping) or self.unknown(schema):
            return None
        reference = schema.get("$ref")
        if isinstance(reference, str):
            return self.referenced(reference, schema, label=label, index=index)
        if isinstance(schema.get("allOf"), list):
            return self.value(self.merged(schema), label=label, index=index)
        return self.direct(schema, label=label, index=index)

    def direct(self, schema: Mapping[str, object], *, label: str, index: int) -> object:
        if "const" in schema:
            return schema["const"]
        members = schema.get("enum")
        if isinstance(members, list) and members:
            return members[(index - 1) % len(members)]
        branches = schema.get("anyOf", schema.get("oneOf"))
        if isinstance(branches, list) and branches:
            return self.value(self.branch(branches), label=label, index=index)
        kind = _type_of(schema)
        if kind in ("integer", "number"):
            return _number(schema, integer=kind == "integer", index=index)
        if kind == "string":
            return self.string(schema, label=label, index=index)
        if kind == "array":
            return self.array(schema, label=label)
        if kind == "object":
            return self.dictionary(schema, index=index)
        return True if kind == "boolean" else None

    def referenced(
        self, reference: str, schema: Mapping[str, object], *, label: str, index: int
    ) -> object:
        target = {**self.resolve(reference), **{k: v for k, v in schema.items() if k != "$ref"}}
        self.building.append(reference)
        try:
            return self.value(target, label=label, index=index)
        finally:
            self.building.pop()

    def resolve(self, reference: str) -> Mapping[str, object]:
        node: object = self.root
        for part in reference.removeprefix("#").strip("/").split("/"):
            if not part:
                continue
            key = part.replace("~1", "/").replace("~0", "~")
            node = node.get(key) if isinstance(node, Mapping) else None
        return node if isinstance(node, Mapping) else {}

    def merged(self, schema: Mapping[str, object]) -> dict[str, object]:
        merged: dict[str, object] = {}
        for part in _list(schema.get("allOf")):
            if isinstance(part, Mapping):
                reference = part.get("$ref")
                merged.update(self.resolve(reference) if isinstance(reference, str) else part)
        merged.update((key, value) for key, value in schema.items() if key != "allOf")
        return merged

    def unknown(self, schema: object) -> bool:
        """A schema that says nothing, or a ``$ref`` back to a model being built."""
        if not isinstance(schema, Mapping):
            return schema is True
        if not schema:
            return True
        return schema.get("$ref") in self.building

    def branch(self, branches: Sequence[object]) -> object:
        useful = [b for b in branches if not _is_null(b) and not self.unknown(b)]
        if useful:
            return useful[0]
        return next((b for b in branches if _is_null(b)), branches[0])

    def string(self, schema: Mapping[str, object], *, label: str, index: int) -> str:
        shortest, longest = _count(schema.get("minLength")), _limit(schema.get("maxLength"))
        content = schema.get("contentSchema")
        if isinstance(content, Mapping):
            json = pydantic_core.to_json(self.value(content, label=label, index=index))
            return json.decode()
        form = schema.get("format")
        if isinstance(form, str) and form in _UUID_VERSIONS:
            return f"00000000-0000-{_UUID_VERSIONS[form]}000-8000-{index:012d}"
        if isinstance(form, str) and form in _FORMATS:
            return _FORMATS[form].format(index=index)
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            matched = example_match(pattern, shortest=shortest, longest=longest)
            if matched is not None:
                return matched
        return _fitted(label, str(index), shortest, longest)

    def array(self, schema: Mapping[str, object], *, label: str) -> list[object]:
        items, prefix = schema.get("items", {}), _list(schema.get("prefixItems"))
        shortest, longest = _count(schema.get("minItems")), _limit(schema.get("maxItems"))
        count = max(shortest, len(prefix)) if prefix else _ARRAY_LENGTH
        if not prefix and self.unknown(items):
            count = 0
        count = max(count, shortest)
        if longest is not None:
            count = min(count, longest)
        element = [prefix[i] if i < len(prefix) else items for i in range(count)]
        return [self.value(s, label=label, index=i + 1) for i, s in enumerate(element)]

    def dictionary(self, schema: Mapping[str, object], *, index: int) -> dict[str, object]:
        properties = schema.get("properties")
        required = set(_list(schema.get("required")))
        values: dict[str, object] = {}
        for name, subschema in properties.items() if isinstance(properties, Mapping) else ():
            if name in required or not (self.unknown(subschema) or self.cyclic(subschema)):
                values[str(name)] = self.value(subschema, label=str(name), index=index)
        extra = schema.get("additionalProperties")
        if not values and isinstance(extra, Mapping) and not self.unknown(extra):
            values.update(self.entries(schema, extra))
        return values

    def cyclic(self, schema: object) -> bool:
        """A union whose every non-null branch comes back to a model being built."""
        branches = schema.get("anyOf") if isinstance(schema, Mapping) else None
        return isinstance(branches, list) and all(_is_null(b) or self.unknown(b) for b in branches)

    def entries(
        self, schema: Mapping[str, object], values: Mapping[str, object]
    ) -> dict[str, object]:
        names = schema.get("propertyNames", {"type": "string"})
        count = max(1, _count(schema.get("minProperties")))
        limit = _limit(schema.get("maxProperties"))
        count = count if limit is None else min(count, limit)
        entries: dict[str, object] = {}
        for i in range(1, count + 1):
            key = self.value(names if names else {"type": "string"}, label="key", index=i)
            entries[str(key)] = self.value(values, label=str(key), index=i)
        return entries


def _fitted(label: str, number: str, shortest: int, longest: int | None) -> str:
    """``"label number"``, padded with ``x`` or with the label cut to fit the lengths."""
    text = f"{label} {number}"
    if longest is not None and len(text) > longest:
        cut = label[: max(0, longest - len(number) - 1)]
        text = f"{cut} {number}" if cut else number[:longest]
    return text.ljust(shortest, "x")


def _number(schema: Mapping[str, object], *, integer: bool, index: int) -> int | float:
    low, low_open = _bound(schema, "minimum", "exclusiveMinimum", lower=True)
    high, high_open = _bound(schema, "maximum", "exclusiveMaximum", lower=False)
    step = _fraction(schema.get("multipleOf"))
    if integer:
        step = Fraction(step.numerator) if step else Fraction(1)
    value = _multiple(step or Fraction(1), low, low_open, high, high_open, Fraction(index))
    if value is None and not step:
        value = _inside(low, high, Fraction(index))
    if value is None:
        value = Fraction(index)
    return int(value) if integer else float(value)


def _multiple(
    step: Fraction,
    low: Fraction | None,
    low_open: bool,
    high: Fraction | None,
    high_open: bool,
    preferred: Fraction,
) -> Fraction | None:
    """The multiple of ``step`` inside the bounds nearest to ``preferred``."""
    first = None if low is None else math.ceil(low / step) + (low_open and low % step == 0)
    last = None if high is None else math.floor(high / step) - (high_open and high % step == 0)
    chosen = round(preferred / step)
    if first is not None:
        chosen = max(chosen, first)
    if last is not None:
        chosen = min(chosen, last)
    if first is not None and last is not None and first > last:
        return None
    return chosen * step


def _inside(low: Fraction | None, high: Fraction | None, preferred: Fraction) -> Fraction:
    """A value strictly between open bounds that admit no whole number."""
    if low is not None and high is not None:
        return (low + high) / 2
    if low is not None:
        return low + 1
    return high - 1 if high is not None else preferred


def _bound(
    schema: Mapping[str, object], closed: str, open_: str, *, lower: bool
) -> tuple[Fraction | None, bool]:
    """The tighter of a closed and an open bound, and whether it is open."""
    candidates = [
        (value, key == open_)
        for key in (closed, open_)
        if (value := _fraction(schema.get(key))) is not None
    ]
    if not candidates:
        return None, False
    values = [value for value, _ in candidates]
    best = max(values) if lower else min(values)
    return best, any(value == best and is_open for value, is_open in candidates)


def _fraction(value: object) -> Fraction | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return Fraction(str(value)) if isinstance(value, float) else Fraction(value)


def _type_of(schema: Mapping[str, object]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if isinstance(kind, str):
        return kind
    if "properties" in schema or "additionalProperties" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    return None


def _is_null(schema: object) -> bool:
    return isinstance(schema, Mapping) and schema.get("type") == "null"


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else []


def _count(value: object) -> int:
    """A ``min*`` keyword's value (0 when absent)."""
    return _limit(value) or 0


def _limit(value: object) -> int | None:
    """A ``max*`` keyword's value (``None`` when absent)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
