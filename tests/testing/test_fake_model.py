"""FakeChatModel: structured output through LangChain's own path, offline and deterministic.

Every test drives the model through LangChain's public interface (``with_structured_output``,
``invoke``/``ainvoke``/``abatch``/``stream``/``astream``), as LangTree's runtime will.
Async tests run their coroutine with ``asyncio.run``.
"""

import asyncio
import datetime
import decimal
import enum
import ipaddress
import re
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import AnyUrl, BaseModel, Field, Json, ValidationError, create_model

import langtree.testing
from langtree.errors import ExecutionError
from langtree.prompts._json_form import json_instructions
from langtree.testing import FakeChatModel, FakeRequest, example_value
from langtree.testing._patterns import example_match

PATH: RunnableConfig = {"metadata": {"langtree_node_path": "task.report.sections"}}


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Section(BaseModel):
    """A section."""

    heading: str
    color: Color
    score: int


class Report(BaseModel):
    """A report."""

    title: str
    sections: list[Section]
    summary: str | None = None
    kind: Literal["short", "long"]
    ratio: Annotated[float, Field(gt=0, lt=0.5)]


REPORT = Report(
    title="title 1",
    sections=[
        Section(heading="heading 1", color=Color.RED, score=1),
        Section(heading="heading 2", color=Color.GREEN, score=2),
    ],
    summary="summary 1",
    kind="short",
    ratio=0.25,
)


def structured(model: FakeChatModel, schema: type[BaseModel], **kwargs: Any) -> Any:
    return model.with_structured_output(schema, **kwargs)


def collect(iterator: Any) -> list[Any]:
    async def run() -> list[Any]:
        return [item async for item in iterator]

    return asyncio.run(run())


# ---------------------------------------------------------------------------------------
# Default answers: valid for the requested schema
# ---------------------------------------------------------------------------------------


class Node(BaseModel):
    value: int
    children: list["Node"]
    parent: "Node | None"


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = Field(ge=1, le=9)


class Dog(BaseModel):
    kind: Literal["dog"]


SHAPES = [
    pytest.param({"text": str, "count": int, "ratio": float, "flag": bool}, id="scalars"),
    pytest.param({"section": Section}, id="nested-model"),
    pytest.param({"sections": list[Section]}, id="list-of-models"),
    pytest.param({"color": Color, "colors": list[Color]}, id="enum"),
    pytest.param({"kind": Literal["a", "b"], "fixed": Literal["only"]}, id="literal"),
    pytest.param({"note": str | None, "later": int | None}, id="optional-required"),
    pytest.param({"name": Annotated[str, Field(min_length=12, max_length=14)]}, id="str-length"),
    pytest.param({"tiny": Annotated[str, Field(max_length=1)]}, id="str-max-one"),
    pytest.param({"code": Annotated[str, Field(pattern=r"^[A-Z]{3}-\d{4}$")]}, id="str-pattern"),
    pytest.param(
        {"n": Annotated[int, Field(gt=3, lt=10, multiple_of=4)]}, id="int-exclusive-multiple"
    ),
    pytest.param({"n": Annotated[int, Field(ge=100)], "m": Annotated[int, Field(le=-5)]}, id="int"),
    pytest.param({"x": Annotated[float, Field(gt=0, lt=0.01)]}, id="float-narrow"),
    pytest.param({"x": Annotated[float, Field(ge=2.5, multiple_of=0.1)]}, id="float-multiple"),
    pytest.param(
        {"items": Annotated[list[int], Field(min_length=3, max_length=4)]}, id="list-length"
    ),
    pytest.param({"one": Annotated[list[str], Field(max_length=1)]}, id="list-max-one"),
    pytest.param({"tags": set[str], "frozen": frozenset[int]}, id="sets"),
    pytest.param({"pair": tuple[int, str], "many": tuple[float, ...]}, id="tuples"),
    pytest.param({"scores": dict[str, int], "keyed": dict[Literal["a"], str]}, id="dicts"),
    pytest.param(
        {
            "at": datetime.datetime,
            "on": datetime.date,
            "clock": datetime.time,
            "span": datetime.timedelta,
        },
        id="dates",
    ),
    pytest.param(
        {
            "id": uuid.UUID,
            "url": AnyUrl,
            "ip": ipaddress.IPv4Address,
            "net": ipaddress.IPv6Network,
            "amount": decimal.Decimal,
            "blob": bytes,
        },
        id="formats",
    ),
    pytest.param({"payload": Json[list[int]]}, id="json-string"),
    pytest.param(
        {"pet": Annotated[Cat | Dog, Field(discriminator="kind")]}, id="discriminated-union"
    ),
    pytest.param({"node": Node}, id="recursive"),
    pytest.param({"anything": Any, "things": list[Any]}, id="any"),
]


