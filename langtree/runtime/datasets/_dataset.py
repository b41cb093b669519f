"""Dataset runs: one tree over many rows of inputs, each row a run of its own.

Rows are read lazily and run concurrently; at most ``rows_in_flight`` rows are started
and not yet handed out, so memory is bounded by the rows in flight, not the dataset. The
rows share one `SharedCalls`: ``max_concurrency`` caps
the model calls of all rows together, ``usage_limits`` hold for the whole dataset, a
provider's ``Retry-After`` pauses every row's calls to that model, and the journal and
cache are opened once. A row that fails (its inputs do not fit, a step fails, its
deadline passes, or under ``on_error="continue"`` a task of it does not validate)
becomes a `RowResult` with the error; the other rows go on. A
usage limit stops the dataset: no row starts after it, the rows in flight finish (with
the limit's error), and the iteration then raises it. So does a journal or cache that
cannot record an answer (`JournalWriteError`): the file is every row's.
"""

from __future__ import annotations

import asyncio
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
    Sized,
)
from dataclasses import dataclass
from typing import TypeAlias, TypeGuard

from langtree.errors import LangTreeError, problems_error
from langtree.runtime._settings import RunSettings
from langtree.runtime.calls._provider import LLMProvider
from langtree.runtime.datasets._shared import SharedCalls
from langtree.runtime.durable._journal import JournalWriteError
from langtree.runtime.faults._failure import RunLimitError
from langtree.runtime.observe._result import RunResult

__all__ = [
    "DatasetOptions",
    "RowResult",
    "Rows",
    "dataset_options",
    "listed_positions",
    "run_dataset",
]

Rows: TypeAlias = Iterable[object] | AsyncIterable[object]
"""The rows of a dataset: each what ``run`` takes as ``inputs``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RowResult:
    """The outcome of one row of a dataset.

    Attributes:
        index: The row's position in the rows given (0 for the first).
        result: The row's run (``None``: it stopped with ``error``). A run that went on
            after a failed step (``on_error="continue"``) is here even when a task of
            it does not validate; ``error`` then says why.
        error: Why the row failed (``None``: it did not): a ``StructureError`` for
            inputs that do not fit, a ``StepFailedError``, a ``RunLimitError``, or
            another ``ExecutionError`` (``result.failure()`` for a run that went on
            after failures and holds a task that does not validate). An
            ``ExecutionError`` raised once the row's run had started holds what the row
            had finished in ``error.result``.
    """

    index: int
    result: RunResult | None = None
    error: LangTreeError | None = None

    @property
    def ok(self) -> bool:
        """Whether the row ran to a result whose every task validated."""
        return self.error is None


RunRow: TypeAlias = Callable[[object, SharedCalls], Awaitable[RunResult]]
"""Runs one row's inputs with the dataset's shared calls."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DatasetOptions:
    """How a dataset's rows are run and handed out.

    Attributes:
        ordered: Hand rows out in input order (``False``: as they finish).
        rows_in_flight: The most rows started and not yet handed out.
        skip: Positions of rows not to run (e.g. those an earlier run wrote out), each
            a position of the rows (from 0).
        on_row: Called with each row's result as soon as it finishes, before it is
            handed out (in input order, a row may wait for an earlier one).
    """

    ordered: bool = True
    rows_in_flight: int = 32
    skip: frozenset[int] = frozenset()
    on_row: Callable[[RowResult], object] | None = None


def dataset_options(
    rows: object,
    *,
    ordered: object,
    rows_in_flight: object,
    skip: object,
    on_row: object,
) -> DatasetOptions:
    """The options of a dataset run, checked (``rows`` is checked to be rows).

    Raises:
        ExecutionError: Listing every argument that is wrong, with a hint.
    """
    problems = list(_problems(rows, ordered, rows_in_flight, skip, on_row))
    if problems:
        raise problems_error(problems, what="arguments", hint=_HINT)
    assert isinstance(rows_in_flight, int)
    assert isinstance(skip, Collection)
    return DatasetOptions(
        ordered=bool(ordered),
        rows_in_flight=rows_in_flight,
        skip=frozenset(skip),
        on_row=on_row,  # type: ignore[arg-type]
    )


