"""Reading an asset's local file: from the folders a run names, a regular file, up to a size.

An `Asset` with a ``path`` may have come from anyone: a string in JSON inputs, a dataset
row, a command that maps text into an asset field, or the caller's own code. LangTree
cannot tell them apart (values are copied and converted on their way into a run), so
every path is read under the same rules (`AssetFiles`):

- **Only from the named folders** (``asset_folders``; none by default). The path is
  resolved first, links and ``..`` included, and must lie inside a folder, itself
  resolved; the file opened is the resolved path, without following a link put in its
  place since.
- **Only a regular file.** It is opened without blocking (a named pipe with no writer
  would wait forever) and its type is read from the opened file, not from the path, so
  that what is checked is what is read.
- **Only up to ``max_asset_bytes``** (20 MiB by default, what OpenAI takes for one image
  and Gemini for one request's inline data). At most one byte more is read, so a file
  that grows, or reports no size (``/proc``), still cannot pass it.
- **In chunks, checking the run's time before each**: a regular file of bounded size
  reads in milliseconds from a local disk, and a slow one (a network mount) stops at
  the run's deadline instead of running past it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from langtree._local_files import READ_FLAGS, read_at_most, special_kind
from langtree.errors import ExecutionError

__all__ = ["DEFAULT_MAX_ASSET_BYTES", "AssetFileRefusal", "AssetFiles", "refused_files_error"]

DEFAULT_MAX_ASSET_BYTES = 20 * 1024 * 1024
"""The default ``max_asset_bytes``: 20 MiB."""

# The resolved path's last part may not become a link.
_OPEN_FLAGS = READ_FLAGS | getattr(os, "O_NOFOLLOW", 0)
_OUTSIDE_HINT = (
    "LangTree reads local files only from the folders a run names: "
    "RunStructure({'asset_folders': ['<folder>']}) or run(..., asset_folders=[...]) "
    '("asset_folders" in a --config file for the command line); or give the asset as a URL, '
    "bytes or a data: URI"
)
_NOT_REGULAR_HINT = (
    "assets are read from regular files only (a device, a pipe or a folder may block or "
    "never end); save the content to a file, or give it as bytes"
)
_TOO_LARGE_HINT = (
    "raise the cap, e.g. RunStructure({'max_asset_bytes': 50_000_000}) or "
    "run(..., max_asset_bytes=...), or give a smaller file"
)
_UNREADABLE_HINT = "paths are read when the prompt is assembled, relative to the working directory"


@dataclass(frozen=True, slots=True, kw_only=True)
class AssetFileRefusal:
    """Why an asset's file is not read.

    Attributes:
        message: What is wrong, naming the path and the field that holds the asset.
        hint: How to fix it.
    """

    message: str
    hint: str


def refused_files_error(refusals: Sequence[AssetFileRefusal]) -> ExecutionError:
    """One error for the asset files a run cannot read (each hint once).

    Examples:
        >>> str(refused_files_error([AssetFileRefusal(message="'a.png' is gone", hint="fix")]))
        "'a.png' is gone\\n  hint: fix"
    """
    hint = "; ".join(dict.fromkeys(refusal.hint for refusal in refusals))
    if len(refusals) == 1:
        return ExecutionError(f"{refusals[0].message}\n  hint: {hint}")
    listed = "".join(f"\n  - {refusal.message}" for refusal in refusals)
    return ExecutionError(f"{len(refusals)} asset files cannot be read:{listed}\n  hint: {hint}")


@dataclass(frozen=True, slots=True, kw_only=True)
class AssetFiles:
    """Where a run may read assets' local files from, and how much of each.

    Attributes:
        folders: The folders (relative ones to the working directory); none by default,
            so that no path is read.
        max_bytes: The largest file read.
    """

    folders: tuple[str | os.PathLike[str], ...] = ()
    max_bytes: int = DEFAULT_MAX_ASSET_BYTES

    def read(self, path: Path, where: str, keep_time: Callable[[], None] | None = None) -> bytes:
        """The file's bytes.

        Args:
            path: The asset's path.
            where: The field that holds the asset, for errors (``TaskCaption.photo``).
            keep_time: Called before each chunk is read; raises to stop the read (the
                run's deadline; ``None``: none).

        Raises:
            ExecutionError: The file is refused (see `refusal()`) or cannot be read.
        """
        opened = self._open(path, where)
        if isinstance(opened, AssetFileRefusal):
            raise refused_files_error([opened])
        try:
            data = read_at_most(opened, self.max_bytes + 1, keep_time)
        except OSError as error:
            raise refused_files_error([_unreadable(path, where, error)]) from None
        finally:
            os.close(opened)
        if len(data) > self.max_bytes:
            raise refused_files_error([self._too_large(path, where)])
        return data

    def refusal(self, path: Path, where: str) -> AssetFileRefusal | None:
        """Why the file would not be read, found without reading it (``None``: it would).

        The file is opened and its type and size are read from the opened file, so that
        a run refuses it before its first call; it is read when a prompt shows it.
        """
        opened = self._open(path, where)
        if isinstance(opened, AssetFileRefusal):
            return opened
        os.close(opened)
        return None

    def _open(self, path: Path, where: str) -> int | AssetFileRefusal:
        """The file opened for reading, or why it is not."""
        resolved = Path(os.path.realpath(path))
        folders = [Path(os.path.realpath(folder)) for folder in self.folders]
        if not any(resolved.is_relative_to(folder) for folder in folders):
            return _outside(path, resolved, where, folders)
        try:
            descriptor = os.open(resolved, _OPEN_FLAGS)
        except OSError as error:
            return _unreadable(path, where, error)
        try:
            status = os.fstat(descriptor)
        except OSError as error:
            os.close(descriptor)
            return _unreadable(path, where, error)
        problem = _not_regular(path, where, status.st_mode)
        if problem is None and status.st_size > self.max_bytes:
            problem = self._too_large(path, where)
        if problem is not None:
            os.close(descriptor)
            return problem
        return descriptor

    def _too_large(self, path: Path, where: str) -> AssetFileRefusal:
        return AssetFileRefusal(
            message=f"The asset file {str(path)!r} of {where!r} is larger than "
            f"max_asset_bytes ({self.max_bytes:,} bytes)",
            hint=_TOO_LARGE_HINT,
        )


def _outside(path: Path, resolved: Path, where: str, folders: list[Path]) -> AssetFileRefusal:
    # Show what the path resolves to when links or '..' made it another path.
    shown = "" if resolved == Path.cwd() / path else f" ({str(resolved)!r} once resolved)"
    named = ", ".join(repr(str(folder)) for folder in folders) or "it names none"
    return AssetFileRefusal(
        message=f"The asset file {str(path)!r} of {where!r}{shown} is not in a folder "
        f"that asset_folders names ({named})",
        hint=_OUTSIDE_HINT,
    )


def _not_regular(path: Path, where: str, mode: int) -> AssetFileRefusal | None:
    kind = special_kind(mode)
    if kind is None:
        return None
    return AssetFileRefusal(
        message=f"The asset file {str(path)!r} of {where!r} is {kind}, not a regular file",
        hint=_NOT_REGULAR_HINT,
    )


def _unreadable(path: Path, where: str, error: OSError) -> AssetFileRefusal:
    return AssetFileRefusal(
        message=f"Cannot read the asset file {str(path)!r} of {where!r}: {error.strerror or error}",
        hint=_UNREADABLE_HINT,
    )