def model_of(fields: Mapping[str, Any]) -> type[BaseModel]:
    definitions: dict[str, Any] = {name: (kind, ...) for name, kind in fields.items()}
    return create_model("Shape", **definitions)


@pytest.mark.parametrize("fields", SHAPES)
def test_structured_output_validates_against_the_model(fields: Mapping[str, Any]) -> None:
    schema = model_of(fields)

    assert isinstance(structured(FakeChatModel(), schema).invoke("x"), schema)


@pytest.mark.parametrize("fields", SHAPES)
def test_example_value_of_a_pydantic_schema_with_refs_validates(
    fields: Mapping[str, Any],
) -> None:
    schema = model_of(fields)

    schema.model_validate(example_value(schema.model_json_schema()))


def test_structured_output_is_pinned() -> None:
    assert structured(FakeChatModel(), Report).invoke("Write a report") == REPORT


def test_recursive_model_stops_at_the_first_level() -> None:
    answer = structured(FakeChatModel(), Node).invoke("x")

    assert answer == Node(value=1, children=[], parent=None)


@pytest.mark.parametrize(
    ("constraints", "expected"),
    [
        pytest.param({}, 1, id="unconstrained"),
        pytest.param({"ge": 5}, 5, id="minimum"),
        pytest.param({"gt": 5}, 6, id="exclusive-minimum"),
        pytest.param({"lt": 0}, -1, id="exclusive-maximum"),
        pytest.param({"ge": 10, "multiple_of": 4}, 12, id="multiple-above-minimum"),
        pytest.param({"multiple_of": 7}, 0, id="nearest-multiple"),
        pytest.param({"ge": -3, "le": -3}, -3, id="single-value"),
    ],
)
def test_integer_examples(constraints: dict[str, Any], expected: int) -> None:
    schema = model_of({"n": Annotated[int, Field(**constraints)]}).model_json_schema()

    assert example_value(schema) == {"n": expected}


@pytest.mark.parametrize(
    ("constraints", "expected"),
    [
        pytest.param({}, 1.0, id="unconstrained"),
        pytest.param({"gt": 0, "lt": 0.5}, 0.25, id="between-open-bounds"),
        pytest.param({"gt": 3.5}, 4.0, id="next-whole-number"),
        pytest.param({"ge": 2.5, "multiple_of": 0.1}, 2.5, id="multiple"),
        pytest.param({"gt": 0.3, "le": 0.35, "multiple_of": 0.05}, 0.35, id="open-multiple"),
    ],
)
def test_number_examples(constraints: dict[str, Any], expected: float) -> None:
    schema = model_of({"x": Annotated[float, Field(**constraints)]}).model_json_schema()

    assert example_value(schema) == {"x": expected}


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        pytest.param({"type": "string"}, "label 1", id="plain"),
        pytest.param({"type": "string", "minLength": 10}, "label 1xxx", id="padded"),
        pytest.param({"type": "string", "maxLength": 4}, "la 1", id="label-cut"),
        pytest.param({"type": "string", "maxLength": 1}, "1", id="number-only"),
        pytest.param({"type": "string", "maxLength": 0}, "", id="empty"),
        pytest.param({"type": "string", "pattern": r"^\d{3}$"}, "000", id="pattern"),
        pytest.param({"type": "string", "format": "date"}, "2024-01-01", id="date"),
        pytest.param(
            {"type": "string", "format": "uuid"},
            "00000000-0000-4000-8000-000000000001",
            id="uuid",
        ),
        pytest.param({"const": 3}, 3, id="const"),
        pytest.param({"enum": ["x", "y"]}, "x", id="enum"),
        pytest.param({"type": ["null", "integer"]}, 1, id="type-list"),
        pytest.param({"type": "boolean"}, True, id="boolean"),
        pytest.param({}, None, id="empty-schema"),
    ],
)
def test_leaf_examples(schema: dict[str, object], expected: object) -> None:
    assert example_value(schema, label="label") == expected


def test_array_elements_are_numbered_and_enums_take_turns() -> None:
    schema = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "tone": {"enum": ["warm", "cool"]}},
        },
    }

    assert example_value(schema, label="people") == [
        {"name": "name 1", "tone": "warm"},
        {"name": "name 2", "tone": "cool"},
    ]


def test_refs_resolve_against_defs_and_all_of_merges() -> None:
    schema = {
        "type": "object",
        "properties": {"inner": {"allOf": [{"$ref": "#/$defs/Inner"}], "description": "d"}},
        "required": ["inner"],
        "$defs": {"Inner": {"type": "object", "properties": {"v": {"type": "integer"}}}},
    }

    assert example_value(schema) == {"inner": {"v": 1}}


