"""What a run records as it goes, and whom it tells.

`RunRecords` holds what a run's result is gathered from besides its values: one trace
record per model call, one record per transform, the failures the run went on after, the
instances it skipped, the unrounded values resampling aggregated, and the provenance of
every write. Those who watch the run are told from the same place: the caller's event
sink (a streamed run, `langtree.runtime.observe._events`) and OpenTelemetry, when set up.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from langtree.prompts import Address, instance_text
from langtree.runtime.engine._json_view import ResampledValues, fields_view, json_view, roots_view
from langtree.runtime.faults._failure import StepFailedError
from langtree.runtime.observe._events import EventSink, StepFailed, StepFinished, ValueMapped
from langtree.runtime.observe._otel import RunTracer, run_tracer
from langtree.runtime.observe._provenance import ProvenanceLog, ProvenanceRecord
from langtree.runtime.observe._result import SkippedInstance, TraceRecord, TransformRecord
from langtree.structure import NodeRegistry, PlanStep

__all__ = ["RunRecords"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecords:
    """What one run records, and whom it tells.

    The lists and the dict fill as the run goes; the parts themselves are fixed when the
    run is set up (`start()`).

    Attributes:
        registry: The nodes (to print an instance's path).
        log: The provenance of every value written (DESIGN D14).
        events: Told what the run writes and what fails, as it happens (``None``: the run
            is not streamed).
        otel: The run's OpenTelemetry tracer (``None``: tracing is not set up).
        trace: One record per model call, in the order the calls returned.
        transforms: One record per transform computed.
        errors: The failures the run went on after (``on_error="continue"``).
        skipped: The instances skipped because one they depend on failed.
        resampled_values: Each aggregated number's unrounded value, by node path and field.
    """

    registry: NodeRegistry
    log: ProvenanceLog
    events: EventSink | None
    otel: RunTracer | None
    trace: list[TraceRecord] = field(default_factory=list)
    transforms: list[TransformRecord] = field(default_factory=list)
    errors: list[StepFailedError] = field(default_factory=list)
    skipped: list[SkippedInstance] = field(default_factory=list)
    resampled_values: dict[tuple[str, str], float] = field(default_factory=dict)

    @classmethod
    def start(cls, registry: NodeRegistry, events: EventSink | None) -> RunRecords:
        """Empty records for a run, telling ``events`` (when given) what it writes."""
        # One dict for the records and the mapping events, so that an event shows the
        # numbers resampling has aggregated by the time the mapping writes.
        resampled: dict[tuple[str, str], float] = {}
        log = ProvenanceLog(registry, on_record=_mapping_events(events, resampled))
        return cls(
            registry=registry,
            log=log,
            events=events,
            otel=run_tracer(),
            resampled_values=resampled,
        )

    def call(self, record: TraceRecord) -> None:
        """Record a model call as soon as it returns."""
        # As it returns, not when its instance finishes: a run stopped early still lists
        # every call it paid for, failed retries and samples included.
        self.trace.append(record)
        if self.otel is not None:
            self.otel.call(record)

    def transform(self, record: TransformRecord) -> None:
        """Record a computed transform."""
        self.transforms.append(record)
        if self.otel is not None:
            self.otel.transform(record.step_id, record.node_path, record.expression, record.latency)

    def failure(self, error: StepFailedError) -> None:
        """Record a failure the run goes on after, and tell it."""
        self.errors.append(error)
        if self.events is not None:
            self.events(StepFailed(error=error))

    def step_finished(
        self,
        step: PlanStep,
        address: Address,
        values: Mapping[str, object],
        roots: Mapping[str, Mapping[str, object]],
    ) -> None:
        """Tell that an instance wrote ``values`` (``roots``: every root task's values)."""
        # The views copy every root task's values: they are made only for a listener.
        if self.events is None:
            return
        node_path = instance_text(self.registry, address)
        finished = StepFinished(
            step_id=step.id,
            node_path=node_path,
            values=fields_view(values, node_path, self.resampled_values),
            partial=roots_view(roots, self.resampled_values),
            transform=step.transform is not None,
        )
        self.events(finished)

    def span(self, tasks: list[str]) -> contextlib.AbstractContextManager[object]:
        """The run's OpenTelemetry span, when tracing is set up."""
        if self.otel is None:
            return contextlib.nullcontext()
        return self.otel.run(tasks)

    def step_span(
        self, step: PlanStep, address: Address, model: str
    ) -> contextlib.AbstractContextManager[object]:
        """An instance's OpenTelemetry span, when tracing is set up."""
        if self.otel is None:
            return contextlib.nullcontext()
        node_path = instance_text(self.registry, address)
        return self.otel.step(step.id, node_path, step.fields, model)


def _mapping_events(
    events: EventSink | None, resampled: ResampledValues
) -> Callable[[ProvenanceRecord], None] | None:
    """What tells ``events`` of each value a mapping writes (``None`` without events).

    The provenance log is the one place every write goes through, so the events come
    from its records; the inputs and defaults it records when the run starts are no
    mapping, and are not told.
    """
    if events is None:
        return None
    sink = events

    def mapped(record: ProvenanceRecord) -> None:
        if record.kind not in ("mapping", "literal"):
            return
        sink(
            ValueMapped(
                path=record.path,
                value=json_view(record.value, record.path, resampled),
                command=record.command or "",
                source=record.source,
            )
        )

    return mapped
