"""A journal's file: what it is, how it opens, and what its rows may hold.

A file is taken as a journal (or a response cache, which has the journal's format) when
it does not exist or is empty (no byte, or a SQLite database without a table): it becomes
one; or when it is a LangTree journal (its ``meta`` table names `FORMAT`). Anything else
is refused before any call and left untouched: a file that is not a SQLite database,
another application's database (no table is added to it), a journal of another format,
and a damaged file, which ``langtree journal salvage`` copies what it can from
(`langtree.runtime.durable._salvage`).

A journal that this process may not write (a read-only file system, a file or folder
without write permission: SQLite writes its WAL files beside the journal) opens
read-only: it replays the answers it holds, and a run stops before the first call it does
not hold (see ``Journal.check_recordable``). Reading opens the file with SQLite's
``mode=ro``; where even that would write (a WAL journal needs its ``-shm`` file, which a
read-only folder keeps SQLite from creating) with ``immutable=1``, unless answers are
still in its ``-wal`` file, which ``immutable`` would pass over.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from langtree.errors import ExecutionError

__all__ = [
    "COLUMNS",
    "FORMAT",
    "JournalFile",
    "damaged_row_error",
    "file_error",
    "open_existing",
    "open_file",
    "open_to_read",
    "row_problem",
    "writer",
]

FORMAT = "langtree-journal-1"
"""What a journal file says it is; a file that says otherwise is not read."""

# Created only in a file without tables, in one transaction: a file is either untouched
# or a whole journal. ``IF NOT EXISTS`` and ``OR IGNORE`` let a second process that
# creates the same journal at the same moment wait for the first and find it done.
# ``PRIMARY KEY (key, answer)``: one row per answer of a call, and the index a call's
# answers are looked up by (salvage counts the rows with it, too).
_SCHEMA = f"""
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS answers (
    key TEXT NOT NULL,
    answer INTEGER NOT NULL,
    step_id TEXT NOT NULL,
    node_path TEXT NOT NULL,
    sample INTEGER NOT NULL,
    model TEXT NOT NULL,
    valid INTEGER NOT NULL,
    raw_output TEXT NOT NULL,
    output TEXT,
    error TEXT,
    usage TEXT,
    latency REAL NOT NULL,
    recorded_at TEXT NOT NULL,
    PRIMARY KEY (key, answer)
);
INSERT OR IGNORE INTO meta VALUES ('format', '{FORMAT}');
COMMIT;
"""

COLUMNS = (
    "key, answer, step_id, node_path, sample, model, valid, raw_output, output, error, "
    "usage, latency, recorded_at"
)
"""The columns of an answer, in the order rows are written and read (after ``rowid``)."""

# Read before SQLite sees the file: SQLite reports a file that is not a database as
# SQLITE_NOTADB, the code of a damaged one, and it would be called damaged.
_SQLITE_MAGIC = b"SQLite format 3\x00"

_DAMAGE_CODES = frozenset({11, 26})
"""SQLITE_CORRUPT and SQLITE_NOTADB: a file whose pages SQLite cannot make sense of."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalFile:
    """A journal's file, open for reading.

    Attributes:
        reader: A read-only connection (the caller closes it).
        read_only: Why the file cannot be written (``None``: it can; open a writer
            with `writer()`).
    """

    reader: sqlite3.Connection
    read_only: str | None


def open_file(path: Path, kind: str) -> JournalFile:
    """Check what the file is, make it a journal when it is new, and open it for reading.

    Args:
        path: The file.
        kind: What the file is to the user (``"journal"``, ``"cache"``), for messages.

    Raises:
        ExecutionError: The file is not a journal, is damaged, or cannot be created or
            read.
    """
    if path.is_dir():
        raise ExecutionError(
            f"The {kind} {str(path)!r} is a folder\n"
            f"  hint: give the run a file for its {kind}, e.g. {str(path / 'run.sqlite')!r}"
        )
    folder = path.absolute().parent
    if not folder.is_dir():
        raise ExecutionError(
            f"The {kind} {str(path)!r} cannot be created: its folder {str(folder)!r} does "
            f"not exist\n  hint: create the folder, or give the run a {kind} in a folder "
            "that exists"
        )
    read_only = _unwritable(path)
    try:
        if not _holds_journal(path, kind, read_only):
            _create(path, kind, read_only)
        return JournalFile(reader=_reader(path, kind, read_only), read_only=read_only)
    except sqlite3.Error as error:
        raise file_error(path, kind, error) from error


def open_existing(path: Path, kind: str) -> sqlite3.Connection:
    """A read-only connection to a journal that exists, which nothing writes to (salvage
    reads a damaged journal with it; the caller closes it).

    Raises:
        ExecutionError: The file holds no journal, or SQLite cannot even read which
            tables it holds.
    """
    read_only = _unwritable(path)
    try:
        if _holds_journal(path, kind, read_only):
            return _reader(path, kind, read_only)
    except sqlite3.Error as error:
        raise ExecutionError(
            f"Nothing of the {kind} {str(path)!r} can be read: SQLite cannot read which "
            f"tables it holds ({error})\n  hint: give the run a new {kind}"
        ) from error
    raise ExecutionError(
        f"The {kind} {str(path)!r} holds no answers\n  hint: give salvage a {kind} a run wrote"
    )


