"""What the command line writes: standard output, and the lines of a results file.

A disk that fills up (or a device that fails) makes a write raise ``OSError``; here it
becomes an `OutputError`, one message, and the command stops. A reader that went away
(``| head -1``) is not an error: ``BrokenPipeError`` passes through, and ``main`` ends
quietly with status 141.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from types import TracebackType

from langtree.errors import LangTreeError

__all__ = ["LineFile", "OutputError", "StandardLines", "emit", "flush_stdout", "silence_stdout"]


class OutputError(LangTreeError, OSError):
    """Standard output or a results file refused what was written (a full disk)."""


def emit(text: str) -> None:
    """Print ``text`` and a newline on standard output.

    Raises:
        OutputError: Standard output refused it.
        BrokenPipeError: The reader went away.
    """
    try:
        print(text)
    except BrokenPipeError:
        raise
    except OSError as error:
        raise _stdout_error(error) from None


def flush_stdout() -> None:
    """Write out what standard output holds.

    Raises:
        OutputError: Standard output refused it.
        BrokenPipeError: The reader went away.
    """
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as error:
        raise _stdout_error(error) from None


def _stdout_error(error: OSError) -> OutputError:
    # What standard output still holds would fail again when Python flushes it at exit
    # ("Exception ignored ... OSError"): it goes to the null device instead.
    silence_stdout()
    return OutputError(f"Cannot write to standard output: {error}")


def silence_stdout() -> None:
    """Point standard output at the null device, so that Python's final flush meets no
    broken pipe or full disk.

    What Python's documentation advises for a program whose output is piped into
    ``head`` (see "Note on SIGPIPE" in the ``signal`` module's documentation).
    """
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, descriptor)
    os.close(devnull)


class StandardLines:
    """Lines written to standard output, each flushed as soon as it is written.

    Attributes:
        lines: How many lines were written whole.
    """

    def __init__(self) -> None:
        self.lines = 0

    def add(self, line: str) -> None:
        """Write ``line`` (which does not end with a newline) and flush it.

        Raises:
            OutputError: Standard output refused it.
            BrokenPipeError: The reader went away.
        """
        emit(line)
        flush_stdout()
        self.lines += 1


class LineFile:
    """A file that takes whole lines at its end, opened to append.

    Each line is written straight to the file (no buffer that a later flush or the
    closing would try again): a line that the disk cannot take whole is taken back, so
    that the file ends with the last line written whole.

    Attributes:
        path: The file.
        lines: How many lines were written whole.
    """

    def __init__(self, path: Path) -> None:
        """Open ``path`` to append (it is created if it does not exist).

        Raises:
            OutputError: The file cannot be opened.
        """
        self.path = path
        self.lines = 0
        try:
            self._file = path.open("ab", buffering=0)
        except OSError as error:
            raise self._error(error) from None
        # Where the last whole line ends, to cut a part-written line back to; ``None`` for
        # a pipe or a device, which cannot be cut back (what it took is read already).
        self._end = self._file.seek(0, os.SEEK_END) if self._file.seekable() else None

    def add(self, line: str) -> None:
        """Write ``line`` (which does not end with a newline) and its newline.

        Raises:
            OutputError: The file refused it; what of it was written is taken back.
        """
        data = memoryview(f"{line}\n".encode())
        try:
            while data:
                # A write may take part of the data, as much as the disk had room for.
                data = data[self._file.write(data) :]
        except OSError as error:
            self._take_back()
            raise self._error(error) from None
        if self._end is not None:
            self._end = self._file.tell()
        self.lines += 1

    def _take_back(self) -> None:
        """Cut the file back to its last whole line (if even that fails, the next run
        drops the line cut off; see ``langtree.cli._rows``)."""
        if self._end is None:
            return
        with contextlib.suppress(OSError):
            self._file.truncate(self._end)

    def _error(self, error: OSError) -> OutputError:
        return OutputError(f"Cannot write results to {str(self.path)!r}: {error}")

    def __enter__(self) -> LineFile:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            self._file.close()
        except OSError as failure:
            if error is None:
                raise self._error(failure) from None
