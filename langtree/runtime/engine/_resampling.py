"""Resampling (DESIGN D12): call a step instance n times at once, then aggregate.

Each sample is an independent `generate()` (with its
own retries; every call waits for the run's ``max_concurrency`` and gets its own trace
record with its sample number). The instance fails when no sample validates, or at once
when a sample fails with a permanent error (the other samples are then cancelled); the
failed samples stay in the trace and are left out of the aggregate. A sample stopped by
a usage limit lets the samples in flight finish before the limit's error propagates.

Per field of the step, over the valid samples:

- ``@resampled[f]->mode``, and any other Enum field: the most frequent member; a tie
  goes to the member seen first (in sample order).
- ``@resampled[f]->mean|median|sum|min|max``: the function over the members' numeric
  values (``median`` of an even count is the mean of the middle two). The field takes the
  member whose value is nearest to the result; a tie goes to the lower value. The result
  itself is kept as ``f_resampled_value`` (a float; see ``RunResult.resampled_values``).
- Any other field: the first valid sample's value.
"""

from __future__ import annotations

import asyncio
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from pydantic import BaseModel

from langtree.dsl import AggregationFunction
from langtree.prompts import StepPrompt
from langtree.runtime.calls._call import Generated, StepCall
from langtree.runtime.faults._failure import RunLimitError
from langtree.runtime.observe._result import TraceRecord

__all__ = ["Aggregate", "Samples", "aggregate", "nearest_member", "sample"]

_NUMERIC: Mapping[str, Callable[[list[float]], float]] = {
    "mean": statistics.fmean,
    "median": lambda values: float(statistics.median(values)),
    "sum": lambda values: float(sum(values)),
    "min": lambda values: float(min(values)),
    "max": lambda values: float(max(values)),
}


@dataclass(frozen=True, slots=True)
class Aggregate:
    """The samples combined into one output.

    Attributes:
        output: An instance of the step's class holding the aggregated values.
        resampled_values: The raw number of each numerically aggregated field.
    """

    output: BaseModel
    resampled_values: dict[str, float]


@dataclass(frozen=True, slots=True)
class Samples:
    """What the samples of one step instance gave.

    Attributes:
        valid: The valid outputs, in sample order.
        attempts: Every attempt of the samples that finished.
        failed: The failed samples' results by sample number.
        fatal: The sample whose failure ended the others (a permanent error), if any.
    """

    valid: list[BaseModel]
    attempts: list[TraceRecord]
    failed: dict[int, Generated]
    fatal: int | None = None


async def sample(call: StepCall, prompt: StepPrompt, count: int) -> Samples:
    """Generate ``count`` samples concurrently.

    A sample that fails with a permanent error cancels the samples still running (they
    would fail the same way, and nothing may call the model for an instance that has
    failed); a sample whose output stays invalid, or whose provider keeps failing, is left
    out of the aggregate. A usage limit that a sample reaches lets the samples in flight
    finish (they are paid for), then propagates.
    """
    # Every sample starts at once; each then waits for its own place under
    # ``max_concurrency``, as any other call does.
    tasks = {
        asyncio.create_task(call.generate(prompt, sample=number)): number
        for number in range(1, count + 1)
    }
    results: dict[int, Generated] = {}
    fatal: int | None = None
    limit: RunLimitError | None = None
    try:
        pending = set(tasks)
        while pending and fatal is None:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                try:
                    results[tasks[task]] = task.result()
                # The limit is kept until the loop ends: the samples in flight hold their
                # places already and are paid for, so they finish first.
                except RunLimitError as error:
                    limit = limit or error
                    continue
                if results[tasks[task]].failure == "permanent":
                    fatal = tasks[task]
        if limit is not None:
            raise limit
    # Whatever ends the wait (a permanent failure, a limit, the instance's cancellation), no
    # sample outlives it; cancelling a finished task does nothing.
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    # In sample order, not in the order the calls returned: the aggregate (the first valid
    # value, a tie of the mode) and the attempts reported are the same in every run.
    ordered = [results[number] for number in sorted(results)]
    return Samples(
        valid=[result.output for result in ordered if result.output is not None],
        attempts=[record for result in ordered for record in result.attempts],
        failed={number: result for number, result in results.items() if result.output is None},
        fatal=fatal,
    )


def aggregate(
    samples: Sequence[BaseModel],
    fields: Sequence[str],
    aggregations: Mapping[str, AggregationFunction],
) -> Aggregate:
    """Combine valid samples of one step instance, field by field (see the module).

    Examples:
        >>> from enum import Enum
        >>> class Level(Enum):
        ...     LOW = 1
        ...     MID = 2
        ...     HIGH = 3
        >>> class Out(BaseModel):
        ...     level: Level
        ...     note: str
        >>> outs = [Out(level=Level.LOW, note="a"), Out(level=Level.HIGH, note="b"),
        ...         Out(level=Level.HIGH, note="c")]
        >>> combined = aggregate(outs, ["level", "note"], {"level": "mean"})
        >>> combined.output, combined.resampled_values
        (Out(level=<Level.MID: 2>, note='a'), {'level': 2.3333333333333335})
    """
    if not samples:
        raise ValueError("aggregate needs at least one valid sample")
    first = samples[0]
    update: dict[str, object] = {}
    numbers: dict[str, float] = {}
    for name in fields:
        values = [getattr(output, name) for output in samples]
        members = [value for value in values if isinstance(value, Enum)]
        function = aggregations.get(name)
        if function is not None and function in _NUMERIC and members:
            number = _NUMERIC[function]([_numeric(member) for member in members])
            update[name] = nearest_member(type(members[0]), number)
            numbers[name] = number
        # An Enum field without a function takes the mode only when every sample holds a
        # member; an optional one left ``None`` by some samples keeps the first value.
        elif members and (function == "mode" or len(members) == len(values)):
            update[name] = _mode(members)
        else:
            update[name] = values[0]
    return Aggregate(output=first.model_copy(update=update), resampled_values=numbers)


def nearest_member(enum: type[Enum], number: float) -> Enum:
    """The member whose numeric value is nearest to ``number``; ties go to the lower.

    Examples:
        >>> from enum import Enum
        >>> class Level(Enum):
        ...     LOW = 1
        ...     HIGH = 3
        >>> nearest_member(Level, 2.0), nearest_member(Level, 2.01)
        (<Level.LOW: 1>, <Level.HIGH: 3>)
    """
    return min(enum, key=lambda member: (abs(_numeric(member) - number), _numeric(member)))


def _numeric(member: Enum) -> float:
    value = member.value
    # ``bool`` is an ``int``, but a member valued ``True`` has no number to average.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{member!r} has no numeric value")
    return float(value)


def _mode(members: list[Enum]) -> Enum:
    """The most frequent member; a tie goes to the one seen first."""
    counts = Counter(members)
    top = max(counts.values())
    return next(member for member in members if counts[member] == top)
