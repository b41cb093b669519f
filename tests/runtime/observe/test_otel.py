"""OpenTelemetry spans of a run (GenAI conventions), captured with the SDK's in-memory
exporter."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from pydantic import Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.runtime.observe._otel import CAPTURE_CONTENT, run_tracer
from langtree.testing import FakeChatModel, FakeRequest

trace = pytest.importorskip("opentelemetry.trace", reason="needs the otel extra")
sdk = pytest.importorskip("opentelemetry.sdk.trace", reason="needs opentelemetry-sdk")
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind  # noqa: E402
from opentelemetry.util._once import Once  # noqa: E402


def reset_global_provider() -> None:
    # OpenTelemetry sets its global provider once per process; its own test utilities
    # reset these two globals the same way between tests.
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace._TRACER_PROVIDER = None


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    reset_global_provider()
    trace.set_tracer_provider(provider)
    yield exporter
    reset_global_provider()


class Section(TreeNode):
    """Summarise the section."""

    title: str
    summary: str = Field(description="Two sentences.")


class TaskReport(TreeNode):
    sections: list[Section]
    count: int = Field(description='! transform("sections | length")')


INPUTS = {TaskReport: {"sections": [{"title": "A"}, {"title": "B"}]}}


def run_report(model: FakeChatModel, **config: object) -> None:
    structure = RunStructure(config or None, LLMProvider({"default": model}))
    structure.add(TaskReport)
    structure.run(INPUTS)


def test_no_tracer_provider_means_no_tracing() -> None:
    reset_global_provider()
    assert run_tracer() is None


def test_a_run_is_a_span_with_a_span_per_step_instance_and_per_call(
    spans: InMemorySpanExporter,
) -> None:
    run_report(FakeChatModel(report_usage=True))

    finished = spans.get_finished_spans()
    by_name = {span.name: span for span in finished}
    run = by_name["langtree.run"]
    assert dict(run.attributes or {}) == {"langtree.tasks": ("task.report",)}
    steps = sorted(
        (s for s in finished if s.name.startswith("langtree.step ")),
        key=lambda s: str((s.attributes or {})["langtree.node_path"]),
    )
    assert [dict(s.attributes or {}) for s in steps] == [
        {
            "langtree.step_id": "task.report.sections:summary",
            "langtree.node_path": f"task.report.sections[{index}]",
            "langtree.fields": ("summary",),
            "langtree.model": "default",
        }
        for index in (0, 1)
    ]
    assert all(s.parent is not None and s.parent.span_id == run.context.span_id for s in steps)
    calls = [s for s in finished if s.name == "chat langtree-fake"]
    assert sorted(c.parent.span_id for c in calls if c.parent) == sorted(
        s.context.span_id for s in steps
    )
    attributes = dict(calls[0].attributes or {})
    assert {key: attributes[key] for key in attributes if key.startswith("gen_ai.")} == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "fakechatmodel",
        "gen_ai.request.model": "langtree-fake",
        "gen_ai.response.model": "langtree-fake",
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": attributes["gen_ai.usage.input_tokens"],
        "gen_ai.usage.output_tokens": attributes["gen_ai.usage.output_tokens"],
    }
    assert isinstance(attributes["gen_ai.usage.input_tokens"], int)
    assert {call.kind for call in calls} == {SpanKind.CLIENT}
    assert "server.address" not in attributes  # a model in the process has no server
    assert attributes["langtree.attempt"] == 1
    [transform] = [s for s in finished if s.name == "langtree.transform task.report:count"]
    assert transform.parent is not None
    assert transform.parent.span_id == run.context.span_id
    assert (transform.attributes or {})["langtree.expression"] == "sections | length"


def test_a_failed_call_is_an_error_span_and_its_retry_a_sibling(
    spans: InMemorySpanExporter,
) -> None:
    asked: list[str] = []

    def responder(request: FakeRequest) -> dict[str, object]:
        asked.append(request.node_path or "")
        first = request.node_path == "task.report.sections[0]" and asked.count(asked[-1]) == 1
        return {"summary": 3 if first else "ok"}

    run_report(FakeChatModel(responder))

    calls = [
        s
        for s in spans.get_finished_spans()
        if (s.attributes or {}).get("langtree.node_path") == "task.report.sections[0]"
        and s.name.startswith("chat ")
    ]
    first, retry = calls
    assert (first.attributes or {})["error.type"] == "invalid_output"
    assert first.status.status_code == trace.StatusCode.ERROR
    assert (retry.attributes or {})["langtree.attempt"] == 2
    assert "error.type" not in (retry.attributes or {})
    assert retry.parent == first.parent


def test_message_content_only_when_switched_on(
    spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_report(FakeChatModel())
    without = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    assert all("gen_ai.input.messages" not in (s.attributes or {}) for s in without)

    spans.clear()
    monkeypatch.setenv(CAPTURE_CONTENT, "true")
    run_report(FakeChatModel())
    call = next(s for s in spans.get_finished_spans() if s.name.startswith("chat "))
    sent = json.loads(str((call.attributes or {})["gen_ai.input.messages"]))
    assert [message["role"] for message in sent] == ["system", "user"]
    assert sent[1]["parts"][0]["type"] == "text"
    assert "Summarise the section." in sent[1]["parts"][0]["content"]
    answer = json.loads(str((call.attributes or {})["gen_ai.output.messages"]))
    assert answer == [
        {"role": "assistant", "parts": [{"type": "text", "content": '{"summary": "summary 1"}'}]}
    ]


class ServedModel(FakeChatModel):
    """A fake model that says, as provider models do, which URL it calls."""

    base_url: str = "http://127.0.0.1:8081/v1"


@pytest.mark.parametrize(
    ("url", "server"),
    [
        ("http://127.0.0.1:8081/v1", {"server.address": "127.0.0.1", "server.port": 8081}),
        ("https://api.example.com/v1", {"server.address": "api.example.com", "server.port": 443}),
        ("http://models.internal/v1", {"server.address": "models.internal", "server.port": 80}),
    ],
    ids=["port", "https", "http"],
)
def test_a_call_span_names_the_server_of_the_models_base_url(
    spans: InMemorySpanExporter, url: str, server: dict[str, object]
) -> None:
    run_report(ServedModel(base_url=url))

    (call, *_) = [s for s in spans.get_finished_spans() if s.name == "chat langtree-fake"]
    attributes = dict(call.attributes or {})
    assert {key: attributes[key] for key in attributes if key.startswith("server.")} == server
