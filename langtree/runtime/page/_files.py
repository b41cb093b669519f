"""A run's page from a file: a saved result (the JSON of `RunResult.to_json()`) or a
journal (a SQLite file; `langtree.runtime.page._journal_run`), told apart by their first
bytes, whatever their names.

The file may come from anyone, so it is read as `langtree._local_files` reads a file:
only a regular file (a folder, a pipe or a device is refused without waiting), and only
up to ``max_bytes`` (`DEFAULT_MAX_RUN_BYTES` unless raised), since the whole run is held
in memory to make its page.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from langtree._local_files import (
    FileMissing,
    FileTooLarge,
    FileUnreadable,
    NotAFile,
    open_regular,
    read_at_most,
)
from langtree.errors import LangTreeError
from langtree.runtime.page._journal_run import journal_run
from langtree.runtime.page._render import page_html
from langtree.runtime.page._saved import RUN_HINT, SavedRun, saved_run

__all__ = ["DEFAULT_MAX_RUN_BYTES", "read_run", "write_page"]

DEFAULT_MAX_RUN_BYTES = 100 * 1024 * 1024
"""The largest run read by default: 100 MiB, the saved result of some ten thousand calls
with long prompts, and more than a browser shows in one page with ease."""

SQLITE_HEADER = b"SQLite format 3\x00"
"""How every SQLite database file begins."""

_REGULAR_ONLY = (
    "langtree show reads only a regular file (a pipe or a device may block or never end)"
)


def read_run(path: Path, max_bytes: int = DEFAULT_MAX_RUN_BYTES) -> SavedRun:
    """The page's data of a saved result or a journal.

    Args:
        path: The file.
        max_bytes: The largest file read.

    Raises:
        LangTreeError: The file does not exist or cannot be read, is not a regular file,
            is larger than ``max_bytes``, is neither JSON nor SQLite, or is not a saved
            result or a journal (the message says what is wrong and where).
    """
    descriptor = _opened(path, max_bytes)
    try:
        head = read_at_most(descriptor, len(SQLITE_HEADER))
        journal = head == SQLITE_HEADER
        data = b"" if journal else head + read_at_most(descriptor, max_bytes + 1 - len(head))
    except OSError as error:
        raise _unreadable(path, error) from None
    finally:
        os.close(descriptor)
    if journal:
        return journal_run(path)
    if len(data) > max_bytes:
        # A file that grew while it was read, or that reports no size (/proc).
        raise _too_large(path, max_bytes, None)
    return saved_run(_json_data(path, data), str(path))


def write_page(run: SavedRun, path: Path) -> None:
    """Write the page of a run to ``path`` (UTF-8, as the page declares).

    Raises:
        LangTreeError: The file cannot be written.
    """
    try:
        path.write_text(page_html(run), encoding="utf-8")
    except OSError as error:
        raise LangTreeError(
            f"The page cannot be written to {str(path)!r}: {error.strerror}\n"
            "  hint: give a path in a folder that exists and that you may write to"
        ) from None


def _opened(path: Path, max_bytes: int) -> int:
    """The file opened for reading, once it is known to be a regular file of at most
    ``max_bytes``.

    Raises:
        LangTreeError: It is not, or it cannot be opened.
    """
    opened = open_regular(path, max_bytes)
    match opened:
        case int():
            return opened
        case FileMissing():
            raise LangTreeError(f"No such file: {str(path)!r}\n  hint: {RUN_HINT}")
        case NotAFile(kind=kind):
            raise _not_a_file(path, kind)
        case FileTooLarge(size=size):
            raise _too_large(path, max_bytes, size)
        case FileUnreadable(error=error):
            raise _unreadable(path, error)


def _not_a_file(path: Path, kind: str) -> LangTreeError:
    hint = RUN_HINT if kind == "a folder" else f"{RUN_HINT}; {_REGULAR_ONLY}"
    return LangTreeError(f"{str(path)!r} is {kind}, not a file\n  hint: {hint}")


def _too_large(path: Path, max_bytes: int, size: int | None) -> LangTreeError:
    if size is None:
        return LangTreeError(
            f"{str(path)!r} holds more than the {max_bytes:,} bytes that langtree show reads\n"
            "  hint: give --max-bytes a larger number, or show a run of fewer calls"
        )
    return LangTreeError(
        f"{str(path)!r} holds {size:,} bytes, more than the {max_bytes:,} that langtree "
        f"show reads\n  hint: give --max-bytes a larger number, e.g. --max-bytes {size}, or "
        "show a run of fewer calls"
    )


def _unreadable(path: Path, error: OSError) -> LangTreeError:
    return LangTreeError(
        f"{str(path)!r} cannot be read: {error.strerror or error}\n"
        "  hint: check that this process may read the file"
    )


def _json_data(path: Path, data: bytes) -> object:
    try:
        return json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise _not_json(path, f"byte {error.start} is not UTF-8") from None
    except json.JSONDecodeError as error:
        raise _not_json(path, f"{error.msg} at line {error.lineno}, column {error.colno}") from None
    except RecursionError:
        # The standard library's decoder recurses once per level of nesting.
        raise _not_json(path, "it nests too deep for Python's json module") from None


def _not_json(path: Path, why: str) -> LangTreeError:
    return LangTreeError(
        f"{str(path)!r} is neither a saved result nor a journal: it is not JSON ({why})\n"
        f"  hint: {RUN_HINT}"
    )