_HINT = "e.g. run_many([{TaskReview: {...}}, ...], ordered=False, rows_in_flight=64)"


def _problems(
    rows: object, ordered: object, rows_in_flight: object, skip: object, on_row: object
) -> Iterator[str]:
    rows_fit = isinstance(rows, Iterable | AsyncIterable) and not isinstance(
        rows, Mapping | str | bytes
    )
    if not rows_fit:
        kind = "a dict" if isinstance(rows, Mapping) else repr(type(rows).__name__)
        yield (
            f"rows must be an iterable of inputs (one per run), got {kind}; "
            "to run one set of inputs, use run()"
        )
    if not isinstance(ordered, bool):
        yield f"ordered must be True or False, got {ordered!r}"
    if isinstance(rows_in_flight, bool) or not isinstance(rows_in_flight, int):
        yield f"rows_in_flight must be a whole number, got {rows_in_flight!r}"
    elif rows_in_flight < 1:
        yield f"rows_in_flight must be at least 1, got {rows_in_flight!r}"
    if not isinstance(skip, Collection) or not all(
        isinstance(index, int) and not isinstance(index, bool) for index in skip
    ):
        yield f"skip must be a collection of row positions (whole numbers), got {skip!r}"
    else:
        # The rows' length is checked here when it is known; rows of unknown length
        # (a generator) are checked once they are exhausted (see _run_rows).
        count = len(rows) if rows_fit and isinstance(rows, Sized) else None
        yield from _skip_problems(skip, count)
    if on_row is not None and not callable(on_row):
        yield f"on_row must be a function taking a RowResult, or None, got {on_row!r}"


def _skip_problems(skip: Collection[int], count: int | None) -> Iterator[str]:
    """What is wrong with the positions in ``skip`` of ``count`` rows (``None``: a number
    not known yet)."""
    negative = [index for index in skip if index < 0]
    if negative:
        yield (
            f"skip holds negative row positions ({listed_positions(negative)}): positions "
            "count the rows from 0, the first row is 0"
        )
    if count is None:
        return
    past = [index for index in skip if index >= count]
    if past:
        yield (
            f"skip holds row positions past the last row ({listed_positions(past)}): "
            f"{_rows_counted(count)}"
        )


def listed_positions(positions: Iterable[int]) -> str:
    """Row positions for a message, in order: the first five of more, and their number.

    Examples:
        >>> listed_positions([12, 10, 11, 13, 14, 15])
        '10, 11, 12, 13, 14, ... 6 in all'
    """
    ordered = sorted(positions)
    if len(ordered) <= 5:
        return ", ".join(map(str, ordered))
    return f"{', '.join(map(str, ordered[:5]))}, ... {len(ordered)} in all"


def _rows_counted(count: int) -> str:
    if count == 0:
        return "there are no rows"
    if count == 1:
        return "there is 1 row, at position 0"
    return f"there are {count} rows, at positions 0 to {count - 1}"


async def run_dataset(
    rows: Rows,
    run_row: RunRow,
    settings: RunSettings,
    provider: LLMProvider,
    options: DatasetOptions,
) -> AsyncGenerator[RowResult, None]:
    """Run every row with calls shared as the settings say, and hand out the results.

    Raises:
        ExecutionError: The journal or the cache cannot be opened, or (after the last
            row) ``skip`` holds positions past the end of rows whose number was not
            known up front.
        RunLimitError: A usage limit of the dataset was reached.
        JournalWriteError: The journal or the cache could not record an answer.
    """
    shared = SharedCalls.start(settings, provider, many=True)
    try:
        async for row in _run_rows(rows, run_row, shared, options):
            yield row
    finally:
        shared.close()
    # The answers still queued when the last row ended are committed on closing.
    shared.files.check_written()