def open_to_read(path: Path, kind: str, hint: str) -> sqlite3.Connection:
    """A connection to a journal that exists, to look at what it holds, perhaps while a
    run writes it (``langtree show``; the caller closes it). It leaves no file behind.

    Where this process may write, the file is opened as a run's writer opens it, although
    nothing is written: SQLite's read-only mode leaves the WAL mode's ``-wal`` and
    ``-shm`` files beside the journal, which the last connection to close removes only
    when it may write. Elsewhere it is read as a read-only journal is.

    Args:
        path: The file.
        kind: What the file is to the user, for messages.
        hint: What to give instead of a file that holds no journal, for messages.

    Raises:
        ExecutionError: The file holds no journal, is damaged, or cannot be read.
    """
    read_only = _unwritable(path)
    try:
        if not _holds_journal(path, kind, read_only, hint):
            raise ExecutionError(f"The {kind} {str(path)!r} holds no answers\n  hint: {hint}")
        if read_only is not None:
            return _reader(path, kind, read_only)
        return _opened(f"{path.absolute().as_uri()}?mode=rw")
    except sqlite3.Error as error:
        raise file_error(path, kind, error) from error


def writer(path: Path, kind: str) -> sqlite3.Connection:
    """A connection that writes the journal, for its writer thread.

    Raises:
        ExecutionError: The file cannot be opened for writing.
    """
    try:
        return _connect(path)
    except sqlite3.Error as error:
        raise file_error(path, kind, error) from error


def file_error(path: Path, kind: str, error: sqlite3.Error) -> ExecutionError:
    """The error of a file SQLite could not read: damage, or what SQLite says."""
    if _damaged(error):
        return _damage(path, kind, str(error))
    return ExecutionError(
        f"The {kind} {str(path)!r} cannot be opened: {error}\n  hint: check that this "
        f"process may read the file (and write it and its folder), or give the run a new "
        f"{kind} file"
    )


def damaged_row_error(path: Path, kind: str, row: Sequence[object], problem: str) -> ExecutionError:
    """The error of a row that does not hold an answer (``row``: its rowid, then
    `COLUMNS`)."""
    rowid, step_id, node_path = row[0], row[3], row[4]
    return _damage(path, kind, f"row {rowid} (step {step_id!r} for {node_path!r}) {problem}")


def row_problem(row: Sequence[object]) -> str | None:
    """What keeps a row (its rowid, then `COLUMNS`) from being an answer, or ``None``."""
    values = dict(zip(("rowid", *COLUMNS.split(", ")), row, strict=True))
    for column, fits, what in _ROW_CHECKS:
        value = values[column]
        if not fits(value):
            return f"its {what}: {value!r}"
    return None


def _text(value: object) -> bool:
    return isinstance(value, str)


def _optional_text(value: object) -> bool:
    return value is None or isinstance(value, str)


def _counted(value: object) -> bool:
    return isinstance(value, int) and value >= 1


