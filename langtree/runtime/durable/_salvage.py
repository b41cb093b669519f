"""Salvage: the answers of a damaged journal that can still be read, copied into a new one.

One damaged page (a bad sector, a torn copy) makes SQLite refuse every query that
reaches it, so a run, which reads its journal whole, refuses the file. Salvage reads the
answers row by row in the order of their rowids and steps over what it cannot read:
where a read fails, it looks for the next rowid from which SQLite reads again (doubling
the step, then halving back), so that a damaged page loses the rows it held and no more.
A row that SQLite reads but that does not hold an answer (edited by hand) is left out
and named. The answers read go, as they were recorded, into a new journal; the number
lost is counted from the table's primary-key index, which SQLite keeps apart from the
rows (unknown when the index is damaged too). The damaged file is only read.

``langtree journal salvage OLD NEW`` runs it from the command line; a response cache,
which has the journal's format, is salvaged the same way.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from langtree.errors import ExecutionError
from langtree.runtime.durable._journal_file import (
    COLUMNS,
    open_existing,
    open_file,
    row_problem,
    writer,
)

__all__ = ["SalvageReport", "salvage_journal"]

_LAST_ROWID = 2**63 - 1

_FIRST_FROM = f"SELECT rowid, {COLUMNS} FROM answers WHERE rowid >= ? ORDER BY rowid LIMIT 1"
"""The first row from a rowid on."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SalvageReport:
    """What salvage copied.

    Attributes:
        source: The damaged journal.
        target: The new journal.
        copied: The answers copied.
        lost: The answers of the damaged journal that could not be copied (``None``:
            the damage hides how many it held).
        damaged_rows: The rows SQLite could read that held no answer (their rowids).
    """

    source: str
    target: str
    copied: int
    lost: int | None
    damaged_rows: tuple[int, ...]


def salvage_journal(
    source: str | os.PathLike[str], target: str | os.PathLike[str]
) -> SalvageReport:
    """Copy every answer of ``source`` that can still be read into a new journal.

    Args:
        source: The damaged journal (or response cache); it is only read.
        target: The new journal: a path where no file is yet.

    Raises:
        ExecutionError: ``source`` does not exist or holds no journal, ``target``
            exists, or ``target`` cannot be written.
    """
    old, new = Path(source), Path(target)
    if not old.is_file():
        raise ExecutionError(
            f"The journal {str(old)!r} does not exist\n"
            "  hint: give salvage the path of the damaged journal"
        )
    if new.exists():
        raise ExecutionError(
            f"Salvage writes a new journal, and {str(new)!r} exists\n"
            "  hint: give salvage the path of a file that does not exist yet"
        )
    with contextlib.closing(open_existing(old, "journal")) as reader:
        answers, damaged = _readable_rows(reader)
        held = _count(reader)
    _write(new, answers)
    return SalvageReport(
        source=str(old),
        target=str(new),
        copied=len(answers),
        lost=None if held is None else held - len(answers),
        damaged_rows=tuple(damaged),
    )


def _readable_rows(reader: sqlite3.Connection) -> tuple[list[Sequence[object]], list[int]]:
    """Every row SQLite can read that holds an answer, and the rowids of those that
    hold none."""
    answers: list[Sequence[object]] = []
    damaged: list[int] = []
    # From the smallest rowid there can be: a row inserted with an explicit rowid may
    # have a negative one.
    start: int | None = -_LAST_ROWID
    while start is not None:
        # One row per query: a query that goes on reads ahead of the row it hands out,
        # and would lose the last row before a damaged page with the page.
        try:
            row = reader.execute(_FIRST_FROM, (start,)).fetchone()
        except sqlite3.DatabaseError:
            start = _next_readable(reader, start + 1)
            continue
        if row is None:
            break
        rowid = row[0]
        assert isinstance(rowid, int), "SQLite's rowids are whole numbers"
        if row_problem(row) is None:
            answers.append(row)
        else:
            damaged.append(rowid)
        start = rowid + 1
    return answers, damaged


def _next_readable(reader: sqlite3.Connection, first: int) -> int | None:
    """The first rowid from ``first`` on from which SQLite reads again (``None``: none)."""
    if _reads_from(reader, first):
        return first
    # Gallop: the step doubles until a read works, so a damaged run of rowids costs a
    # number of queries that grows with the logarithm of its length.
    step = 1
    while not _reads_from(reader, min(first + step, _LAST_ROWID)):
        if first + step >= _LAST_ROWID:
            return None
        step *= 2
    # Reading fails from ``low`` and works from ``high``: halve the gap between them.
    low, high = first + step // 2, min(first + step, _LAST_ROWID)
    while high - low > 1:
        middle = (low + high) // 2
        if _reads_from(reader, middle):
            high = middle
        else:
            low = middle
    return high


def _reads_from(reader: sqlite3.Connection, rowid: int) -> bool:
    """Whether SQLite reads the first row from ``rowid`` on (or finds none)."""
    try:
        reader.execute(_FIRST_FROM, (rowid,)).fetchall()
    except sqlite3.DatabaseError:
        return False
    return True


def _count(reader: sqlite3.Connection) -> int | None:
    """How many answers the journal held, from its primary-key index (``None``: the
    index cannot be read)."""
    try:
        (count,) = reader.execute(
            # The index of ``PRIMARY KEY (key, answer)`` is a b-tree of its own: counting it
            # reads none of the table's pages, so a count survives damage to them.
            "SELECT COUNT(*) FROM answers INDEXED BY sqlite_autoindex_answers_1"
        ).fetchone()
    except sqlite3.DatabaseError:
        return None
    return int(count)


def _write(target: Path, answers: list[Sequence[object]]) -> None:
    """A new journal holding ``answers`` (rows as read: their rowid, then the columns).

    Raises:
        ExecutionError: The file cannot be written.
    """
    open_file(target, "journal").reader.close()
    connection = writer(target, "journal")
    places = ", ".join("?" * len(COLUMNS.split(", ")))
    try:
        # One transaction: the new journal holds every answer read, or none. Rows keep
        # their ``recorded_at``, so ``max_age`` still counts from when they were
        # recorded; (key, answer) is unique already, as the damaged file's primary key.
        with connection:
            connection.executemany(
                f"INSERT INTO answers ({COLUMNS}) VALUES ({places})",
                [tuple(row[1:]) for row in answers],
            )
    except sqlite3.Error as error:
        failure: sqlite3.Error | None = error
    else:
        failure = None
    finally:
        connection.close()
    if failure is not None:
        # A journal with some answers or none would be taken for the salvaged one: the
        # files this call made go, so that the same command can run again once there is
        # room.
        _remove(target)
        raise ExecutionError(
            f"The journal {str(target)!r} could not be written: {failure}\n"
            "  hint: give salvage a path on a disk with room, in a folder this process may "
            "write to"
        ) from failure


def _remove(journal: Path) -> None:
    """Delete ``journal`` and the files SQLite keeps beside it (its write-ahead log)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            journal.with_name(journal.name + suffix).unlink()