def test_optional_property_that_only_recurses_is_left_out() -> None:
    schema = {
        "$ref": "#/$defs/Node",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]},
                },
                "required": ["value"],
            }
        },
    }

    assert example_value(schema) == {"value": 1}


@pytest.mark.parametrize(
    ("pattern", "shortest", "longest", "expected"),
    [
        pytest.param(r"^[A-Z]{3}-\d{4}$", 0, None, "AAA-0000", id="classes-and-counts"),
        pytest.param(r"^[^abc]+$", 0, None, "0", id="negated-class"),
        pytest.param(r"^colou?r$", 6, None, "colour", id="optional-taken-for-length"),
        pytest.param(r"colou?r", 6, None, "colorx", id="unanchored-padded"),
        pytest.param(r"^(?P<y>\d{2})-(?P=y)$", 0, None, "00-00", id="group-reference"),
        pytest.param(r"^(ab|c)+$", 0, None, "ab", id="first-branch"),
        pytest.param(r"^\d{2,4}$", 6, None, None, id="length-impossible"),
        pytest.param(r"^\d+$", 0, 0, None, id="too-long"),
        pytest.param(r"\bword\b", 6, None, None, id="boundary-not-solved"),
        pytest.param(r"(", 0, None, None, id="invalid-pattern"),
    ],
)
def test_example_match(
    pattern: str, shortest: int, longest: int | None, expected: str | None
) -> None:
    assert example_match(pattern, shortest=shortest, longest=longest) == expected


def test_unmatched_pattern_falls_back_to_plain_text() -> None:
    schema = {"type": "string", "pattern": r"\bword\b", "minLength": 6}

    assert example_value(schema, label="w") == "w 1xxx"


# --- Random models (Hypothesis) ---------------------------------------------------------

PLAIN_TYPES = [
    str,
    int,
    float,
    bool,
    datetime.date,
    uuid.UUID,
    Color,
    Literal["a", "b"],
    list[str],
    dict[str, int],
    Section,
    list[Section],
    int | None,
    tuple[int, str],
    set[int],
]
PATTERNS = [r"^[a-z]+$", r"^\d{3}-\d{2}$", r"^(yes|no)$", r"^[A-F0-9]{8}$", r"x+y*z?"]


@st.composite
def bounded_ints(draw: st.DrawFn) -> Any:
    low = draw(st.integers(-1000, 1000))
    step = draw(st.none() | st.integers(1, 7))
    high = low + draw(st.integers(step or 0, 60))
    if draw(st.booleans()):
        return Annotated[int, Field(gt=low - 1, lt=high + 1, multiple_of=step)]
    return Annotated[int, Field(ge=low, le=high, multiple_of=step)]


@st.composite
def bounded_floats(draw: st.DrawFn) -> Any:
    low = draw(st.floats(-1000, 1000, allow_nan=False).map(lambda x: round(x, 3)))
    step = draw(st.none() | st.sampled_from([0.5, 0.25, 0.1, 2.0]))
    high = low + draw(st.floats(0.001, 100).map(lambda x: round(x, 3))) + 2 * (step or 0)
    if draw(st.booleans()):
        return Annotated[float, Field(gt=low, lt=high, multiple_of=step)]
    return Annotated[float, Field(ge=low, le=high, multiple_of=step)]


@st.composite
def bounded_strings(draw: st.DrawFn) -> Any:
    shortest = draw(st.integers(0, 20))
    longest = shortest + draw(st.integers(0, 20))
    if draw(st.booleans()):
        return Annotated[str, Field(pattern=draw(st.sampled_from(PATTERNS)))]
    return Annotated[str, Field(min_length=shortest, max_length=longest)]


@st.composite
def bounded_lists(draw: st.DrawFn) -> Any:
    shortest = draw(st.integers(0, 5))
    longest = shortest + draw(st.integers(0, 3))
    element: Any = draw(st.sampled_from([int, str, Section, Color]))
    return Annotated[list[element], Field(min_length=shortest, max_length=longest)]


FIELD_TYPES = st.one_of(
    st.sampled_from(PLAIN_TYPES),
    bounded_ints(),
    bounded_floats(),
    bounded_strings(),
    bounded_lists(),
)


@st.composite
def random_models(draw: st.DrawFn) -> type[BaseModel]:
    """A model of random fields, some of them a nested random model or a list of it."""
    inner_fields = draw(st.lists(FIELD_TYPES, max_size=3))
    inner: Any = model_of({f"g{i}": kind for i, kind in enumerate(inner_fields)})
    choices = FIELD_TYPES | st.sampled_from([inner, list[inner]])
    kinds = draw(st.lists(choices, min_size=1, max_size=6))
    return model_of({f"f{i}": kind for i, kind in enumerate(kinds)})


