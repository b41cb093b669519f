"""Opening a local file named by someone else: only a regular file, opened without
waiting, read up to a size.

A path a user gives may name a folder, a named pipe (opening it waits for a writer that
may never come), a device (``/dev/zero`` never ends) or a file larger than the reader
can hold. It is opened without blocking, its type is read from the opened file rather
than from the path (so that what is checked is what is read), and it is read at most one
byte past a limit, so that a file that grows, or reports no size (``/proc``), cannot
pass it either. `open_regular()` opens such a file, or says why it does not
(a `FileRefusal`), in words each caller turns into its own message. Asset files
(`langtree.prompts._asset_files`), the runs ``langtree show`` reads and the inputs,
settings and datasets the command line reads are read this way.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "READ_FLAGS",
    "FileMissing",
    "FileRefusal",
    "FileTooLarge",
    "FileUnreadable",
    "NotAFile",
    "open_regular",
    "read_at_most",
    "read_regular",
    "special_kind",
]

READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # opening a named pipe must not wait for a writer
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
"""The flags of ``os.open`` for such a file."""

_CHUNK = 1024 * 1024
_KINDS: Sequence[tuple[Callable[[int], bool], str]] = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def special_kind(mode: int) -> str | None:
    """What a file that is not a regular file is, by its ``st_mode`` (``None``: a regular
    file).

    Examples:
        >>> special_kind(stat.S_IFIFO), special_kind(stat.S_IFREG) is None
        ('a named pipe', True)
    """
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def read_at_most(descriptor: int, limit: int, keep_time: Callable[[], None] | None = None) -> bytes:
    """Up to ``limit`` bytes of an open file, a chunk at a time.

    Args:
        descriptor: The open file.
        limit: The most bytes read.
        keep_time: Called before each chunk is read; raises to stop the read (``None``:
            nothing to call).

    Raises:
        OSError: The file cannot be read.
    """
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        if keep_time is not None:
            keep_time()
        chunk = os.read(descriptor, min(_CHUNK, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


@dataclass(frozen=True, slots=True, kw_only=True)
class FileMissing:
    """No file has the path."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NotAFile:
    """The path names something other than a regular file.

    Attributes:
        kind: What it names, in `special_kind()`'s words (``"a folder"``).
    """

    kind: str


@dataclass(frozen=True, slots=True, kw_only=True)
class FileTooLarge:
    """The file holds more than the limit.

    Attributes:
        size: How many bytes it holds (``None``: more than the limit were read, from a
            file that grew or that reports no size).
    """

    size: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class FileUnreadable:
    """The file cannot be opened or read.

    Attributes:
        error: What the system said.
    """

    error: OSError


FileRefusal = FileMissing | NotAFile | FileTooLarge | FileUnreadable
"""Why `open_regular()` or `read_regular()` did not give a file."""


def open_regular(path: Path, max_bytes: int | None = None) -> int | FileRefusal:
    """The file opened for reading (a descriptor the caller closes), once it is known to be
    a regular file of at most ``max_bytes``; or why it is not opened.

    Args:
        path: The file.
        max_bytes: The largest file opened (``None``: any size, for a file read a line
            at a time).
    """
    try:
        descriptor = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        return FileMissing()
    except IsADirectoryError:
        # Where a folder cannot be opened at all (Windows), rather than read from.
        return NotAFile(kind="a folder")
    except OSError as error:
        return FileUnreadable(error=error)
    refusal = _refusal(descriptor, max_bytes)
    if refusal is not None:
        os.close(descriptor)
        return refusal
    return descriptor


def read_regular(path: Path, max_bytes: int) -> bytes | FileRefusal:
    """The bytes of a regular file of at most ``max_bytes``; or why it is not read."""
    opened = open_regular(path, max_bytes)
    if not isinstance(opened, int):
        return opened
    try:
        data = read_at_most(opened, max_bytes + 1)
    except OSError as error:
        return FileUnreadable(error=error)
    finally:
        os.close(opened)
    return FileTooLarge(size=None) if len(data) > max_bytes else data


def _refusal(descriptor: int, max_bytes: int | None) -> FileRefusal | None:
    """Why the open file is not read, by its status (``None``: it is read)."""
    try:
        status = os.fstat(descriptor)
    except OSError as error:
        return FileUnreadable(error=error)
    kind = special_kind(status.st_mode)
    if kind is not None:
        return NotAFile(kind=kind)
    if max_bytes is not None and status.st_size > max_bytes:
        return FileTooLarge(size=status.st_size)
    return None
