"""A run's page from a file: a saved result (the JSON of `RunResult.to_json()`) or a
journal (a SQLite file; `langtree.runtime.page.journal_run`), told apart by their first
bytes, whatever their names."""

from __future__ import annotations

import json
from pathlib import Path

from langtree.errors import LangTreeError
from langtree.runtime.page.journal_run import journal_run
from langtree.runtime.page.render import page_html
from langtree.runtime.page.saved import RUN_HINT, SavedRun, saved_run

__all__ = ["read_run", "write_page"]

SQLITE_HEADER = b"SQLite format 3\x00"
"""How every SQLite database file begins."""


def read_run(path: Path) -> SavedRun:
    """The page's data of a saved result or a journal.

    Raises:
        LangTreeError: The file does not exist or cannot be read, is neither JSON nor
            SQLite, or is not a saved result or a journal (the message says what is
            wrong and where).
    """
    try:
        with path.open("rb") as file:
            journal = file.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except FileNotFoundError:
        raise LangTreeError(f"No such file: {str(path)!r}") from None
    except OSError as error:
        raise LangTreeError(f"{str(path)!r} cannot be read: {error.strerror}") from None
    if journal:
        return journal_run(path)
    return saved_run(_json_data(path), str(path))


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


def _json_data(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise LangTreeError(f"{str(path)!r} cannot be read: {error.strerror}") from None
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