@given(random_models())
def test_random_models_get_valid_structured_output(schema: type[BaseModel]) -> None:
    assert isinstance(structured(FakeChatModel(), schema).invoke("x"), schema)


@given(random_models())
def test_random_models_get_valid_examples_from_their_own_schema(schema: type[BaseModel]) -> None:
    schema.model_validate(example_value(schema.model_json_schema()))


# ---------------------------------------------------------------------------------------
# Replies without tools
# ---------------------------------------------------------------------------------------


def test_without_tools_it_echoes_the_first_line_of_the_last_human_message() -> None:
    messages = [
        SystemMessage("Be brief."),
        HumanMessage("first question"),
        AIMessage("an answer"),
        HumanMessage("Summarise this\nand more lines"),
    ]

    assert FakeChatModel().invoke(messages).content == "Summarise this"


def test_without_a_human_message_the_reply_is_empty() -> None:
    assert FakeChatModel().invoke([SystemMessage("Be brief.")]).content == ""


@pytest.mark.parametrize(
    ("reply", "content"),
    [
        pytest.param("scripted text", "scripted text", id="text"),
        pytest.param({"a": 1}, '{"a":1}', id="dict-as-json"),
    ],
)
def test_without_tools_a_responder_gives_the_text(reply: Any, content: str) -> None:
    assert FakeChatModel(lambda request: reply).invoke("x").content == content


# ---------------------------------------------------------------------------------------
# Responders: their output is returned unvalidated
# ---------------------------------------------------------------------------------------

WRONG = {"title": 5, "sections": "none", "kind": "medium", "ratio": 2}


def test_responder_arguments_reach_the_tool_call_unchanged() -> None:
    raw = structured(FakeChatModel(lambda request: WRONG), Report, include_raw=True).invoke("x")

    assert raw["raw"].tool_calls[0]["args"] == WRONG


def test_invalid_responder_output_is_a_parsing_error_with_include_raw() -> None:
    raw = structured(FakeChatModel(lambda request: WRONG), Report, include_raw=True).invoke("x")

    assert raw["parsed"] is None
    assert isinstance(raw["parsing_error"], ValidationError)
    assert [error["loc"] for error in raw["parsing_error"].errors()] == [
        ("title",),
        ("sections",),
        ("kind",),
        ("ratio",),
    ]


def test_invalid_responder_output_raises_from_the_plain_parser() -> None:
    with pytest.raises(ValidationError, match="4 validation errors for Report"):
        structured(FakeChatModel(lambda request: WRONG), Report).invoke("x")


def test_text_reply_with_tools_bound_is_no_tool_call() -> None:
    """LangChain's parser then returns ``None`` without an error: the runtime must check."""
    model = FakeChatModel(lambda request: "I cannot do that")

    raw = structured(model, Report, include_raw=True).invoke("x")

    assert (raw["raw"].content, raw["raw"].tool_calls, raw["parsed"], raw["parsing_error"]) == (
        "I cannot do that",
        [],
        None,
        None,
    )


def test_arguments_that_are_not_an_object_are_an_invalid_tool_call() -> None:
    model = FakeChatModel(lambda request: [1, 2])  # type: ignore[arg-type,return-value]

    message = model.bind_tools([Report]).invoke("x")

    assert (message.tool_calls, [call["args"] for call in message.invalid_tool_calls]) == (
        [],
        ["[1,2]"],
    )


def test_reply_that_is_not_json_is_an_execution_error() -> None:
    model = FakeChatModel(lambda request: {"when": object()})

    with pytest.raises(ExecutionError, match="cannot send the responder's reply as JSON"):
        structured(model, Report).invoke("x")


def test_responder_gets_the_request_that_is_recorded() -> None:
    seen: list[FakeRequest] = []

    def respond(request: FakeRequest) -> dict[str, object]:
        seen.append(request)
        return {}

    model = FakeChatModel(respond)
    model.bind_tools([Report]).invoke("x")

    assert seen == model.calls


class ResponderError(Exception):
    pass


def test_responder_exceptions_propagate() -> None:
    def respond(request: FakeRequest) -> dict[str, object]:
        raise ResponderError("boom")

    with pytest.raises(ResponderError, match="boom"):
        structured(FakeChatModel(respond), Report).invoke("x")


async def async_respond(request: FakeRequest) -> dict[str, object]:
    await asyncio.sleep(0)
    return {**REPORT.model_dump(mode="json"), "title": f"async {request.fields[0]}"}


def test_async_responder_is_awaited_by_ainvoke() -> None:
    answer = asyncio.run(structured(FakeChatModel(async_respond), Report).ainvoke("x"))

    assert answer.title == "async title"


def test_async_responder_runs_on_the_sync_path_without_a_loop() -> None:
    assert structured(FakeChatModel(async_respond), Report).invoke("x").title == "async title"


