"""The call journal: every answer a run's model calls gave, kept in a SQLite file.

``run(..., journal="run.sqlite")`` records each answer a model gave, valid or not, under
its call's key (see `langtree.runtime.call_key`). A run with the same journal
replays the answers whose keys it meets instead of calling the model, so a run that was
stopped (an exception, Ctrl-C, a killed process) continues where it stopped and never
pays twice for a call that had finished; an unchanged call in a changed tree is replayed
too.

One thread writes to the file, fed by a queue, so the event loop never waits for the
disk; several answers that arrive together go in one transaction. Every answer, valid or
not, is committed before its ``record`` returns, and its call keeps its ``max_concurrency``
place until then (`langtree.runtime.call`): nothing a later step reads can be lost, and a
killed run loses no answer but those of the calls in flight. The file is in WAL mode: a
committed answer survives the process being killed.

A journal reads every answer of its file when it opens (so that it can count the calls a
run did not make); a response cache (`langtree.runtime.cache`), which collects the
answers of many runs, is a journal opened with ``preload=False``: it looks each call's
answers up by key instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from langtree.errors import ExecutionError

__all__ = ["Journal", "JournalEntry", "JournalReport"]

FORMAT = "langtree-journal-1"
"""What a journal file says it is; a file that says otherwise is not read."""

_SCHEMA = """
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
"""

_COLUMNS = (
    "key, answer, step_id, node_path, sample, model, valid, raw_output, output, error, "
    "usage, latency, recorded_at"
)

_BATCH = 256
"""The most answers written in one transaction."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalEntry:
    """One answer a model gave for a call.

    Attributes:
        key: The call's key.
        answer: Which of the call's answers this is (1: the first; a retry after
            invalid output gives the next).
        step_id: The plan step.
        node_path: The node instance.
        sample: The sample of a resampled step (1 when not resampled).
        model: The provider's key of the model.
        output: The validated output as JSON text (``None``: the answer was invalid).
        raw_output: The answer as the model gave it.
        error: Why the answer was not valid (``None``: it was).
        usage: The provider's usage report, when it gave one.
        latency: Seconds the call took.
    """

    key: str
    answer: int
    step_id: str
    node_path: str
    sample: int
    model: str
    output: str | None
    raw_output: str
    error: str | None
    usage: Mapping[str, object] | None
    latency: float

    @property
    def valid(self) -> bool:
        """Whether the answer validated."""
        return self.output is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalReport:
    """How a run used its journal.

    Attributes:
        path: The journal file.
        replayed: Answers taken from the journal instead of calling a model.
        recorded: Answers this run added.
        unmatched: Calls the journal held that this run did not make (a changed tree,
            other inputs, or another structure's calls).
    """

    path: str
    replayed: int
    recorded: int
    unmatched: int


