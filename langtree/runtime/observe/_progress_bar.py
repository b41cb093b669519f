"""A progress bar for a run, in a notebook or on a terminal, with no extra dependency.

It is drawn as text rather than with ``tqdm.auto``: tqdm would be a new dependency, and
its notebook bar also needs ipywidgets. It counts what
`RunProgress` counts, from the LangChain callbacks of a
run given a ``config``.
"""

from __future__ import annotations

import importlib
import re
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO
from uuid import UUID

from langtree.runtime.observe._progress import RunProgress

__all__ = ["LiveLine", "ProgressBar", "progress_text"]

WIDTH = 20
"""Cells of the bar."""

_COLOUR_CODES = re.compile(r"\x1b\[[0-9;]*m")


def progress_text(done: int, total: int, failed: int, *, waiting: float | None = None) -> str:
    """One line: the bar, the calls done of those expected, the failures, and the
    longest wait for a provider in progress (its ``Retry-After``), if any.

    Examples:
        >>> progress_text(3, 6, 1)
        'langtree ▕██████████··········▏ 3/6 calls, 1 failed'
        >>> progress_text(3, 6, 1, waiting=300)
        'langtree ▕██████████··········▏ 3/6 calls, 1 failed, waiting 300 s for the provider'
    """
    filled = WIDTH * done // total if total else WIDTH
    bar = "█" * filled + "·" * (WIDTH - filled)
    line = f"langtree ▕{bar}▏ {done}/{total} calls, {failed} failed"
    return line if waiting is None else f"{line}, waiting {waiting:g} s for the provider"


class LiveLine:
    """A line rewritten in place on a terminal (``\\r``), each time padded with spaces to
    cover the line before it, which may have been longer (a wait for the provider that
    ended); colour codes take no room.

    Examples:
        >>> import io
        >>> line, terminal = LiveLine(), io.StringIO()
        >>> line.draw(terminal, "3/6 calls, waiting 2 s", end="\\r")
        >>> line.draw(terminal, "4/6 calls", end="\\n")
        >>> terminal.getvalue()
        '3/6 calls, waiting 2 s\\r4/6 calls             \\n'
    """

    def __init__(self) -> None:
        self._width = 0

    def draw(self, stream: TextIO, text: str, *, end: str) -> None:
        """Write ``text`` over the line; ``end="\\n"`` ends it, and the next draw starts
        a new one."""
        width = len(_COLOUR_CODES.sub("", text))
        stream.write(text + " " * (self._width - width) + end)
        stream.flush()
        self._width = 0 if end == "\n" else width


class ProgressBar(RunProgress):
    """Shows a run's model calls as they finish; pass it as a LangChain callback:

    ```python
    bar = ProgressBar(len(structure.prompts(inputs)))
    result = structure.run(inputs, config={"callbacks": [bar]})
    ```

    In a Jupyter kernel the bar is one output line, shown where the bar is made and
    updated in place (IPython's display updates, which every Jupyter frontend supports).
    Elsewhere it is a line on stderr, rewritten in place on a terminal; a log gets only
    the last line. One bar follows one run.

    Args:
        total: The calls expected, e.g. ``len(structure.prompts(inputs))``; the bar grows
            when the run makes more (retries, resampling, list elements only known once
            generated).
        interval: The fewest seconds between two redraws (the last one is always drawn,
            and so is a call that starts or stops waiting for its provider), so that a
            run of thousands of calls does not flood the notebook.
        stream: Where the line goes outside a notebook (default: ``sys.stderr``).
        clock: Seconds from any fixed point, read to space the redraws (default:
            ``time.monotonic``).
    """

    def __init__(
        self,
        total: int,
        *,
        interval: float = 0.1,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        super().__init__(total, on_change=self._changed)
        self._interval = interval
        self._stream = stream
        self._clock = clock
        # None until the first redraw, which is never held back: a clock's zero is any
        # point (time.monotonic counts from boot), so no time can stand for "never".
        self._drawn_at: float | None = None
        self._drawn_waiting: float | None = None
        self._line = LiveLine()
        self._handle = _notebook_handle(progress_text(0, total, 0))

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Draw the last line once the run itself (the outermost chain) has ended."""
        super().on_chain_end(outputs, run_id=run_id, **kwargs)
        if run_id == self._root:
            self._draw_last()

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Draw the last line once the run itself (the outermost chain) has failed."""
        super().on_chain_error(error, run_id=run_id, **kwargs)
        if run_id == self._root:
            self._draw_last()

    def _changed(self, done: int, total: int, failed: int) -> None:
        now = self._clock()
        waiting = self.waiting
        # A wait for the provider may last minutes with nothing else to redraw the line:
        # its start and end are drawn whatever the interval.
        due = (
            self._drawn_at is None
            or now - self._drawn_at >= self._interval
            or waiting != self._drawn_waiting
        )
        if self._live() and due:
            self._drawn_at, self._drawn_waiting = now, waiting
            self._draw(progress_text(done, total, failed, waiting=waiting), end="\r")

    def _draw_last(self) -> None:
        self._draw(progress_text(self.done, self.total, self.failed), end="\n")

    def _live(self) -> bool:
        """Whether the line can be redrawn in place (a log file only gets the last)."""
        return self._handle is not None or (self._stream or sys.stderr).isatty()

    def _draw(self, text: str, *, end: str) -> None:
        if self._handle is not None:
            self._handle.update({"text/plain": text}, raw=True)
            return
        self._line.draw(self._stream or sys.stderr, text, end=end)


def _notebook_handle(text: str) -> Any:
    """A display showing ``text`` when running in a Jupyter kernel (else ``None``), to
    update in place.

    IPython is looked for among the loaded modules: a kernel has loaded it, and a script
    should neither pay for importing it nor LangTree depend on it.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if getattr(shell, "kernel", None) is None:
        return None
    display = importlib.import_module("IPython.display")
    return display.display({"text/plain": text}, raw=True, display_id=True)