def test_async_responder_on_the_sync_path_inside_a_loop_is_an_error() -> None:
    async def call_sync() -> None:
        structured(FakeChatModel(async_respond), Report).invoke("x")

    with pytest.raises(ExecutionError, match="call ainvoke/astream instead"):
        asyncio.run(call_sync())


# ---------------------------------------------------------------------------------------
# Tools and tool_choice
# ---------------------------------------------------------------------------------------


# The JSON schema of `Section`, as tools and response formats carry it.
SECTION_PARAMETERS = {
    "properties": {
        "heading": {"type": "string"},
        "color": {"enum": ["red", "green"], "type": "string"},
        "score": {"type": "integer"},
    },
    "required": ["heading", "color", "score"],
    "type": "object",
}


def test_bind_tools_binds_openai_tools_like_providers() -> None:
    bound = FakeChatModel().bind_tools([Section], tool_choice="any")

    assert bound.kwargs == {  # type: ignore[attr-defined]
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "Section",
                    "description": "A section.",
                    "parameters": SECTION_PARAMETERS,
                },
            }
        ],
        "tool_choice": "any",
    }


@pytest.mark.parametrize(
    ("choice", "tool"),
    [
        pytest.param(None, "Section", id="none-given"),
        pytest.param("any", "Section", id="any"),
        pytest.param("auto", "Section", id="auto"),
        pytest.param("Report", "Report", id="by-name"),
    ],
)
def test_tool_choice_picks_the_tool(choice: str | None, tool: str) -> None:
    message = FakeChatModel().bind_tools([Section, Report], tool_choice=choice).invoke("x")

    assert [call["name"] for call in message.tool_calls] == [tool]


def test_tool_choice_none_gives_text() -> None:
    message = FakeChatModel().bind_tools([Section], tool_choice="none").invoke("hi")

    assert (message.content, message.tool_calls) == ("hi", [])


def test_tool_choice_naming_no_tool_is_an_error() -> None:
    bound = FakeChatModel().bind_tools([Section], tool_choice="Missing")

    with pytest.raises(ExecutionError) as caught:
        bound.invoke("x")

    assert str(caught.value) == "tool_choice 'Missing' names none of the bound tools ['Section']"


# ---------------------------------------------------------------------------------------
# Structured output as JSON text: json_schema and json_mode
# ---------------------------------------------------------------------------------------

REPORT_JSON = (
    '{"title":"title 1","sections":[{"heading":"heading 1","color":"red","score":1},'
    '{"heading":"heading 2","color":"green","score":2}],"summary":"summary 1",'
    '"kind":"short","ratio":0.25}'
)


def instructed(schema: type[BaseModel]) -> str:
    """A prompt that carries LangTree's JSON-mode instructions for ``schema``."""
    return f"Write it.\n\n{json_instructions(schema.model_json_schema())}"


def test_json_schema_gives_the_instance() -> None:
    assert structured(FakeChatModel(), Report, method="json_schema").invoke("x") == REPORT


def test_json_mode_gives_the_instance_for_the_schema_in_the_prompt() -> None:
    answer = structured(FakeChatModel(), Report, method="json_mode").invoke(instructed(Report))

    assert answer == REPORT


def test_json_mode_gives_the_instance_without_instructions_in_the_prompt() -> None:
    assert structured(FakeChatModel(), Report, method="json_mode").invoke("x") == REPORT


@pytest.mark.parametrize(
    ("method", "prompt"),
    [
        pytest.param("json_schema", "x", id="json-schema"),
        pytest.param("json_mode", instructed(Report), id="json-mode"),
    ],
)
def test_json_include_raw_gives_the_text_and_the_instance(method: str, prompt: str) -> None:
    raw = structured(FakeChatModel(), Report, method=method, include_raw=True).invoke(prompt)

    assert (raw["raw"].content, raw["raw"].tool_calls, raw["parsed"], raw["parsing_error"]) == (
        REPORT_JSON,
        [],
        REPORT,
        None,
    )


def test_json_include_raw_of_invalid_output_is_a_parsing_error() -> None:
    model = FakeChatModel(lambda request: WRONG)

    raw = structured(model, Report, method="json_schema", include_raw=True).invoke("x")

    assert (raw["parsed"], type(raw["parsing_error"])) == (None, OutputParserException)


def test_json_responder_text_is_the_reply_unchanged() -> None:
    model = FakeChatModel(lambda request: "not JSON")

    raw = structured(model, Report, method="json_schema", include_raw=True).invoke("x")

    assert (raw["raw"].content, raw["parsed"]) == ("not JSON", None)


def test_json_schema_dict_gives_a_dict() -> None:
    schema = {"title": "Pair", "type": "object", "properties": {"a": {"type": "string"}}}

    assert FakeChatModel().with_structured_output(schema, method="json_schema").invoke("x") == {
        "a": "a 1"
    }


