"""A provider's refusal of the assets a call sent, as LangTree's own error.

A model without a LangChain profile is sent its step's assets, and its provider decides.
One that cannot read them answers with an error whose status says little: llama.cpp's
server without a multimodal projector answers HTTP 500 ``image input is not supported``
(which would count as a server error worth retrying), OpenAI HTTP 400 ``Invalid content
type. image_url is only supported by certain models.``. When a call that sent assets
fails with such a message (`refuses_input()`), the call's error becomes an
`ExecutionError` that names the model, the step and the fields the
assets were given in, keeps the provider's message, and is raised from the provider's
error; as LangTree's own error it is permanent (`langtree.runtime.faults._faults`, rule 2):
asking again cannot change the answer.
"""

from __future__ import annotations

import re

from langtree.errors import ExecutionError, LangTreeError
from langtree.prompts import StepPrompt
from langtree.runtime.faults._faults import describe_failure

__all__ = ["as_refusal", "refuses_input"]

_REFUSALS = re.compile(
    r"\b(?:image|audio|video|file|pdf|document|multimodal|multi-modal|vision)s?\b"
    r"[\w\s-]{0,30}?\b(?:is|are) not supported"
    r"|\bis only supported by certain models"
    r"|\bdoes(?: not|n't) support (?:image|audio|video|file|pdf|document|vision|multimodal)"
    r"|\bmissing data required for image input",
    re.IGNORECASE,
)
"""What providers say when a model cannot read an input: llama.cpp (``image input is not
supported``, ``audio input is not supported by this server``), OpenAI (``image_url is only
supported by certain models``), Ollama (``this model is missing data required for image
input``), and the wording many others share (``model does not support image input``)."""


def refuses_input(error: BaseException) -> bool:
    """Whether the error is a provider saying that the model cannot read an input of the
    kind sent (the error or the one it was raised from, as in ``classify_failure``).

    Examples:
        >>> refuses_input(RuntimeError("image input is not supported"))
        True
        >>> refuses_input(RuntimeError("Rate limit reached"))
        False
    """
    cause = error.__cause__
    return any(
        _REFUSALS.search(str(item)) is not None for item in (error, cause) if item is not None
    )


def as_refusal(error: Exception, prompt: StepPrompt, model: str) -> Exception:
    """``error`` as LangTree's error when it refuses the assets ``prompt`` sent, else
    ``error`` itself.

    Args:
        error: What the call raised.
        prompt: The call's prompt.
        model: The provider's key of the model.
    """
    # LangTree's own errors (the profile check before the call) name the assets already.
    if not prompt.assets or isinstance(error, LangTreeError) or not refuses_input(error):
        return error
    # Each field and kind named once, in the order sent: a field may send several assets.
    sent = dict.fromkeys(
        f"{label!r}: {asset.kind}"
        for label, asset in zip(prompt.asset_fields, prompt.assets, strict=True)
    )
    refusal = ExecutionError(
        f"Model {model!r} refused the assets that step {prompt.step_id!r} sent "
        f"({', '.join(sent)}): {describe_failure(error)}; give the step a model that reads "
        'them (! llm("<key>") on the node or field)'
    )
    refusal.__cause__ = error
    return refusal
