"""The example trees through langchain-openai's ``ChatOpenAI`` on llama.cpp's server.

The server serves SmolLM2-135M (``conftest.py``). Of the three structured-output methods,
this server with this model supports one: ``json_schema``, which it enforces while
decoding, and which is LangTree's choice for ``ChatOpenAI``. Tool calling is not available
(SmolLM2's chat template has no tools: the server ignores them and answers in prose), and
JSON mode constrains the answer to some JSON object only, which SmolLM2-135M fills with
keys of its own rather than those of the form in the prompt. The tests below pin all
three: the examples run with ``json_schema``, and the other two fail with clear errors.
SmolLM2 reads no images: the server (without a multimodal projector) refuses the product
photo example's image with HTTP 500, which LangTree reports as a refusal of the photo (not
retried), pinned below.
"""

import json
from enum import Enum
from typing import Any

import pytest
from openai_server import OpenAICompatibleServer
from pydantic import Field

from langtree import (
    ExecutionError,
    LLMProvider,
    ModelConfig,
    RunStructure,
    StepFailedError,
    TreeNode,
)
from langtree.runtime import MethodChoice
from tests.test_examples import (
    EXAMPLE_NAMES,
    EXPECTED,
    generated_fields_filled,
    inputs_for,
    load,
    tasks,
)

pytestmark = [pytest.mark.local_model, pytest.mark.allow_hosts(["127.0.0.1"])]

# LocalChatModel's sampling: greedy, and a small repeat penalty that keeps a tiny model
# from looping inside a JSON string until max_tokens.
SAMPLING: dict[str, Any] = {"max_tokens": 512, "extra_body": {"repeat_penalty": 1.1, "seed": 0}}


def provider(server: OpenAICompatibleServer, keys: tuple[str, ...], method: MethodChoice) -> Any:
    model = ModelConfig(server.chat_model(**SAMPLING), method=method)
    return LLMProvider(dict.fromkeys(keys, model))


TEXT_EXAMPLES = [name for name in EXAMPLE_NAMES if name != "product_photo"]


@pytest.mark.parametrize("name", TEXT_EXAMPLES)
def test_example_runs_on_chat_openai_with_json_schema(
    openai_compatible_server: OpenAICompatibleServer, name: str
) -> None:
    module = load(name)
    structure = RunStructure(
        provider=provider(openai_compatible_server, module.MODEL_KEYS, "json_schema")
    )
    for task in tasks(module):
        structure.add(task)

    result = structure.run(inputs_for(name, module), variables=EXPECTED[name].variables)

    filled = [result[task] for task in tasks(module)]
    assert all(generated_fields_filled(instance) for instance in filled)
    answered = {record.answered_by for record in result.trace if record.error is None}
    assert answered == {"smollm2"}


def test_the_image_example_fails_where_the_model_reads_no_images(
    openai_compatible_server: OpenAICompatibleServer,
) -> None:
    """The server's refusal (HTTP 500, which would count as a server error) is LangTree's
    error naming the model, the step and the photo's field, asked once."""
    module = load("product_photo")
    structure = RunStructure(
        provider=provider(openai_compatible_server, module.MODEL_KEYS, "json_schema")
    )
    for task in tasks(module):
        structure.add(task)

    with pytest.raises(StepFailedError) as caught:
        structure.run(inputs_for("product_photo", module))

    assert caught.value.kind == "permanent"
    (attempt,) = caught.value.attempts
    assert attempt.failure == "permanent"
    assert attempt.error is not None
    assert attempt.error.startswith(
        "ExecutionError: Model 'default' refused the assets that step "
        "'task.describe_product:colour' sent ('TaskDescribeProduct.photo': image): "
    )
    assert "(HTTP 500): Error code: 500 - image input is not supported" in attempt.error
    assert attempt.error.endswith(
        '; give the step a model that reads them (! llm("<key>") on the node or field)'
    )
    refusal = caught.value.__cause__
    assert isinstance(refusal, ExecutionError)
    assert "image input is not supported" in str(refusal.__cause__)


class Verdict(Enum):
    RECOMMEND = "recommend"
    AVOID = "avoid"


class TaskRateReview(TreeNode):
    """
    ! together
    Read the customer's review and judge the product it describes.
    """

    review: str = Field(description="The review, as the customer wrote it.")
    verdict: Verdict = Field(description="Whether to buy the product.")
    reason: str = Field(description="One short sentence.")


def rate(server: OpenAICompatibleServer, method: MethodChoice) -> RunStructure:
    structure = RunStructure(provider=provider(server, ("default",), method))
    structure.add(TaskRateReview)
    return structure


REVIEW = {TaskRateReview: {"review": "The kettle broke after two days."}}


def test_json_mode_gets_json_objects_that_smollm2_fills_with_other_keys(
    openai_compatible_server: OpenAICompatibleServer,
) -> None:
    """JSON mode reaches the server and its answers are JSON objects, read and validated;
    the 135M model answers with keys of its own, so the step fails on validation."""
    with pytest.raises(StepFailedError) as caught:
        rate(openai_compatible_server, "json_mode").run(REVIEW)

    attempts = caught.value.attempts
    assert caught.value.kind == "invalid_output"
    assert all(isinstance(json.loads(record.raw_output), dict) for record in attempts)
    assert (
        attempts[0]
        .messages[-1]
        .text.endswith(
            "Answer with one JSON object, and nothing else, in this form:\n"
            '{"verdict": "recommend" | "avoid", "reason": "<text>"}'
        )
    )


def test_function_calling_on_this_server_fails_with_a_clear_error(
    openai_compatible_server: OpenAICompatibleServer,
) -> None:
    with pytest.raises(StepFailedError) as caught:
        rate(openai_compatible_server, "function_calling").run(REVIEW, max_retries=0)

    assert caught.value.kind == "invalid_output"
    assert "\n- the answer held no tool call, only text: " in str(caught.value)
    assert str(caught.value).endswith("need ModelConfig(model, method='json_schema')")
