"""The call journal: every answer a run's model calls gave, kept in a SQLite file.

``run(..., journal="run.sqlite")`` records each answer a model gave, valid or not, under
its call's key (see `langtree.runtime.durable._call_key`). A run with the same journal
replays the answers whose keys it meets instead of calling the model, so a run that was
stopped (an exception, Ctrl-C, a killed process) continues where it stopped and never
pays twice for a call that had finished; an unchanged call in a changed tree is replayed
too.

One thread writes to the file, fed by a queue, so the event loop never waits for the
disk; several answers that arrive together go in one transaction. Every answer, valid or
not, is committed before its ``record`` returns, and its call keeps its ``max_concurrency``
place until then (`langtree.runtime.calls._call`): nothing a later step reads can be lost, and a
killed run loses no answer but those of the calls in flight. The file is in WAL mode: a
committed answer survives the process being killed.

A file that cannot record an answer stops the run before its next call
(`check_recordable`, raising `JournalWriteError`): once a write has failed (a full
disk, a file removed), and from the start for a journal that is read-only (see
`langtree.runtime.durable._journal_file`, which also says what files are taken as journals).
The answer whose write failed is still used: the run stops as at a usage limit, with
every answer it paid for in its result.

A journal reads every answer of its file when it opens (so that it can count the calls a
run did not make); a response cache (`langtree.runtime.durable._cache`), which collects the
answers of many runs, is a journal opened with ``preload=False``: it looks each call's
answers up by key instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from langtree.errors import ExecutionError, rebuilt_error
from langtree.runtime.durable._journal_file import (
    COLUMNS,
    damaged_row_error,
    file_error,
    open_file,
    open_to_read,
    row_problem,
    writer,
)

__all__ = ["Journal", "JournalEntry", "JournalReport", "JournalWriteError", "journal_answers"]

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


class JournalWriteError(ExecutionError):
    """A journal or response cache could not record an answer: a write to it failed (a
    full disk, a file removed), or it is read-only and the run needed a call it does not
    hold.

    The run stops as at a usage limit: no call starts after the error, the calls in
    flight finish, and ``result`` holds what the run had finished, the answers the file
    could not record included. The rows of a dataset share the file: every row stops.

    Attributes:
        problem: What could not be recorded, without how to go on.
        kind: What the file is to the user: ``"journal"`` or ``"cache"``.
        read_only: Whether the file is read-only (else a write to it failed).
    """

    def __init__(self, problem: str, *, kind: str, read_only: bool, hint: str) -> None:
        self.problem = problem
        self.kind = kind
        self.read_only = read_only
        # A read-only file stops the run before the call: nothing went unrecorded.
        kept = (
            ""
            if read_only
            else f", and error.result holds what it had finished, the answers the {kind} "
            "could not record included"
        )
        super().__init__(f"{problem}{kept}\n  hint: {hint}")

    def __reduce__(self) -> tuple[object, ...]:
        return (rebuilt_error, (JournalWriteError, self.args, self.__dict__))


class Journal:
    """A journal file, open for one run.

    Args:
        path: The SQLite file (created when it does not exist or is empty).
        max_age: Seconds after which a recorded answer is no longer replayed: its call is
            made again and the new answer replaces it (``None``: answers never expire).
        preload: Read every answer when opening (``False``: look each call's answers up
            when asked; the report's ``unmatched`` is then 0).
        kind: What the file is to the user (``"journal"``, ``"cache"``), for messages.
        clock: Seconds since the epoch (default ``time.time``): when an answer is
            recorded, and how old ``max_age`` finds it. Tests pass a fake clock.

    Raises:
        ExecutionError: The file cannot be opened or created, is not a LangTree
            journal, or is damaged.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_age: float | None = None,
        preload: bool = True,
        kind: str = "journal",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path)
        self.kind = kind
        self._clock = clock
        self._since = "" if max_age is None else _stamp(clock() - max_age)
        opened = open_file(self.path, kind)
        self._reader = opened.reader
        self.read_only = opened.read_only
        """Why the file cannot be written (``None``: it can)."""
        self._known: dict[str, tuple[JournalEntry, ...]] | None = None
        # A preloaded journal answers every lookup from memory, so its reader is closed at
        # once; without preload the reader stays open for the lookups, until `close`.
        if preload:
            try:
                self._known = self._read()
            finally:
                self._reader.close()
        self._used: set[str] = set()
        self.replayed = 0
        self.recorded = 0
        self._queue: queue.SimpleQueue[_Write | None] = queue.SimpleQueue()
        self._failure: sqlite3.Error | None = None
        self._writer: threading.Thread | None = None
        # A read-only file gets no writer: `check_recordable` stops the run before a call
        # whose answer would have to be written.
        if self.read_only is None:
            self._start_writer()

    def answers(self, key: str) -> tuple[JournalEntry, ...]:
        """The answers recorded for a call, first first.

        Raises:
            ExecutionError: The file is damaged.
        """
        if self._known is None:
            # Looked up on demand (a cache): not counted in ``_used``, as ``unmatched`` is
            # only reported for a preloaded journal.
            return tuple(_consecutive(self._select("AND key = ? ORDER BY answer", key)))
        self._used.add(key)
        return self._known.get(key, ())

    def count_replayed(self) -> None:
        """Count an answer the run took from the journal."""
        self.replayed += 1

    def check_recordable(self, step_id: str, node_path: str) -> None:
        """Stop the run before a model call whose answer the file could not record.

        Raises:
            JournalWriteError: The file is read-only, or a write to it failed.
        """
        if self.read_only is not None:
            raise JournalWriteError(
                f"The {self.kind} {str(self.path)!r} is read-only ({self.read_only}): it "
                f"replays the answers it holds, and the call of step {step_id!r} for "
                f"{node_path!r} is not among them",
                kind=self.kind,
                read_only=True,
                hint=f"to make new calls, copy the {self.kind} to a folder this process may "
                "write to, and give the run the copy",
            )
        self.check_written()

    def check_written(self) -> None:
        """Raise if a write to the file failed.

        Raises:
            JournalWriteError: Naming the first failure.
        """
        if self._failure is not None:
            raise JournalWriteError(
                f"The {self.kind} {str(self.path)!r} could not be written ({self._failure}): "
                "the run stopped",
                kind=self.kind,
                read_only=False,
                hint=f"free space on its disk, or give the run a {self.kind} on another "
                f"disk; running again replays the answers the {self.kind} holds",
            )

    async def record(self, entry: JournalEntry) -> None:
        """Add an answer; return once it is committed to the file, or its write failed
        (`check_written` then raises: the answer is not recorded, but the run may use it).
        """
        # A read-only file stops the run before any call (check_recordable), so only a
        # file that may be written is asked to record an answer.
        assert self.read_only is None, "a read-only file records nothing"
        # An asyncio future is not thread-safe: the writer thread settles it through the
        # loop that made it (`_commit`, ``call_soon_threadsafe``).
        done = asyncio.get_running_loop().create_future()
        self._queue.put(_Write(entry=entry, done=done))
        await done

    def close(self) -> JournalReport:
        """Commit what is queued and close the file; a write that fails is kept for
        `check_written`."""
        if self._writer is not None:
            # ``None`` is queued after every answer: the writer commits them all, then ends.
            # ``recorded`` is read only after the join, once the writer thread alone has
            # counted it.
            self._queue.put(None)
            self._writer.join()
        if self._known is None:
            self._reader.close()
        known = self._known or {}
        unmatched = sum(1 for key in known if key not in self._used)
        return JournalReport(
            path=str(self.path), replayed=self.replayed, recorded=self.recorded, unmatched=unmatched
        )

    def _read(self) -> dict[str, tuple[JournalEntry, ...]]:
        """Every answer in the file by key, those recorded before ``since`` left out.

        Raises:
            ExecutionError: The file is damaged.
        """
        answers: dict[str, list[JournalEntry]] = {}
        for entry in self._select("ORDER BY key, answer"):
            answers.setdefault(entry.key, []).append(entry)
        return {key: tuple(_consecutive(entries)) for key, entries in answers.items()}

    def _select(self, rest: str, *parameters: object) -> list[JournalEntry]:
        """The answers recorded since ``since`` that ``rest`` (more of the query) picks.

        Raises:
            ExecutionError: The file is damaged.
        """
        try:
            rows = self._reader.execute(
                # Times are UTC ``isoformat()`` text, which sorts as the times do (one
                # without microseconds sorts before those with them in its second): the
                # expiry is a text comparison. ``since`` is "" without ``max_age``, before
                # every time.
                f"SELECT rowid, {COLUMNS} FROM answers WHERE recorded_at >= ? {rest}",
                (self._since, *parameters),
            ).fetchall()
        except sqlite3.Error as error:
            raise file_error(self.path, self.kind, error) from error
        return [self._entry(row) for row in rows]

    def _entry(self, row: Sequence[object]) -> JournalEntry:
        return _checked_entry(self.path, self.kind, row)

    def _start_writer(self) -> None:
        """Open the file for writing, and start the thread that writes it.

        Raises:
            ExecutionError: The file cannot be opened for writing.
        """
        try:
            connection = writer(self.path, self.kind)
        except ExecutionError:
            if self._known is None:
                self._reader.close()
            raise
        self._writer = threading.Thread(
            target=self._write_all, args=(connection,), name="langtree-journal", daemon=True
        )
        self._writer.start()

    def _write_all(self, connection: sqlite3.Connection) -> None:
        try:
            while True:
                # Wait for one answer, then take what else is queued already, without
                # waiting: a lone answer is committed at once, a burst in one transaction.
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
        try:
            with connection:
                # One transaction per batch: it is committed whole, or rolled back whole.
                # OR REPLACE: an answer number the file holds already is an expired answer
                # (``max_age``) or a valid one the step's class no longer accepts; the
                # call's new answer takes its place.
                connection.executemany(
                    f"INSERT OR REPLACE INTO answers ({COLUMNS}) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    # ``recorded_at``, which ``max_age`` counts from: when this
                    # process wrote the batch.
                    [_row(write.entry, _stamp(self._clock())) for write in writes],
                )
            # Counted by the writer thread alone, and read once it has ended (close).
            self.recorded += len(writes)
        except sqlite3.Error as error:
            # Set before the waiting calls are told: a call that starts after them
            # finds the run stopped (check_recordable). Later writes are still tried:
            # what fits is kept for the next run.
            self._failure = self._failure or error
        # Every waiting call goes on, whether its answer was written or not: the run
        # uses the answer, and `check_recordable` stops the run before its next call.
        for write in writes:
            write.done.get_loop().call_soon_threadsafe(_settle, write.done)