class Journal:
    """A journal file, open for one run.

    Args:
        path: The SQLite file (created when it does not exist).
        max_age: Seconds after which a recorded answer is no longer replayed: its call is
            made again and the new answer replaces it (``None``: answers never expire).
        preload: Read every answer when opening (``False``: look each call's answers up
            when asked; the report's ``unmatched`` is then 0).
        kind: What the file is to the user (``"journal"``, ``"cache"``), for messages.

    Raises:
        ExecutionError: The file cannot be opened or created, or is not a LangTree
            journal.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_age: float | None = None,
        preload: bool = True,
        kind: str = "journal",
    ) -> None:
        self.path = Path(path)
        self.kind = kind
        self._since = _since(max_age)
        self._reader = _open(self.path, kind)
        self._known: dict[str, tuple[JournalEntry, ...]] | None = None
        if preload:
            try:
                self._known = _read(self._reader, self._since)
            except sqlite3.Error as error:
                raise _open_error(self.path, error, self.kind) from error
            finally:
                self._reader.close()
        self._used: set[str] = set()
        self.replayed = 0
        self.recorded = 0
        self._queue: queue.SimpleQueue[_Write | None] = queue.SimpleQueue()
        self._failure: BaseException | None = None
        self._writer = threading.Thread(
            target=self._write_all, name="langtree-journal", daemon=True
        )
        self._writer.start()

    def answers(self, key: str) -> tuple[JournalEntry, ...]:
        """The answers recorded for a call, first first."""
        if self._known is None:
            try:
                rows = self._reader.execute(
                    f"SELECT {_COLUMNS} FROM answers WHERE key = ? AND recorded_at >= ? "
                    "ORDER BY answer",
                    (key, self._since),
                ).fetchall()
            except sqlite3.Error as error:
                raise _open_error(self.path, error, self.kind) from error
            return tuple(_consecutive([_entry(row) for row in rows]))
        self._used.add(key)
        return self._known.get(key, ())

    def count_replayed(self) -> None:
        """Count an answer the run took from the journal."""
        self.replayed += 1

    async def record(self, entry: JournalEntry) -> None:
        """Add an answer; return once it is committed to the file.

        Raises:
            ExecutionError: The file could not be written (the disk is full, it was
                removed).
        """
        if self._failure is not None:
            raise _write_error(self.path, self._failure, self.kind)
        self.recorded += 1
        done = asyncio.get_running_loop().create_future()
        self._queue.put(_Write(entry=entry, done=done))
        await done

    def close(self) -> JournalReport:
        """Commit what is queued and close the file.

        Raises:
            ExecutionError: The file could not be written.
        """
        self._queue.put(None)
        self._writer.join()
        if self._known is None:
            self._reader.close()
        if self._failure is not None:
            raise _write_error(self.path, self._failure, self.kind)
        known = self._known or {}
        unmatched = sum(1 for key in known if key not in self._used)
        return JournalReport(
            path=str(self.path), replayed=self.replayed, recorded=self.recorded, unmatched=unmatched
        )

    def _write_all(self) -> None:
        connection = _connect(self.path)
        try:
            while True:
                batch = [self._queue.get()]
                while batch[-1] is not None and len(batch) < _BATCH and not self._queue.empty():
                    batch.append(self._queue.get())
                writes = [write for write in batch if write is not None]
                self._commit(connection, writes)
                if batch[-1] is None:
                    return
        finally:
            connection.close()

    def _commit(self, connection: sqlite3.Connection, writes: list[_Write]) -> None:
        failure: BaseException | None = None
        try:
            with connection:
                connection.executemany(
                    f"INSERT OR REPLACE INTO answers ({_COLUMNS}) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [_row(write.entry) for write in writes],
                )
        except sqlite3.Error as error:
            failure = self._failure = error
        for write in writes:
            loop = write.done.get_loop()
            loop.call_soon_threadsafe(_settle, write.done, failure, self)


@dataclass(frozen=True, slots=True)
class _Write:
    entry: JournalEntry
    done: asyncio.Future[None]


def _settle(done: asyncio.Future[None], failure: BaseException | None, journal: Journal) -> None:
    if done.done():  # the waiting call was cancelled
        return
    if failure is None:
        done.set_result(None)
    else:
        done.set_exception(_write_error(journal.path, failure, journal.kind))


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    return connection


def _since(max_age: float | None) -> str:
    """The oldest time of an answer still replayed, as the file stores times."""
    if max_age is None:
        return ""
    return (datetime.now(UTC) - timedelta(seconds=max_age)).isoformat()


def _open(path: Path, kind: str) -> sqlite3.Connection:
    """A connection to the journal file, created and checked (the caller closes it).

    Raises:
        ExecutionError: The file cannot be opened or created, or is not a journal.
    """
    try:
        connection = _connect(path)
        try:
            with connection:
                connection.executescript(_SCHEMA)
                _check_format(connection, path, kind)
        except BaseException:
            connection.close()
            raise
    except sqlite3.Error as error:
        raise _open_error(path, error, kind) from error
    return connection


def _read(connection: sqlite3.Connection, since: str) -> dict[str, tuple[JournalEntry, ...]]:
    """Every answer in the file by key, those recorded before ``since`` left out."""
    rows = connection.execute(
        f"SELECT {_COLUMNS} FROM answers WHERE recorded_at >= ? ORDER BY key, answer", (since,)
    ).fetchall()
    answers: dict[str, list[JournalEntry]] = {}
    for row in rows:
        entry = _entry(row)
        answers.setdefault(entry.key, []).append(entry)
    return {key: tuple(_consecutive(entries)) for key, entries in answers.items()}


def _open_error(path: Path, error: sqlite3.Error, kind: str) -> ExecutionError:
    return ExecutionError(
        f"The {kind} {str(path)!r} cannot be opened: {error}\n"
        "  hint: give a path in a folder that exists and that you may write to, to a "
        f"{kind} file or a new one"
    )


def _check_format(connection: sqlite3.Connection, path: Path, kind: str) -> None:
    found = connection.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
    if found is None:
        connection.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))
    elif found[0] != FORMAT:
        raise ExecutionError(
            f"{str(path)!r} is a {kind} of another format ({found[0]!r}, expected "
            f"{FORMAT!r})\n  hint: give the run a new {kind} file"
        )


def _consecutive(entries: list[JournalEntry]) -> list[JournalEntry]:
    """The answers from the first on, up to the first gap (a gap cannot be replayed)."""
    kept: list[JournalEntry] = []
    for entry in entries:
        if entry.answer != len(kept) + 1:
            break
        kept.append(entry)
    return kept


def _row(entry: JournalEntry) -> tuple[object, ...]:
    return (
        entry.key,
        entry.answer,
        entry.step_id,
        entry.node_path,
        entry.sample,
        entry.model,
        int(entry.valid),
        entry.raw_output,
        entry.output,
        entry.error,
        None if entry.usage is None else json.dumps(entry.usage, default=str),
        entry.latency,
        datetime.now(UTC).isoformat(),
    )


def _entry(row: tuple[object, ...]) -> JournalEntry:
    key, answer, step_id, node_path, sample, model, _valid, raw, output, error, usage = row[:11]
    latency = row[11]
    return JournalEntry(
        key=str(key),
        answer=int(str(answer)),
        step_id=str(step_id),
        node_path=str(node_path),
        sample=int(str(sample)),
        model=str(model),
        output=None if output is None else str(output),
        raw_output=str(raw),
        error=None if error is None else str(error),
        usage=None if usage is None else json.loads(str(usage)),
        latency=float(str(latency)),
    )


def _write_error(path: Path, failure: BaseException, kind: str) -> ExecutionError:
    return ExecutionError(
        f"The {kind} {str(path)!r} could not be written: {failure}\n"
        "  hint: check the disk has room and the file is still there; the calls recorded "
        "so far are kept"
    )
