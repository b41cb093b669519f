"""``langtree journal salvage OLD NEW``: the answers of a damaged journal that can still be
read, copied into a new journal (see `langtree.runtime.durable._salvage`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from langtree.runtime import SalvageReport, listed_positions, salvage_journal

__all__ = ["add_journal_command"]


def add_journal_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    summary = "work on a journal file: salvage a damaged one"
    command = commands.add_parser("journal", help=summary, description=summary)
    actions = command.add_subparsers(required=True, metavar="ACTION")
    summary = "copy the answers of a damaged journal that can still be read into a new one"
    salvage = actions.add_parser("salvage", help=summary, description=summary)
    salvage.add_argument(
        "source", type=Path, metavar="OLD.sqlite", help="the damaged journal (it is only read)"
    )
    salvage.add_argument(
        "target", type=Path, metavar="NEW.sqlite", help="the new journal: a path with no file yet"
    )
    salvage.set_defaults(handler=_salvage)


def _salvage(arguments: argparse.Namespace) -> int:
    print(_salvaged(salvage_journal(arguments.source, arguments.target)))
    return 0


def _salvaged(report: SalvageReport) -> str:
    """One line: what was copied, and what was lost."""
    where = f"of {report.source!r} into {report.target!r}"
    if report.lost is None:
        return (
            f"langtree: copied {report.copied} answers {where}; the damage hides how many "
            "could not be read"
        )
    held = report.copied + report.lost
    line = f"langtree: copied {report.copied} of the {held} answers {where}"
    if not report.lost:
        return line
    rows = ""
    if report.damaged_rows:
        listed = listed_positions(report.damaged_rows)
        plural = "s" if len(report.damaged_rows) > 1 else ""
        among = " among them" if len(report.damaged_rows) < report.lost else ""
        rows = f" (row{plural} {listed}{among})"
    return f"{line}; {report.lost} could not be read{rows}"
