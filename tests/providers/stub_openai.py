"""A stub of OpenAI's chat completions endpoint on 127.0.0.1, in a thread of this process.

It answers every ``POST .../chat/completions`` at once with JSON text that fills each
property of the requested ``json_schema`` with ``"<name> ok"`` (the shape langchain-openai's
``ChatOpenAI`` asks for by default), keeps connections alive as OpenAI's servers do (so a
client's pooled connection is reused, and bound to the event loop that opened it), and
counts the requests it answered. No model, no network beyond the loopback.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI


@dataclass(frozen=True, slots=True, kw_only=True)
class StubServer:
    """The stub, running.

    Attributes:
        base_url: The OpenAI API root, ``http://127.0.0.1:<port>/v1``.
        requests: The body of every request answered, in order.
    """

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)

    def chat_model(self, **options: Any) -> ChatOpenAI:
        """A ``ChatOpenAI`` on this stub, without retries; ``options`` override.

        Its async httpx client is langchain-openai's default, cached per base URL (each
        stub has a port of its own) and shared by every model on the stub.
        """
        from langchain_openai import ChatOpenAI

        settings: dict[str, Any] = {
            "base_url": self.base_url,
            "api_key": "not-needed",
            "model": "stub",
            "max_retries": 0,
        }
        return ChatOpenAI(**{**settings, **options})


@contextmanager
def serving() -> Iterator[StubServer]:
    """The stub, started now and stopped on exit."""
    requests: list[dict[str, Any]] = []
    handler = type("Handler", (_Handler,), {"requests": requests})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        yield StubServer(base_url=f"http://127.0.0.1:{port}/v1", requests=requests)
    finally:
        server.shutdown()
        server.server_close()


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the client pools the connection
    requests: list[dict[str, Any]]

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append(body)
        reply = json.dumps(_completion(body)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


def _completion(body: dict[str, Any]) -> dict[str, Any]:
    schema = body.get("response_format", {}).get("json_schema", {}).get("schema", {})
    content = json.dumps({name: f"{name} ok" for name in schema.get("properties", {})})
    return {
        "id": f"chatcmpl-{len(content)}",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
