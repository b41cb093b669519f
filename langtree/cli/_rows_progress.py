"""A dataset run's progress: one line on standard error of rows, calls, failures, tokens
and the time left.

On a terminal the line is drawn as the run starts, before any row has finished (the
rows run together, so the first may finish only after the calls of many), and redrawn
in place as each row finishes, every redraw covering the whole line before it
(`LiveLine`); elsewhere (a log, a pipe) only the last line is written.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from langtree.errors import ExecutionError
from langtree.runtime import LiveLine, RowResult, RunResult, TraceRecord, run_tokens

__all__ = ["RowsProgress"]


class RowsProgress:
    """Counts a dataset run's rows and shows them on ``stream``.

    Args:
        total: The rows of the input.
        skipped: The rows an earlier run's output already holds.
        stream: Where the line goes (standard error); redrawn in place when it is a
            terminal.
        clock: Seconds from any fixed point, read for the time left and the wall time
            (default: ``time.perf_counter``).
    """

    def __init__(
        self,
        *,
        total: int,
        skipped: int,
        stream: TextIO,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.total = total
        self.skipped = skipped
        self.failed = 0
        self._stream = stream
        self._clock = clock
        self._line = LiveLine() if stream.isatty() else None
        self._done = 0
        self._calls = 0
        self._replayed = 0
        self._tokens = 0
        self._started = 0.0

    def start(self) -> None:
        """Start the clock and, on a terminal, draw the line."""
        self._started = self._clock()
        self._redraw()

    def add(self, row: RowResult) -> None:
        """Count a finished row (and redraw the line)."""
        self._done += 1
        self.failed += not row.ok
        trace = _trace(row)
        self._calls += sum(not record.replayed for record in trace)
        self._replayed += sum(record.replayed for record in trace)
        self._tokens += run_tokens(trace)
        self._redraw()

    def finish(self) -> None:
        """Write the last line, with the wall time (over the live line, when there is
        one)."""
        seconds = self._clock() - self._started
        text = f"{self._text()}, {seconds:.2f}s wall time"
        if self._line is None:
            print(text, file=self._stream, flush=True)
        else:
            self._line.draw(self._stream, text, end="\n")

    def _redraw(self) -> None:
        if self._line is not None:
            self._line.draw(self._stream, self._text(), end="\r")

    def _text(self) -> str:
        rows = self.skipped + self._done
        failed = f" ({self.failed} failed)" if self.failed else ""
        replayed = f" (+{self._replayed} replayed)" if self._replayed else ""
        return (
            f"langtree: {rows}/{self.total} rows{failed}, {self._calls} calls{replayed}, "
            f"{self._tokens:,} tokens, {self._left()}"
        )

    def _left(self) -> str:
        left = self.total - self.skipped - self._done
        if left <= 0:
            return "done"
        if not self._done:
            return "ETA unknown"
        seconds = (self._clock() - self._started) / self._done * left
        minutes, rest = divmod(round(seconds), 60)
        return f"ETA {minutes}m{rest:02d}s"


def _trace(row: RowResult) -> tuple[TraceRecord, ...]:
    """The row's calls, those of a failed row's partial result included."""
    if row.result is not None:
        return row.result.trace
    # Every ExecutionError of a run carries what had finished (None before any call).
    partial = row.error.result if isinstance(row.error, ExecutionError) else None
    return partial.trace if isinstance(partial, RunResult) else ()
