"""What a streamed run tells as the tree fills (``RunStructure.stream``/``astream``).

Events come at node granularity: a step instance's values arrive once its model's answer
is validated against the step's schema (or once its transform is computed), never as
half-parsed JSON. A ``value`` mapping's write, and under ``on_error="continue"`` a step
instance's failure, are events too. The last event is `RunFinished` with the
``RunResult``; a run that fails raises from the stream instead, after the events that
came before.

The values an event carries are JSON data, as ``RunResult.dump()`` shows them (Enum
members as their values, dates as ISO text, each ``f_resampled_value`` beside its field;
see `langtree.runtime.engine._json_view`), so a server can send them on as they are; each
event's ``to_dict()`` is the whole event as JSON data, its kind under ``"event"``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, TypeAlias

from langtree.runtime.observe._result import RunResult

if TYPE_CHECKING:
    from langtree.runtime.faults._failure import StepFailedError

__all__ = [
    "EventSink",
    "RunEvent",
    "RunFinished",
    "StepFailed",
    "StepFinished",
    "ValueMapped",
    "stream_events",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class StepFinished:
    """A step instance wrote its fields.

    Attributes:
        step_id: The plan step, e.g. ``task.report.sections:summary``.
        node_path: The node instance, e.g. ``task.report.sections[0]``.
        values: The fields written, as JSON data (validated against the step's schema,
            or converted to the fields' types for a transform).
        partial: Each root task's values so far, by tag, as JSON data (a copy).
        transform: Whether a transform computed the values (no model call).
    """

    step_id: str
    node_path: str
    values: Mapping[str, object]
    partial: Mapping[str, Mapping[str, object]]
    transform: bool = False

    def to_dict(self) -> dict[str, object]:
        """The event as JSON data."""
        return _fields_data(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class ValueMapped:
    """A ``value`` mapping of an ``@each``/``@all`` command wrote a value.

    Attributes:
        path: The field path written, e.g. ``task.digest.summaries``.
        value: The value, as JSON data.
        command: The command's text as written.
        source: The mapping's source path, when it has one.
    """

    path: str
    value: object
    command: str
    source: str | None

    def to_dict(self) -> dict[str, object]:
        """The event as JSON data."""
        return _fields_data(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class StepFailed:
    """A step instance got no usable output and the run goes on (``on_error="continue"``).

    Attributes:
        error: The failure, as ``RunResult.errors`` will list it.
    """

    error: StepFailedError

    def to_dict(self) -> dict[str, object]:
        """The event as JSON data: the failed step instance, the kind of failure and the
        error's message."""
        return {
            "event": "StepFailed",
            "step_id": self.error.step_id,
            "node_path": self.error.node_path,
            "kind": self.error.kind,
            "message": str(self.error),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished:
    """The run ended; the last event.

    Attributes:
        result: What ``run()`` would have returned.
    """

    result: RunResult

    def to_dict(self) -> dict[str, object]:
        """The event as JSON data: the result's ``to_dict()``."""
        return {"event": "RunFinished", "result": self.result.to_dict()}


def _fields_data(event: StepFinished | ValueMapped) -> dict[str, object]:
    """An event whose fields are JSON data already: its class's name, then its fields."""
    data: dict[str, object] = {"event": type(event).__name__}
    data.update((item.name, getattr(event, item.name)) for item in fields(event))
    return data


RunEvent: TypeAlias = StepFinished | ValueMapped | StepFailed | RunFinished
"""One event of a streamed run."""

EventSink: TypeAlias = Callable[[RunEvent], None]
"""Receives a run's events as they happen (on the run's event loop)."""


async def stream_events(
    start: Callable[[EventSink], Awaitable[RunResult]],
) -> AsyncGenerator[RunEvent, None]:
    """The events of the run that ``start`` runs, then `RunFinished`.

    The run goes on while the consumer handles an event (events queue up); closing the
    generator early cancels the run.

    Raises:
        LangTreeError: What the run raised, after the events that came before.
    """
    queue: asyncio.Queue[RunEvent] = asyncio.Queue()
    run = asyncio.ensure_future(start(queue.put_nowait))
    try:
        while True:
            taken = asyncio.ensure_future(queue.get())
            await asyncio.wait({taken, run}, return_when=asyncio.FIRST_COMPLETED)
            if not taken.done():
                taken.cancel()
                break
            yield taken.result()
        while not queue.empty():
            yield queue.get_nowait()
        yield RunFinished(result=run.result())
    finally:
        if not run.done():
            run.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await run