@pytest.mark.parametrize(
    ("method", "response_format"),
    [
        pytest.param(
            "json_schema",
            {
                "type": "json_schema",
                "json_schema": {
                    "name": "Section",
                    "schema": SECTION_PARAMETERS,
                },
            },
            id="json-schema",
        ),
        pytest.param(
            "json_mode",
            {
                "type": "json_object",
                "schema": SECTION_PARAMETERS,
            },
            id="json-mode",
        ),
    ],
)
def test_json_methods_bind_openais_response_format(
    method: str, response_format: dict[str, object]
) -> None:
    chain = FakeChatModel().with_structured_output(Section, method=method)  # type: ignore[arg-type]

    assert chain.first.kwargs["response_format"] == response_format  # type: ignore[attr-defined]


ASKED: list[Any] = [
    pytest.param(
        lambda model: model.bind_tools([Section]).invoke("x"), "function_calling", id="tool"
    ),
    pytest.param(
        lambda model: structured(model, Section).invoke("x"), "function_calling", id="structured"
    ),
    pytest.param(
        lambda model: structured(model, Section, method="json_schema").invoke("x"),
        "json_schema",
        id="json-schema",
    ),
    pytest.param(
        lambda model: structured(model, Section, method="json_mode").invoke(instructed(Section)),
        "json_mode",
        id="json-mode",
    ),
    pytest.param(lambda model: model.invoke("x"), None, id="text"),
    pytest.param(
        lambda model: model.bind_tools([Section], tool_choice="none").invoke("x"),
        None,
        id="tool-choice-none",
    ),
]


@pytest.mark.parametrize(("ask", "method"), ASKED)
def test_request_records_how_output_was_asked_for(
    ask: Callable[[FakeChatModel], object], method: str | None
) -> None:
    model = FakeChatModel()

    ask(model)

    assert model.calls[0].method == method


@pytest.mark.parametrize(
    ("method", "prompt", "schema"),
    [
        pytest.param("json_schema", "x", SECTION_PARAMETERS, id="json-schema"),
        pytest.param("json_mode", instructed(Section), SECTION_PARAMETERS, id="json-mode"),
        pytest.param("json_mode", "x", SECTION_PARAMETERS, id="json-mode-without-instructions"),
    ],
)
def test_json_request_records_the_schema(
    method: str, prompt: str, schema: dict[str, object] | None
) -> None:
    model = FakeChatModel(lambda request: {})

    structured(model, Section, method=method, include_raw=True).invoke(prompt)

    assert (model.calls[0].schema, model.calls[0].tool_name) == (schema, None)


@pytest.mark.parametrize("prompt", [instructed(Section), "x"], ids=["instructions", "plain"])
def test_plain_json_mode_carries_no_schema(prompt: str) -> None:
    model = FakeChatModel()

    answer = model.bind(response_format={"type": "json_object"}).invoke(prompt)

    assert (model.calls[0].method, model.calls[0].schema, answer.content) == (
        "json_mode",
        None,
        "{}",
    )


@pytest.mark.parametrize(
    ("prompt", "method"),
    [pytest.param(instructed(Section), "json_mode", id="instructions"), ("x", None)],
)
def test_langtrees_json_instructions_alone_ask_for_json(prompt: str, method: str | None) -> None:
    model = FakeChatModel()

    model.invoke(prompt)

    assert model.calls[0].method == method


def test_response_format_of_no_known_form_is_an_error() -> None:
    bound = FakeChatModel().bind(response_format={"type": "xml"})

    with pytest.raises(ExecutionError) as caught:
        bound.invoke("x")

    assert str(caught.value) == (
        "response_format must be {'type': 'json_schema', ...}, {'type': 'json_object'} or "
        "{'type': 'text'}, got {'type': 'xml'}"
    )


def test_response_format_text_gives_text() -> None:
    assert FakeChatModel().bind(response_format={"type": "text"}).invoke("hi").content == "hi"


def json_schema_raw(model: FakeChatModel) -> AIMessage:
    chain = structured(model, Section, method="json_schema", include_raw=True)
    raw: AIMessage = chain.invoke("x")["raw"]
    return raw


@pytest.mark.parametrize(
    "ask",
    [
        pytest.param(lambda model: model.invoke("x"), id="text"),
        pytest.param(lambda model: model.bind_tools([Section]).invoke("x"), id="tool"),
        pytest.param(json_schema_raw, id="json-schema"),
    ],
)
@pytest.mark.parametrize(
    ("build", "name"),
    [
        pytest.param(FakeChatModel, "langtree-fake", id="default-name"),
        pytest.param(lambda: FakeChatModel(model_name="backup"), "backup", id="given-name"),
    ],
)
def test_reply_reports_the_model_name(
    ask: Callable[[FakeChatModel], AIMessage], build: Callable[[], FakeChatModel], name: str
) -> None:
    message = ask(build())

    assert message.response_metadata == {"model_name": name, "finish_reason": "stop"}


