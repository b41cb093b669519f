"""Opening a local file named by someone else: only a regular file, opened without
waiting, read up to a size.

A path a user gives may name a folder, a named pipe (opening it waits for a writer that
may never come), a device (``/dev/zero`` never ends) or a file larger than the reader
can hold. It is opened without blocking, its type is read from the opened file rather
than from the path (so that what is checked is what is read), and it is read at most one
byte past a limit, so that a file that grows, or reports no size (``/proc``), cannot
pass it either. Asset files (`langtree.prompts.asset_files`) and the runs ``langtree
show`` reads are read this way.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence

__all__ = ["READ_FLAGS", "read_at_most", "special_kind"]

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
