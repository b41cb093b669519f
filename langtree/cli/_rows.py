"""``langtree run TREE --input rows.jsonl [--output results.jsonl]``: a dataset run.

Each line of the input is one row, in the format of a ``--input`` JSON file. Each result
is one line of the output, written as soon as the row (and every row before it, unless
``--as-completed``) is done:
``{"row": 0, "output": {...}}`` or ``{"row": 3, "error": "..."}`` (a row is an error
when its run failed or, under ``on_error: "continue"``, a task of it does not validate);
``row`` counts the input's rows from 0 (blank lines are not rows). Running the same
command again with the same ``--output`` skips the rows it already holds an output for
and appends the others, so a dataset run stopped by Ctrl-C (or anything else) resumes;
with ``--journal`` the rows that were in flight replay their finished calls too. A last
line that a run stopped mid-write left cut off is dropped (standard error says so), and
its row runs again. An output that refuses a result (a full disk) stops the run: the
part of the line written is cut back, and the error says how many rows' results the file
holds; running the same command once there is room resumes it.

The input is opened once, only when it is a regular file (a named pipe or a device is
refused without waiting: the file is read twice, to count and check the rows, then to run
them), and each line is read up to `MAX_INPUT_BYTES`, so that a file without newlines
cannot fill the memory; the file as a whole is not bounded, since it is read a line at a
time. As JSON Lines says, a line ends at ``\\n`` (``\\r\\n`` too: JSON takes ``\\r`` for space).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from io import BufferedReader
from pathlib import Path

from langtree import RunStructure
from langtree._local_files import open_regular, special_kind
from langtree.cli._hints import error_text
from langtree.cli._inputs import (
    LARGE_INPUTS_HINT,
    MAX_INPUT_BYTES,
    MAX_INPUT_MIB,
    json_value,
    refusal_text,
    utf8_text,
)
from langtree.cli._output import LineFile, OutputError, StandardLines
from langtree.cli._rows_progress import RowsProgress
from langtree.errors import LangTreeError
from langtree.runtime import (
    JournalWriteError,
    RowResult,
    RunLimitError,
    RunOptions,
    RunResult,
    listed_positions,
)
from langtree.structure import TreeNode, task_tag

__all__ = ["RowsRun", "is_rows_file", "run_rows", "task_output"]


def is_rows_file(path: Path | None) -> bool:
    """Whether ``--input`` names a dataset (a ``.jsonl`` file)."""
    return path is not None and path.suffix.lower() == ".jsonl"


@dataclass(frozen=True, slots=True, kw_only=True)
class RowsRun:
    """What a dataset run reads and writes.

    Attributes:
        source: The JSONL file of rows.
        output: The JSONL file of results (``None``: standard output).
        task_name: The task whose values each row holds (empty: rows by task).
        variables: External prompt variables, the same for every row.
        options: The run settings.
        ordered: Write the rows in input order (``False``: as they finish).
    """

    source: Path
    output: Path | None
    task_name: str
    variables: dict[str, object]
    options: RunOptions
    ordered: bool = True


def run_rows(structure: RunStructure, run: RowsRun) -> int:
    """Run every row not yet in the output; the exit status (1 if a row failed).

    Raises:
        LangTreeError: The input is not a regular file or cannot be read, a line of it
            is longer than `MAX_INPUT_BYTES` or is not a JSON object, or the output cannot
            be read or written (before any model call).
    """
    with _opened(run.source) as source:
        return _run_rows(structure, run, source)


def _opened(path: Path) -> BufferedReader:
    """The input, opened once it is known to be a regular file.

    Raises:
        LangTreeError: It is not, or it cannot be opened.
    """
    opened = open_regular(path)
    if not isinstance(opened, int):
        raise LangTreeError(f"Cannot read rows from {str(path)!r}: {refusal_text(opened, 'rows')}")
    return os.fdopen(opened, "rb")


def _run_rows(structure: RunStructure, run: RowsRun, source: BufferedReader) -> int:
    total = _count_rows(run.source, source)
    written = _written_rows(run.output)
    _check_written(run, written, total)
    progress = RowsProgress(total=total, skipped=len(written), stream=sys.stderr)
    rows = structure.run_many(
        _rows(run.source, source, run.task_name),
        run.variables,
        ordered=run.ordered,
        skip=written,
        on_row=progress.add,
        **run.options,
    )
    progress.start()
    # Closed here, whatever ends the loop: an iteration left open would be closed only
    # when the interpreter clears it, after LangTree's loop has stopped.
    with _results(run.output) as results, contextlib.closing(rows):
        try:
            for row in rows:
                results.add(
                    json.dumps(_line(row, structure.tasks, run.task_name), ensure_ascii=False)
                )
        except KeyboardInterrupt:
            progress.finish()
            print(_resume_hint(run), file=sys.stderr)
            return 130
        except RunLimitError as error:
            progress.finish()
            print(f"langtree: error: {error_text(error)}\n{_resume_hint(run)}", file=sys.stderr)
            return 1
        except JournalWriteError as error:
            # Every row stops (they share the file); what finished is kept, as at a limit.
            progress.finish()
            print(f"langtree: error: {error_text(error)}\n{_resume_hint(run)}", file=sys.stderr)
            return 2
        except OutputError as error:
            progress.finish()
            held = len(written) + results.lines
            raise _not_written(run, error, held=held, total=total) from None
    progress.finish()
    return 1 if progress.failed else 0


def _not_written(run: RowsRun, error: OutputError, *, held: int, total: int) -> OutputError:
    """The output refused a result (a full disk): what it holds, and how to go on."""
    if run.output is None:
        return OutputError(
            f"{error}; it took the results of {held} of the {total} rows\n"
            "  hint: give --output FILE.jsonl: running the same command again then resumes "
            "where it stopped"
        )
    return OutputError(
        f"{error}; it holds the results of {held} of the {total} rows\n"
        "  hint: free space on its disk, then run the same command again: it runs the rows "
        "the file lacks"
    )


def _check_written(run: RowsRun, written: frozenset[int], total: int) -> None:
    """Refuse an output that holds results of rows past the input's last row: it is not
    this dataset's (``run_many`` would tell only after running every row).

    Raises:
        LangTreeError: Naming the rows, the files and how many rows the input has.
    """
    past = [row for row in written if row >= total]
    if past:
        raise LangTreeError(
            f"{str(run.output)!r} holds results of rows past the last row of "
            f"{str(run.source)!r} ({listed_positions(past)}): it has {total} row(s)\n"
            "  hint: give --output a new file, or the file an earlier run of the same "
            "dataset wrote"
        )


def _rows(path: Path, source: BufferedReader, task_name: str) -> Iterator[dict[object, object]]:
    """The rows as inputs by task, read one line at a time."""
    tag = task_tag(task_name) if task_name else ""
    for _, line in _lines(path, source):
        if line.strip():
            values = json.loads(line)
            yield {tag: values} if tag else values


def _count_rows(path: Path, source: BufferedReader) -> int:
    """The number of rows, every line checked to be a JSON object first.

    Raises:
        LangTreeError: The file cannot be read, or a line is too long, not UTF-8 or not
            a JSON object.
    """
    rows = 0
    try:
        for number, line in _lines(path, source):
            if line.strip():
                _check_row(path, number, line)
                rows += 1
    except OSError as error:
        raise LangTreeError(f"Cannot read rows from {str(path)!r}: {error}") from None
    return rows


def _lines(path: Path, source: BufferedReader) -> Iterator[tuple[int, str]]:
    """The lines of the file from its start, numbered from 1, each read up to
    `MAX_INPUT_BYTES` (its newline aside).

    Raises:
        LangTreeError: A line is longer, or is not UTF-8.
    """
    source.seek(0)
    read = iter(lambda: source.readline(MAX_INPUT_BYTES + 1), b"")
    for number, line in enumerate(read, start=1):
        cannot = f"Cannot read the row at {str(path)!r}, line {number}"
        # One byte past the limit, and no newline yet: the line goes on.
        if len(line) > MAX_INPUT_BYTES and not line.endswith(b"\n"):
            raise LangTreeError(
                f"{cannot}: it holds more than the {MAX_INPUT_BYTES:,} bytes "
                f"({MAX_INPUT_MIB} MiB) that a row may hold\n"
                f"  hint: {LARGE_INPUTS_HINT}"
            )
        yield number, utf8_text(line, cannot, first=number == 1)


def _check_row(source: Path, number: int, line: str) -> None:
    where = f"{str(source)!r}, line {number}"
    value = json_value(line, f"Cannot read the row at {where}")
    if not isinstance(value, dict):
        raise LangTreeError(
            f"Row at {where} is not a JSON object\n"
            "  hint: each line holds one row's values, e.g. "
            '{"TaskName": {"field": "value"}}'
        )


def _written_rows(output: Path | None) -> frozenset[int]:
    """The rows an earlier run wrote an output for (``--output`` is read, if it exists).

    A last line without its newline is what a run stopped mid-write leaves: a complete
    result gets its newline, so that the next line starts a line of its own; a cut-off
    one is dropped from the file (standard error says so) and its row runs again. Any
    other line that is not a result is refused. An output that is not a file of its own
    (a named pipe, ``/dev/stdout``, a shell's ``>(...)``) is written to and never read:
    nothing in it can be read back, and reading it would wait for ever.

    Raises:
        LangTreeError: The file cannot be read or repaired, or a line other than the last
            unterminated one is not a result of ``langtree run``.
    """
    if output is None or not output.exists() or _written_elsewhere(output):
        return frozenset()
    try:
        done, tail = _read_results(output)
    except OSError as error:
        raise LangTreeError(f"Cannot read the results in {str(output)!r}: {error}") from None
    if tail is not None:
        try:
            done |= _settle(output, tail)
        except OSError as error:
            raise LangTreeError(f"Cannot write results to {str(output)!r}: {error}") from None
    return frozenset(done)


def _written_elsewhere(output: Path) -> bool:
    """Whether ``output`` is a pipe, a device or a socket.

    Raises:
        LangTreeError: It is a folder.
    """
    try:
        kind = special_kind(output.stat().st_mode)
    except OSError:
        return False  # reading it says why
    if kind == "a folder":
        raise LangTreeError(
            f"--output {str(output)!r} is a folder\n"
            f"  hint: name a file in it, e.g. {str(output / 'results.jsonl')!r}"
        )
    return kind is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Tail:
    """The last line of a results file, without its newline."""

    number: int
    text: bytes
    offset: int
    """Where the line starts in the file, in bytes."""


def _read_results(output: Path) -> tuple[set[int], _Tail | None]:
    """The rows the file's complete lines hold an output for, and its unterminated last
    line (``None``: the file ends with a newline)."""
    done: set[int] = set()
    offset = 0
    # Read as bytes: a cut-off line may end inside a character.
    with output.open("rb") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.endswith(b"\n"):
                tail = _Tail(number=number, text=line, offset=offset)
                return done, tail if line.strip() else None
            if line.strip():
                done.update(_written_row(output, number, _result(line)))
            offset += len(line)
    return done, None


def _settle(output: Path, tail: _Tail) -> set[int]:
    """The row of a complete last line, now ended with a newline; else nothing, the
    cut-off line dropped from the file and the drop said on standard error."""
    value = _result(tail.text)
    if value is not None:
        rows = _written_row(output, tail.number, value)
        with output.open("ab") as file:
            file.write(b"\n")
        return rows
    with output.open("r+b") as file:
        file.truncate(tail.offset)
    row = _CUT_ROW.match(tail.text)
    which = f" (row {int(row.group(1))})" if row else ""
    again = "the row runs again" if row else "its row runs again"
    print(
        f"langtree: {str(output)!r}, line {tail.number}{which} was cut off when a run "
        f"stopped: dropped, {again}",
        file=sys.stderr,
    )
    return set()


_CUT_ROW = re.compile(rb'\{"row": (\d+)[,}]')
"""The row a cut-off result line was for, when the cut left its number whole (the line
starts as ``json.dumps`` writes it)."""


def _result(line: bytes) -> dict[str, object] | None:
    """The JSON object a line holds (``None``: it holds none)."""
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def _written_row(output: Path, number: int, value: dict[str, object] | None) -> set[int]:
    row = value.get("row") if value is not None else None
    if value is None or not isinstance(row, int) or row < 0:
        raise LangTreeError(
            f"{str(output)!r}, line {number} is not a result of langtree run\n"
            "  hint: give --output a new file, or the file an earlier run of the same "
            "dataset wrote"
        )
    return {row} if "output" in value else set()


def _line(row: RowResult, tasks: Mapping[str, type[TreeNode]], task_name: str) -> dict[str, object]:
    """The row's result line: an error for a row that failed, also one whose run went on
    (``on_error: "continue"``) and holds a task that does not validate."""
    if row.error is not None:
        return {"row": row.index, "error": error_text(row.error)}
    assert row.result is not None  # a row without an error ran to its result
    return {"row": row.index, "output": task_output(row.result, tasks, task_name)}


def task_output(result: RunResult, tasks: Mapping[str, type[TreeNode]], task_name: str) -> object:
    """A run's ``tasks`` (by tag) as JSON data, by class name, or the one task asked for:
    each as `RunResult.dump()` gives it, or, for a task that does not validate (a run
    that failed or stopped), the values the run had written (`RunResult.partial()`)."""
    values = {
        task.__name__: result.dump(tag) if tag in result.tasks else result.partial(tag)
        for tag, task in tasks.items()
    }
    return values[next(iter(values))] if task_name else values


@contextlib.contextmanager
def _results(output: Path | None) -> Iterator[LineFile | StandardLines]:
    """Where the results go: the output file, opened to append, or standard output.

    Raises:
        OutputError: The file cannot be opened.
    """
    if output is None:
        yield StandardLines()
        return
    with LineFile(output) as file:
        yield file


def _resume_hint(run: RowsRun) -> str:
    if run.output is None:
        return "langtree: give --output FILE.jsonl to resume a stopped dataset run"
    journal = "" if "journal" in run.options else ", and --journal FILE.sqlite to replay calls"
    return f"langtree: run the same command again to resume (same --output{journal})"
