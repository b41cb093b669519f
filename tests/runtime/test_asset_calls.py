"""Assets at run time: content blocks reach the model; a model that lacks the kind fails."""

from __future__ import annotations

import pytest
from pydantic import Field

from langtree import Asset, LLMProvider, ModelConfig, RunStructure, StepFailedError, TreeNode
from langtree.testing import FakeChatModel

PNG = b"\x89PNG\r\n\x1a\n"


class TaskCaption(TreeNode):
    """Caption the photo for a shop."""

    photo: Asset = Field(description="The product photo.")
    caption: str = Field(description="One sentence.")


def run_with(model: FakeChatModel, method: str = "auto") -> RunStructure:
    structure = RunStructure(provider=LLMProvider({"default": ModelConfig(model, method=method)}))
    structure.add(TaskCaption)
    return structure


@pytest.mark.parametrize("method", ["function_calling", "json_mode"])
def test_model_receives_content_blocks(method: str) -> None:
    model = FakeChatModel()
    photo = Asset(data=PNG, media_type="image/png", title="Front")
    result = run_with(model, method).run({TaskCaption: {"photo": photo}})

    assert result[TaskCaption].photo == photo
    [request] = model.calls
    blocks = request.messages[1].content
    assert blocks[0]["type"] == "text"
    assert "[image 1: Front]" in blocks[0]["text"]
    assert blocks[1:2] == [{"type": "image", "mime_type": "image/png", "base64": "iVBORw0KGgo="}]
    assert "iVBOR" not in request.text
    assert "[image 1: Front]" in request.text


def test_trace_keeps_the_blocks() -> None:
    result = run_with(FakeChatModel()).run({TaskCaption: {"photo": "https://e.com/a.jpg"}})
    [record] = result.trace
    assert record.messages[1].content[1] == {
        "type": "image",
        "mime_type": "image/jpeg",
        "url": "https://e.com/a.jpg",
    }
    assert record.token_count > 85


def test_model_whose_profile_lacks_the_kind_is_never_called() -> None:
    model = FakeChatModel(profile={"image_inputs": False})
    with pytest.raises(StepFailedError) as caught:
        run_with(model).run(
            {TaskCaption: {"photo": Asset(url="https://e.com/a.png", title="Front")}}
        )
    assert model.calls == []
    assert caught.value.kind == "permanent"
    assert caught.value.attempts[0].error == (
        "ExecutionError: Model 'default' cannot take the assets of task.caption: image 1 "
        "('Front') needs 'image_inputs', which the model's profile says it lacks; give the "
        "step a model that reads them (llm(...))"
    )


def test_model_whose_profile_takes_the_kind_is_called() -> None:
    model = FakeChatModel(profile={"image_inputs": True, "pdf_inputs": False})
    run_with(model).run({TaskCaption: {"photo": "https://e.com/a.png"}})
    assert len(model.calls) == 1