def test_only_the_last_streamed_chunk_carries_the_metadata() -> None:
    chunks = list(FakeChatModel().stream("a line long enough to need several pieces"))

    assert [chunk.response_metadata for chunk in chunks[-2:]] == [
        {},
        {"model_name": "langtree-fake", "finish_reason": "stop"},
    ]


# ---------------------------------------------------------------------------------------
# Async, batches and streaming
# ---------------------------------------------------------------------------------------


def test_ainvoke_gives_the_same_answer_as_invoke() -> None:
    assert asyncio.run(structured(FakeChatModel(), Report).ainvoke("x")) == REPORT


def test_abatch_answers_every_input_in_order() -> None:
    model = FakeChatModel(lambda request: {**REPORT.model_dump(mode="json"), "title": request.text})

    answers = asyncio.run(structured(model, Report).abatch(["a", "b", "c"]))

    assert [answer.title for answer in answers] == ["a", "b", "c"]


def test_stream_of_structured_output_ends_with_the_answer() -> None:
    assert list(structured(FakeChatModel(), Report).stream("x"))[-1] == REPORT


def test_astream_of_structured_output_ends_with_the_answer() -> None:
    assert collect(structured(FakeChatModel(), Report).astream("x"))[-1] == REPORT


def test_stream_sends_the_arguments_as_json_in_pieces() -> None:
    chunks: list[Any] = list(FakeChatModel().bind_tools([Report]).stream("x"))
    pieces = [chunk.tool_call_chunks[0]["args"] for chunk in chunks if chunk.tool_call_chunks]

    assert len(pieces) > 1
    assert Report.model_validate_json("".join(pieces)) == REPORT


def test_stream_chunks_add_up_to_the_invoke_message() -> None:
    model = FakeChatModel()
    chunks: list[Any] = list(model.bind_tools([Report]).stream("x"))
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged += chunk

    assert isinstance(merged, AIMessageChunk)
    assert merged.tool_calls == model.bind_tools([Report]).invoke("x").tool_calls


def test_text_streams_in_pieces_that_join_to_the_echo() -> None:
    text = "a line long enough to need several pieces"

    chunks = list(FakeChatModel().stream(text))

    assert len(chunks) > 1
    assert "".join(str(chunk.content) for chunk in chunks) == text


def test_astream_of_text_joins_to_the_echo() -> None:
    chunks = collect(FakeChatModel().astream("hello there"))

    assert "".join(str(chunk.content) for chunk in chunks) == "hello there"


# ---------------------------------------------------------------------------------------
# Latency
# ---------------------------------------------------------------------------------------


def test_latency_is_non_blocking_on_the_async_path() -> None:
    # Every call starts its latency before any call answers: the wait does not block
    # the loop (checked by order of events, not by timing).
    events: list[str] = []

    def latency(request: FakeRequest) -> float:
        events.append("start")
        return 0.05

    def responder(request: FakeRequest) -> dict[str, object]:
        events.append("answer")
        return {"text": "t"}

    class Line(BaseModel):
        text: str

    model = structured(FakeChatModel(latency=latency, responder=responder), Line)

    async def concurrently() -> None:
        await asyncio.gather(*(model.ainvoke("x") for _ in range(20)))

    asyncio.run(concurrently())
    assert events == ["start"] * 20 + ["answer"] * 20


def test_latency_delays_the_sync_path() -> None:
    start = time.perf_counter()
    FakeChatModel(latency=0.05).invoke("x")

    assert time.perf_counter() - start >= 0.05


def test_latency_function_gets_the_request() -> None:
    asked: list[str] = []

    def latency(request: FakeRequest) -> float:
        asked.append(request.text)
        return 0.0

    asyncio.run(FakeChatModel(latency=latency).ainvoke("question"))

    assert asked == ["question"]


def test_negative_latency_is_an_error() -> None:
    with pytest.raises(ExecutionError, match=re.escape("latency must not be negative, got -1.0")):
        FakeChatModel(latency=lambda request: -1.0).invoke("x")


# ---------------------------------------------------------------------------------------
# Recorded calls
# ---------------------------------------------------------------------------------------


def test_calls_are_recorded_in_order_with_fields_and_text() -> None:
    model = FakeChatModel()

    structured(model, Report).invoke([SystemMessage("Be brief."), HumanMessage("Report!")])
    structured(model, Section).invoke("Section?")
    model.invoke("plain")

    assert [(call.tool_name, call.fields, call.text) for call in model.calls] == [
        ("Report", ("title", "sections", "summary", "kind", "ratio"), "Be brief.\n\nReport!"),
        ("Section", ("heading", "color", "score"), "Section?"),
        (None, (), "plain"),
    ]


