"""A dataset run's live line: on a terminal each redraw covers the whole line before it,
which may have been longer; elsewhere only the last line is written. The time left and
the wall time come from the line's clock."""

import io
from collections.abc import Iterator

from langtree.cli._rows_progress import RowsProgress
from langtree.errors import ExecutionError
from langtree.runtime.datasets._dataset import RowResult


class Terminal(io.StringIO):
    """Standard error as a terminal."""

    def isatty(self) -> bool:
        return True


def clock(*times: float) -> Iterator[float]:
    yield from times


def test_a_shorter_line_leaves_no_character_of_the_longer_one() -> None:
    terminal = Terminal()
    times = clock(0.0, 700.0, 710.0, 720.0)
    progress = RowsProgress(total=3, skipped=0, stream=terminal, clock=lambda: next(times))

    progress.start()
    progress.add(RowResult(index=0, error=ExecutionError("the row failed")))
    progress.add(RowResult(index=1, error=ExecutionError("the row failed")))
    progress.add(RowResult(index=2, error=ExecutionError("the row failed")))
    progress.finish()

    # The time left shrinks from 23m20s to 5m55s to done: each shorter line is padded.
    assert terminal.getvalue() == (
        "langtree: 0/3 rows, 0 calls, 0 tokens, ETA unknown\r"
        "langtree: 1/3 rows (1 failed), 0 calls, 0 tokens, ETA 23m20s\r"
        "langtree: 2/3 rows (2 failed), 0 calls, 0 tokens, ETA 5m55s \r"
        "langtree: 3/3 rows (3 failed), 0 calls, 0 tokens, done     \r"
        "langtree: 3/3 rows (3 failed), 0 calls, 0 tokens, done, 720.00s wall time\n"
    )


def test_off_a_terminal_only_the_last_line_is_written() -> None:
    log = io.StringIO()
    times = clock(0.0, 9.5)
    progress = RowsProgress(total=2, skipped=1, stream=log, clock=lambda: next(times))

    progress.start()
    progress.add(RowResult(index=1, error=ExecutionError("the row failed")))
    progress.finish()

    assert log.getvalue() == (
        "langtree: 2/2 rows (1 failed), 0 calls, 0 tokens, done, 9.50s wall time\n"
    )
