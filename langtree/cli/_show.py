"""``langtree show RUN``: write the page of a run, one HTML file, and open nothing.

RUN is the JSON that ``RunResult.to_json()`` wrote, or a journal (``--journal`` of
``langtree run``, ``run(..., journal=...)``); see `langtree.runtime.page`. It is read only
when it is a regular file of at most ``--max-bytes``. The page goes next to RUN
(``run.json`` → ``run.html``) unless ``--output`` says where, and its path is printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from langtree.cli._output import emit
from langtree.errors import LangTreeError
from langtree.runtime import DEFAULT_MAX_RUN_BYTES, read_run, write_page

__all__ = ["add_show_command"]


def add_show_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    summary = "write a run's page: one HTML file to open in a browser, offline"
    command = commands.add_parser("show", help=summary, description=summary)
    command.add_argument(
        "run",
        type=Path,
        metavar="RUN",
        help="a saved result (the JSON that RunResult.to_json() wrote) or a journal file",
    )
    command.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="PAGE.html",
        help="where to write the page (default: next to RUN, with the suffix .html)",
    )
    command.add_argument(
        "--max-bytes",
        type=int,
        default=DEFAULT_MAX_RUN_BYTES,
        metavar="N",
        help=f"the largest RUN read (default: {DEFAULT_MAX_RUN_BYTES:,} bytes, 100 MiB)",
    )
    command.set_defaults(handler=_show)


def _show(arguments: argparse.Namespace) -> int:
    source: Path = arguments.run
    page: Path = arguments.output or source.with_suffix(".html")
    if arguments.max_bytes < 1:
        raise LangTreeError(
            f"--max-bytes must be a whole number of bytes of at least 1, got "
            f"{arguments.max_bytes}\n  hint: e.g. --max-bytes {2 * DEFAULT_MAX_RUN_BYTES}"
        )
    run = read_run(source, arguments.max_bytes)
    if page.resolve() == source.resolve():
        raise LangTreeError(
            f"The page would replace the run it shows, {str(source)!r}\n"
            "  hint: give another path with --output PAGE.html"
        )
    write_page(run, page)
    emit(str(page))
    return 0