@dataclass(frozen=True, slots=True)
class _Write:
    entry: JournalEntry
    done: asyncio.Future[None]


def _settle(done: asyncio.Future[None]) -> None:
    if not done.done():  # else the waiting call was cancelled
        done.set_result(None)


def journal_answers(path: Path, hint: str) -> tuple[JournalEntry, ...]:
    """Every answer a journal (or response cache) file holds, in the order they were
    recorded, expired ones too; the file is only read (see
    `langtree.runtime.durable._journal_file.open_to_read`).

    Args:
        path: The file.
        hint: What to give instead of a file that holds no journal, for messages.

    Raises:
        ExecutionError: The file holds no journal, is damaged, or cannot be read.
    """
    with contextlib.closing(open_to_read(path, "journal", hint)) as reader:
        try:
            rows = reader.execute(
                f"SELECT rowid, {COLUMNS} FROM answers ORDER BY recorded_at, key, answer"
            ).fetchall()
        except sqlite3.Error as error:
            raise file_error(path, "journal", error) from error
    return tuple(_checked_entry(path, "journal", row) for row in rows)


def _checked_entry(path: Path, kind: str, row: Sequence[object]) -> JournalEntry:
    """The answer a row (its rowid, then the columns) holds.

    Raises:
        ExecutionError: The row does not hold an answer (it was edited, or damaged).
    """
    problem = row_problem(row)
    if problem is not None:
        raise damaged_row_error(path, kind, row, problem)
    return _entry(row[1:])


def _stamp(seconds: float) -> str:
    """A time, in seconds since the epoch, as the file stores times (UTC ISO text)."""
    return datetime.fromtimestamp(seconds, UTC).isoformat()


def _consecutive(entries: list[JournalEntry]) -> list[JournalEntry]:
    """The answers from the first on, up to the first gap (a gap cannot be replayed)."""
    kept: list[JournalEntry] = []
    for entry in entries:
        # Answer n+1 was asked for with the feedback on answer n: without answer n the
        # chain cannot be followed, so what comes after a gap is asked for again.
        if entry.answer != len(kept) + 1:
            break
        kept.append(entry)
    return kept


def _row(entry: JournalEntry, recorded_at: str) -> tuple[object, ...]:
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
        recorded_at,
    )


def _entry(row: Sequence[object]) -> JournalEntry:
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
