"""What a model is told when its answer cannot be used (the retry's human message), and
the problem lines the trace keeps, pinned whole."""

import pytest
from pydantic import BaseModel, ValidationError

from langtree.prompts._feedback import (
    cut_off_error,
    feedback_message,
    invalid_tool_arguments,
    no_tool_call,
    not_a_message,
    not_an_object,
    not_json,
    other_tools_called,
    problem_text,
)


class Review(BaseModel):
    summary: str
    score: int


def validation_error() -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        Review.model_validate({"score": "high"})
    return caught.value


def test_the_feedback_names_the_problems_and_the_fields_to_write_again() -> None:
    message = feedback_message(problem_text(validation_error()), ("summary", "score"))

    assert message.content == (
        "Your previous answer could not be used:\n"
        "- summary: Field required\n"
        "- score: Input should be a valid integer, unable to parse string as an integer\n"
        "\n"
        "Write Summary, Score again, as structured output."
    )


def test_the_feedback_in_json_mode_repeats_the_form_of_the_answer() -> None:
    form = 'Answer with one JSON object, and nothing else, in this form:\n{"summary": "<text>"}'

    message = feedback_message(problem_text(not_json("Sure!")), ("summary",), form)

    assert message.content == (
        "Your previous answer could not be used:\n"
        "- the answer is not a JSON object: 'Sure!'\n"
        "\n"
        "Write Summary again. " + form
    )


def test_an_answer_cut_off_says_so_first() -> None:
    assert problem_text(not_an_object("[1, 2"), cut_off=True) == (
        "- the answer was cut off at the model's output limit\n"
        "- the answer is JSON but not an object: '[1, 2'"
    )
    assert cut_off_error(ValueError("length")) == (
        "- the answer was cut off at the model's output limit (ValueError)"
    )


@pytest.mark.parametrize(
    ("problem", "text"),
    [
        pytest.param(
            no_tool_call("  "), "the answer held no structured output (no tool call)", id="none"
        ),
        pytest.param(
            no_tool_call("I would\nrather not."),
            "the answer held no tool call, only text: 'I would rather not.'",
            id="text",
        ),
        pytest.param(
            no_tool_call("x" * 200),
            f"the answer held no tool call, only text: '{'x' * 119}…'",
            id="long-text",
        ),
        pytest.param(
            invalid_tool_arguments('{"summary": '),
            "the tool call's arguments are not valid JSON: '{\"summary\":'",
            id="invalid-arguments",
        ),
        pytest.param(
            other_tools_called(["search", "fetch"], "Review_summary"),
            "the answer called 'search', 'fetch', not 'Review_summary'",
            id="other-tools",
        ),
        pytest.param(
            not_a_message(42), "the model returned 'int', not a message", id="not-message"
        ),
        pytest.param(None, "the answer held no structured output (no tool call)", id="nothing"),
    ],
)
def test_each_problem_is_one_line(problem: str | None, text: str) -> None:
    assert problem_text(problem) == f"- {text}"