def _seconds(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value >= 0


def _usage(value: object) -> bool:
    if value is None:
        return True
    if not isinstance(value, str):
        return False
    try:
        return isinstance(json.loads(value), dict)
    except json.JSONDecodeError:
        return False


# Each column of an answer: what it must hold, and what a row that breaks it does not.
_ROW_CHECKS: tuple[tuple[str, Callable[[object], bool], str], ...] = (
    ("key", _text, "key is not text"),
    ("answer", _counted, "answer number is not a whole number from 1"),
    ("step_id", _text, "step is not text"),
    ("node_path", _text, "node path is not text"),
    ("sample", _counted, "sample is not a whole number from 1"),
    ("model", _text, "model is not text"),
    ("raw_output", _text, "raw output is not text"),
    ("output", _optional_text, "output is not text"),
    ("error", _optional_text, "error is not text"),
    ("usage", _usage, "usage is not a JSON object"),
    ("latency", _seconds, "latency is not a number of seconds"),
)


_READ_ONLY_SYSTEM = "on a read-only file system"


def _unwritable(path: Path) -> str | None:
    """Why this process may not write the journal (its folder too: SQLite's WAL files go
    beside it), or ``None``."""
    folder = path.absolute().parent
    # The mount first: this process may run as root, which write permissions do not
    # stop, but a read-only file system does.
    if os.statvfs(path if path.exists() else folder).f_flag & os.ST_RDONLY:
        return _READ_ONLY_SYSTEM
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is not writable by this process"
    if not os.access(folder, os.W_OK):
        return "its folder is not writable by this process"
    return None


def _holds_journal(path: Path, kind: str, read_only: str | None, hint: str | None = None) -> bool:
    """Whether the file holds a journal (``False``: it is missing, has no byte, or is a
    database without a table).

    ``hint`` says what to give instead of a file that is not a journal (``None``: a run's
    hints, a new file for its journal).

    Raises:
        ExecutionError: The file is not a journal.
        sqlite3.Error: SQLite cannot read which tables it holds.
    """
    if not path.exists() or path.stat().st_size == 0:
        return False
    with path.open("rb") as file:
        magic = file.read(len(_SQLITE_MAGIC))
    if magic != _SQLITE_MAGIC:
        raise _not_a_journal(path, kind, "it is not a SQLite database", hint)
    reader = _reader(path, kind, read_only)
    try:
        tables = sorted(
            name
            for (name,) in reader.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            # SQLite's own tables (``sqlite_sequence``, ``sqlite_stat1``) hold no data:
            # a file with only those is empty.
            if not name.startswith("sqlite_")
        )
        found = _format(reader) if {"meta", "answers"} <= set(tables) else None
    finally:
        reader.close()
    if not tables:
        return False
    if found is None:
        listed = ", ".join(repr(name) for name in tables)
        raise _not_a_journal(
            path, kind, f"it is another application's SQLite database (tables {listed})", hint
        )
    if found != FORMAT:
        raise ExecutionError(
            f"{str(path)!r} is a {kind} of another format ({found!r}, expected {FORMAT!r})\n"
            f"  hint: {hint or f'give the run a new {kind} file'}"
        )
    return True


def _format(reader: sqlite3.Connection) -> str | None:
    """The format a ``meta`` table names (``None``: it names none; another application's
    table of that name)."""
    try:
        found = reader.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
    except sqlite3.OperationalError as error:
        if _damaged(error):
            raise
        return None
    return None if found is None else str(found[0])


def _create(path: Path, kind: str, read_only: str | None) -> None:
    """Make the file (missing, or without a table) a journal.

    Raises:
        ExecutionError: The file cannot be written.
    """
    if read_only is not None:
        why = f"its folder is {read_only}" if read_only == _READ_ONLY_SYSTEM else read_only
        raise ExecutionError(
            f"The {kind} {str(path)!r} cannot be created: {why}\n"
            f"  hint: give the run a {kind} in a folder this process may write to"
        )
    try:
        connection = _connect(path)
        try:
            connection.executescript(_SCHEMA)
        finally:
            connection.close()
    except sqlite3.Error as error:
        raise ExecutionError(
            f"The {kind} {str(path)!r} cannot be created: {error}\n"
            f"  hint: give the run a {kind} on a disk with room, in a folder this process "
            "may write to"
        ) from error


def _reader(path: Path, kind: str, read_only: str | None) -> sqlite3.Connection:
    """A read-only connection to the file.

    Raises:
        ExecutionError: Answers are left in a -wal file that SQLite cannot read here.
        sqlite3.Error: SQLite cannot read the file.
    """
    uri = path.absolute().as_uri()
    try:
        return _opened(f"{uri}?mode=ro")
    except sqlite3.OperationalError as error:
        # Where this process may write, ``mode=ro`` fails only for a reason of the file's
        # own: SQLite's error is the one to report.
        if read_only is None or _damaged(error):
            raise
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise ExecutionError(
            f"The {kind} {str(path)!r} cannot be read where it is ({read_only}): answers "
            "are still in its -wal file, which SQLite reads only where it may write\n"
            f"  hint: copy the {kind} with its -wal file to a folder this process may write "
            "to, and give the run the copy"
        )
    # Nothing is left in a -wal file: the file alone holds every answer.
    return _opened(f"{uri}?immutable=1")


def _opened(uri: str) -> sqlite3.Connection:
    """A connection to ``uri``, with the file opened (SQLite opens it lazily)."""
    connection = sqlite3.connect(uri, uri=True, check_same_thread=False)
    try:
        connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except BaseException:
        connection.close()
        raise
    return connection


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, check_same_thread=False)
    try:
        # WAL: readers (``langtree show``) do not block the writer, and a commit is one
        # append to the -wal file. NORMAL syncs only at checkpoints: a committed answer
        # survives the process being killed (it is in the operating system's cache), but
        # the last commits may be lost if the machine itself goes down; FULL would sync at
        # every commit.
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
    except BaseException:
        connection.close()
        raise
    return connection


def _damaged(error: sqlite3.Error) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    # An extended result code keeps its primary code in the low byte
    # (SQLITE_CORRUPT_INDEX is SQLITE_CORRUPT | 3 << 8).
    return isinstance(code, int) and code & 0xFF in _DAMAGE_CODES


def _damage(path: Path, kind: str, what: str) -> ExecutionError:
    return ExecutionError(
        f"The {kind} {str(path)!r} is damaged: {what}\n"
        f"  hint: `langtree journal salvage {shlex.quote(str(path))} NEW.sqlite` copies the "
        "answers that can still be read into a new file, NEW.sqlite, to use instead"
    )


def _not_a_journal(path: Path, kind: str, what: str, hint: str | None) -> ExecutionError:
    hint = hint or (
        f"give the run a file of its own for its {kind}: a new path (LangTree creates it) "
        "or an empty file"
    )
    return ExecutionError(
        f"The {kind} {str(path)!r} is not a LangTree journal: {what}\n  hint: {hint}"
    )
