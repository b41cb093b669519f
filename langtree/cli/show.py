"""``langtree show RUN``: write the page of a run, one HTML file, and open nothing.

RUN is the JSON that ``RunResult.to_json()`` wrote, or a journal (``--journal`` of
``langtree run``, ``run(..., journal=...)``); see `langtree.runtime.page`. The page goes
next to RUN (``run.json`` → ``run.html``) unless ``--output`` says where, and its path is
printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from langtree.errors import LangTreeError
from langtree.runtime.page import read_run, write_page


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
    command.set_defaults(handler=show_run)


def show_run(arguments: argparse.Namespace) -> int:
    source: Path = arguments.run
    page: Path = arguments.output or source.with_suffix(".html")
    run = read_run(source)
    if page.resolve() == source.resolve():
        raise LangTreeError(
            f"The page would replace the run it shows, {str(source)!r}\n"
            "  hint: give another path with --output PAGE.html"
        )
    write_page(run, page)
    print(page)
    return 0