async def _run_rows(
    rows: Rows, run_row: RunRow, shared: SharedCalls, options: DatasetOptions
) -> AsyncIterator[RowResult]:
    """Run every row and hand out its result; see the module docstring.

    Raises:
        RunLimitError: A usage limit of the dataset was reached (after the rows that
            were in flight are handed out).
        JournalWriteError: The journal or the cache could not record an answer (after
            the rows that were in flight are handed out).
        ExecutionError: ``skip`` holds positions past the last row (after every row is
            handed out: rows of unknown length are counted as they are read).
    """
    window = _Window(run_row, shared, options)
    source = _Source(rows, options.skip)
    try:
        while True:
            while not source.exhausted and window.has_room():
                row = await source.next()
                if row is not None:
                    window.start(*row)
            if window.empty():
                break
            for result in await window.next_done():
                yield result
        if window.stopped is not None:
            raise window.stopped
        problems = list(_skip_problems(options.skip, source.count))
        if problems:
            raise problems_error(problems, what="arguments", hint=_HINT)
    finally:
        await window.cancel()


class _Window:
    """The rows started and not yet handed out."""

    def __init__(self, run_row: RunRow, shared: SharedCalls, options: DatasetOptions) -> None:
        self.run_row = run_row
        self.shared = shared
        self.options = options
        self.running: dict[asyncio.Task[RowResult], int] = {}
        self.done: dict[int, RowResult] = {}
        self.order: list[int] = []
        """Positions of started rows not yet handed out, in input order."""
        self.stopped: RunLimitError | JournalWriteError | None = None

    def has_room(self) -> bool:
        return self.stopped is None and len(self.order) < self.options.rows_in_flight

    def empty(self) -> bool:
        return not self.order

    def start(self, index: int, inputs: object) -> None:
        task = asyncio.ensure_future(self._run(index, inputs))
        self.running[task] = index
        self.order.append(index)

    async def next_done(self) -> list[RowResult]:
        """The rows that may be handed out next (waiting for at least one to finish)."""
        while True:
            ready = self._ready()
            if ready:
                return ready
            finished, _ = await asyncio.wait(self.running, return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                del self.running[task]
                self._finished(task.result())

    def _finished(self, row: RowResult) -> None:
        self.done[row.index] = row
        if _stops_every_row(row.error):
            self.stopped = self.stopped or row.error
        if self.options.on_row is not None:
            self.options.on_row(row)

    def _ready(self) -> list[RowResult]:
        if not self.options.ordered:
            ready = list(self.done.values())
            self.done.clear()
            for row in ready:
                self.order.remove(row.index)
            return ready
        ready = []
        while self.order and self.order[0] in self.done:
            ready.append(self.done.pop(self.order.pop(0)))
        return ready

    async def _run(self, index: int, inputs: object) -> RowResult:
        try:
            result = await self.run_row(inputs, self.shared)
        except LangTreeError as error:
            return RowResult(index=index, error=error)
        return RowResult(index=index, result=result, error=result.failure())

    async def cancel(self) -> None:
        """Cancel the rows still running (the iteration ended early)."""
        for task in self.running:
            task.cancel()
        if self.running:
            await asyncio.wait(self.running)


def _stops_every_row(
    error: LangTreeError | None,
) -> TypeGuard[RunLimitError | JournalWriteError]:
    """Whether a row's error concerns the whole dataset: a usage limit (a row's deadline
    is its own), or a journal or cache that cannot record an answer."""
    if isinstance(error, RunLimitError):
        return error.limit != "deadline"
    return isinstance(error, JournalWriteError)


class _Source:
    """The rows with their positions, those in ``skip`` left out."""

    def __init__(self, rows: Rows, skip: frozenset[int]) -> None:
        self.rows = _each(rows)
        self.skip = skip
        self.count = 0
        """The rows read so far, those skipped included."""
        self.exhausted = False

    async def next(self) -> tuple[int, object] | None:
        """The next row not skipped, with its position (``None``: no row is left)."""
        async for row in self.rows:
            index = self.count
            self.count += 1
            if index not in self.skip:
                return index, row
        self.exhausted = True
        return None


async def _each(rows: Rows) -> AsyncIterator[object]:
    """The rows, from an iterable or an async iterable."""
    if isinstance(rows, AsyncIterable):
        async for row in rows:
            yield row
        return
    for row in rows:
        yield row
