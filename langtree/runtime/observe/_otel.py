"""OpenTelemetry spans of a run, following the GenAI semantic conventions (optional).

Off, at no cost, unless the ``opentelemetry-api`` package is installed (the extra
``langtree-llm[otel]``) and the application has set a tracer provider
(``trace.set_tracer_provider(...)``, as any OpenTelemetry setup does). Then a run is one
span (``langtree.run``); each step instance a child span (``langtree.step <step id>``,
``langtree.transform <step id>`` for a transform); and each model call a child of its
step's span, of kind ``CLIENT``, named ``chat <model>`` with the GenAI attributes:
``gen_ai.operation.name`` (``chat``), ``gen_ai.provider.name`` and
``gen_ai.request.model`` (from the chat model's LangSmith parameters),
``server.address`` and ``server.port`` where the model has a base URL,
``gen_ai.response.model``, ``gen_ai.response.finish_reasons`` when the provider says why
the model stopped, ``gen_ai.usage.input_tokens`` and ``gen_ai.usage.output_tokens`` when
it reports usage, and ``error.type`` for a failed call (the conventions of
https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/). Message content is
recorded (``gen_ai.input.messages``, ``gen_ai.output.messages``) only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is ``true``, the switch
OpenTelemetry's GenAI instrumentations use.

A call's span is made when its trace record is: it starts ``latency`` seconds before
(a retry's backoff is not part of it), so the spans need no hook inside the call itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from langchain_core.runnables import Runnable

from langtree._version import __version__
from langtree.runtime.calls._methods import primary_chat_model
from langtree.runtime.observe._result import TraceRecord

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

__all__ = ["CAPTURE_CONTENT", "ModelIdentity", "RunTracer", "model_identity", "run_tracer"]

CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The environment variable that switches message content on in the spans."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelIdentity:
    """What the GenAI conventions call a model: its provider and its name, and the
    server it is called on (``None``: not known, such as a model in the process)."""

    provider: str
    name: str
    address: str | None = None
    port: int | None = None


# Where LangChain's chat models keep the URL they call (ChatOpenAI, ChatAnthropic,
# ChatOllama, Azure and others), in the order looked for.
_BASE_URLS = ("openai_api_base", "base_url", "anthropic_api_url", "api_base", "endpoint")
_DEFAULT_PORTS = {"https": 443, "http": 80}


def model_identity(key: str, model: Runnable[Any, Any]) -> ModelIdentity:
    """The provider and model name a chat model reports to LangSmith (``_get_ls_params``),
    else its class and the provider's key; and the server of its base URL."""
    chat_model = primary_chat_model(model)
    params: Mapping[str, object] = chat_model._get_ls_params() if chat_model is not None else {}
    provider = params.get("ls_provider") or type(chat_model or model).__name__
    address, port = _server(chat_model)
    return ModelIdentity(
        provider=str(provider),
        name=str(params.get("ls_model_name") or key),
        address=address,
        port=port,
    )


def _server(model: object) -> tuple[str | None, int | None]:
    """The host and port of the URL a chat model calls, when it keeps one."""
    url = next(
        (value for name in _BASE_URLS if isinstance(value := getattr(model, name, None), str)),
        None,
    )
    parts = urlsplit(url) if url else None
    if parts is None or not parts.hostname:
        return None, None
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
    except ValueError:  # a port that is not a number: the host alone is still known
        port = None
    return parts.hostname, port


def run_tracer() -> RunTracer | None:
    """The tracer of a run, or ``None`` when OpenTelemetry is absent or not set up."""
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None
    content = os.environ.get(CAPTURE_CONTENT, "").strip().lower() == "true"
    return RunTracer(provider.get_tracer("langtree", __version__), content=content)


class RunTracer:
    """Makes one run's spans (see the module)."""

    def __init__(self, tracer: Tracer, *, content: bool) -> None:
        self.tracer = tracer
        self.content = content
        self.models: dict[str, ModelIdentity] = {}

    @contextlib.contextmanager
    def run(self, tasks: list[str]) -> Iterator[Span]:
        """The run's span, current while the run's steps start (they are its children)."""
        with self.tracer.start_as_current_span(
            "langtree.run", attributes={"langtree.tasks": tasks}
        ) as span:
            yield span

    @contextlib.contextmanager
    def step(
        self, step_id: str, node_path: str, fields: tuple[str, ...], model: str | None
    ) -> Iterator[Span]:
        """A step instance's span, current while its calls are made."""
        attributes: dict[str, Any] = {
            "langtree.step_id": step_id,
            "langtree.node_path": node_path,
            "langtree.fields": list(fields),
        }
        if model is not None:
            attributes["langtree.model"] = model
        with self.tracer.start_as_current_span(
            f"langtree.step {step_id}", attributes=attributes
        ) as span:
            yield span

    def transform(self, step_id: str, node_path: str, expression: str, latency: float) -> None:
        """A transform's span, below the current span (the run's)."""
        end = time.time_ns()
        span = self.tracer.start_span(
            f"langtree.transform {step_id}",
            start_time=end - int(latency * 1e9),
            attributes={
                "langtree.step_id": step_id,
                "langtree.node_path": node_path,
                "langtree.expression": expression,
            },
        )
        span.end(end_time=end)

    def call(self, record: TraceRecord) -> None:
        """A model call's span, below the current span (its step instance's)."""
        model = self.models.get(record.model, ModelIdentity(provider="", name=record.model))
        end = time.time_ns()
        from opentelemetry.trace import SpanKind

        span = self.tracer.start_span(
            f"chat {model.name}",
            kind=SpanKind.CLIENT,
            start_time=end - int(record.latency * 1e9),
            attributes=self._call_attributes(record, model),
        )
        if record.error is not None:
            from opentelemetry.trace import Status, StatusCode

            span.set_status(Status(StatusCode.ERROR, record.error.splitlines()[0]))
        span.end(end_time=end)

    def _call_attributes(self, record: TraceRecord, model: ModelIdentity) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": model.provider,
            "gen_ai.request.model": model.name,
            "langtree.step_id": record.step_id,
            "langtree.node_path": record.node_path,
            "langtree.model": record.model,
            "langtree.attempt": record.attempt,
            "langtree.sample": record.sample,
            "langtree.replayed": record.replayed,
        }
        if model.address is not None:
            attributes["server.address"] = model.address
        if model.port is not None:
            attributes["server.port"] = model.port
        if record.answered_by:
            attributes["gen_ai.response.model"] = record.answered_by
        if record.finish_reason:
            attributes["gen_ai.response.finish_reasons"] = [record.finish_reason]
        usage = record.usage or {}
        for reported, name in (("input_tokens", "input"), ("output_tokens", "output")):
            if isinstance(usage.get(reported), int):
                attributes[f"gen_ai.usage.{name}_tokens"] = usage[reported]
        if record.failure is not None:
            attributes["error.type"] = record.failure
        if self.content:
            sent = [_message(_ROLES.get(m.type, m.type), m.text) for m in record.messages]
            attributes["gen_ai.input.messages"] = json.dumps(sent, ensure_ascii=False)
            answer = [_message("assistant", record.raw_output)]
            attributes["gen_ai.output.messages"] = json.dumps(answer, ensure_ascii=False)
        return attributes


_ROLES = {"human": "user", "ai": "assistant"}
"""LangChain's message types by the GenAI conventions' role names (``system`` is both)."""


def _message(role: str, text: str) -> dict[str, object]:
    """A message as the GenAI conventions record it: a role and its text part."""
    return {"role": role, "parts": [{"type": "text", "content": text}]}
