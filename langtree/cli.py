"""The ``langtree`` command line: ``langtree check PATH_OR_MODULE ...``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from langtree.errors import LangTreeError
from langtree.structure.discovery import load_modules, node_classes
from langtree.structure.texts import class_parse_diagnostics

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 problems found, 2 bad usage)."""
    parser = _build_parser()
    arguments = parser.parse_args(argv)
    try:
        return int(arguments.handler(arguments))
    except LangTreeError as error:
        print(f"langtree: error: {error}", file=sys.stderr)
        return 2


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="langtree", description="Check, preview and run LangTree prompt trees."
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    check = commands.add_parser(
        "check", help="check every DSL command of the node classes in files or modules"
    )
    check.add_argument(
        "targets", nargs="+", metavar="PATH_OR_MODULE", help="a .py file, a folder or a module"
    )
    check.set_defaults(handler=_check)
    return parser


def _check(arguments: argparse.Namespace) -> int:
    classes = [
        cls
        for target in arguments.targets
        for module in load_modules(target)
        for cls in node_classes(module)
    ]
    diagnostics = [diagnostic for cls in classes for diagnostic in class_parse_diagnostics(cls)]
    for diagnostic in diagnostics:
        print(diagnostic.render_compiler())
    errors = sum(diagnostic.severity == "error" for diagnostic in diagnostics)
    print(f"checked {len(classes)} node class(es): {errors} error(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