def test_request_keeps_the_messages_and_the_tool_schema() -> None:
    model = FakeChatModel()
    messages = [SystemMessage("Be brief."), HumanMessage("Section?")]

    model.bind_tools([Section]).invoke(messages)

    request = model.calls[0]
    assert request.messages == tuple(messages)
    assert (
        request.schema
        == model.bind_tools([Section]).kwargs["tools"][0]["function"][  # type: ignore[attr-defined]
            "parameters"
        ]
    )


def test_request_without_tools_has_no_schema() -> None:
    model = FakeChatModel()
    model.invoke("x")

    assert (model.calls[0].schema, model.calls[0].tool_name, model.calls[0].fields) == (
        None,
        None,
        (),
    )


def test_calls_is_the_live_list() -> None:
    model = FakeChatModel()
    model.invoke("x")
    model.calls.clear()
    model.invoke("y")

    assert [call.text for call in model.calls] == ["y"]


def test_abatch_records_every_call() -> None:
    model = FakeChatModel()

    asyncio.run(structured(model, Section).abatch(["a", "b", "c"]))

    assert sorted(call.text for call in model.calls) == ["a", "b", "c"]


NODE_PATH_RUNS: list[Any] = [
    pytest.param(lambda model, config: model.invoke("x", config=config), id="model-invoke"),
    pytest.param(
        lambda model, config: structured(model, Report).invoke("x", config=config),
        id="structured-invoke",
    ),
    pytest.param(
        lambda model, config: structured(model, Report).with_config(config).invoke("x"),
        id="with-config",
    ),
    pytest.param(
        lambda model, config: structured(model, Report).batch(["x"], config=config),
        id="structured-batch",
    ),
    pytest.param(
        lambda model, config: asyncio.run(structured(model, Report).ainvoke("x", config=config)),
        id="structured-ainvoke",
    ),
    pytest.param(
        lambda model, config: list(structured(model, Report).stream("x", config=config)),
        id="structured-stream",
    ),
    pytest.param(
        lambda model, config: collect(structured(model, Report).astream("x", config=config)),
        id="structured-astream",
    ),
    pytest.param(
        lambda model, config: structured(model, Report, include_raw=True).invoke(
            "x", config=config
        ),
        id="include-raw",
    ),
]


@pytest.mark.parametrize("run", NODE_PATH_RUNS)
def test_node_path_comes_from_the_run_metadata(
    run: Callable[[FakeChatModel, RunnableConfig], object],
) -> None:
    model = FakeChatModel()

    run(model, PATH)

    assert [call.node_path for call in model.calls] == ["task.report.sections"]


@pytest.mark.parametrize("run", NODE_PATH_RUNS)
def test_node_path_is_none_without_the_metadata(
    run: Callable[[FakeChatModel, RunnableConfig], object],
) -> None:
    model = FakeChatModel()

    run(model, {"metadata": {"other": "value"}})

    assert [call.node_path for call in model.calls] == [None]


def test_bare_model_stream_has_no_node_path() -> None:
    """``BaseChatModel.stream`` passes no callback manager and runs outside a chain."""
    model = FakeChatModel()

    list(model.stream("x", config=PATH))

    assert model.calls[0].node_path is None


# ---------------------------------------------------------------------------------------
# Determinism and the public surface
# ---------------------------------------------------------------------------------------


def test_same_request_same_reply_across_instances() -> None:
    first, second = FakeChatModel(), FakeChatModel()

    replies = [model.bind_tools([Report]).invoke("x") for model in (first, first, second)]

    assert {str(reply.tool_calls) for reply in replies} == {str(replies[0].tool_calls)}


def test_fake_chat_model_is_a_base_chat_model() -> None:
    assert isinstance(FakeChatModel(), BaseChatModel)


def test_responder_may_be_passed_by_keyword() -> None:
    def respond(request: FakeRequest) -> str:
        return "ok"

    model = FakeChatModel(responder=respond, latency=0.0)

    assert (model.responder, model.invoke("x").content) == (respond, "ok")


def test_testing_all_is_sorted_and_importable() -> None:
    names = langtree.testing.__all__

    assert names == sorted(set(names))
    assert all(hasattr(langtree.testing, name) for name in names)


def test_requests_are_frozen() -> None:
    model = FakeChatModel()
    model.invoke("x")

    with pytest.raises(AttributeError):
        model.calls[0].text = "changed"  # type: ignore[misc]


def test_pattern_examples_match_with_python_re() -> None:
    assert re.search(r"^[A-Z]{3}-\d{4}$", str(example_match(r"^[A-Z]{3}-\d{4}$")))
