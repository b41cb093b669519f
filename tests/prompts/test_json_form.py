"""JSON mode's instructions: the form of the answer, built from the step's JSON schema."""

from enum import Enum
from typing import Any

import pytest
from pydantic import BaseModel, Field

from langtree.prompts._json_form import json_form


class Mood(Enum):
    CALM = "calm"
    ANGRY = "angry"


class Quote(BaseModel):
    text: str
    source: str | None = None


class Section(BaseModel):
    heading: str
    mood: Mood
    score: float
    quotes: list[Quote]
    tags: dict[str, int] = Field(default_factory=dict)


class Node(BaseModel):
    name: str
    children: list["Node"] = []


FORMS = [
    pytest.param({"type": "string"}, '"<text>"', id="string"),
    pytest.param({"type": "string", "format": "date-time"}, '"<date-time>"', id="format"),
    pytest.param({"type": "integer"}, "<integer>", id="integer"),
    pytest.param({"type": "number"}, "<number>", id="number"),
    pytest.param({"type": "boolean"}, "true | false", id="boolean"),
    pytest.param({"type": "null"}, "null", id="null"),
    pytest.param({"type": ["string", "null"]}, '"<text>" | null', id="type-list"),
    pytest.param({"const": "fixed"}, '"fixed"', id="const"),
    pytest.param({"enum": ["a", 1, None]}, '"a" | 1 | null', id="enum"),
    pytest.param({"type": "array", "items": {"type": "integer"}}, "[<integer>, ...]", id="array"),
    pytest.param({"type": "array"}, "[<any JSON value>, ...]", id="array-of-anything"),
    pytest.param(
        {"type": "object", "additionalProperties": {"type": "integer"}},
        '{"<key>": <integer>, ...}',
        id="map",
    ),
    pytest.param({"type": "object"}, '{"<key>": <any JSON value>, ...}', id="open-object"),
    pytest.param({}, "<any JSON value>", id="anything"),
    pytest.param(
        {"anyOf": [{"type": "integer"}, {"type": "integer"}, {"type": "null"}]},
        "<integer> | null",
        id="any-of-without-repeats",
    ),
    pytest.param({"properties": {"ä": {"type": "string"}}}, '{"ä": "<text>"}', id="unicode-key"),
]


@pytest.mark.parametrize(("schema", "form"), FORMS)
def test_form_of_a_schema(schema: dict[str, Any], form: str) -> None:
    assert json_form(schema) == form


def test_form_follows_refs_into_the_definitions() -> None:
    assert json_form(Section.model_json_schema()) == (
        '{"heading": "<text>", "mood": "calm" | "angry", "score": <number>, '
        '"quotes": [{"text": "<text>", "source": "<text>" | null}, ...], '
        '"tags": {"<key>": <integer>, ...}}'
    )


def test_form_of_a_recursive_model_stops_at_a_depth() -> None:
    form = json_form(Node.model_json_schema())

    assert form.startswith('{"name": "<text>", "children": [{"name": "<text>", "children": [')
    assert form.count("{...}") == 1
