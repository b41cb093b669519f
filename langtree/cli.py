"""The ``langtree`` command line.

``langtree check PATH_OR_MODULE...`` validates every ``Task*`` class found, together, and
prints problems compiler style. ``langtree graph PATH_OR_MODULE...`` prints the plan as a
Mermaid flowchart.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from langtree.api import RunStructure
from langtree.errors import Diagnostic, LangTreeError, StructureError
from langtree.structure.discovery import load_modules, node_classes
from langtree.structure.texts import class_parse_diagnostics
from langtree.structure.tree import task_tag
from langtree.structure.tree_node import TreeNode

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 problems found, 2 bad usage)."""
    arguments = _build_parser().parse_args(argv)
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
    for name, handler, summary in (
        ("check", _check, "validate every Task class in files or modules"),
        ("graph", _graph, "print the execution plan as a Mermaid flowchart"),
    ):
        command = commands.add_parser(name, help=summary, description=summary)
        command.add_argument(
            "targets", nargs="+", metavar="PATH_OR_MODULE", help="a .py file, a folder or a module"
        )
        command.set_defaults(handler=handler)
    return parser


def _classes(targets: Sequence[str]) -> list[type[TreeNode]]:
    return [
        cls for target in targets for module in load_modules(target) for cls in node_classes(module)
    ]


def _structure(classes: list[type[TreeNode]]) -> tuple[RunStructure, list[Diagnostic]]:
    """The tasks among ``classes`` in one structure, or the syntax errors that prevent it."""
    syntax = [diagnostic for cls in classes for diagnostic in class_parse_diagnostics(cls)]
    structure = RunStructure()
    if not syntax:
        for cls in classes:
            if task_tag(cls.__name__) is not None:
                structure.add(cls)
    return structure, syntax


def _diagnostics(structure: RunStructure) -> list[Diagnostic]:
    try:
        return list(structure.validate())
    except StructureError as error:
        return sorted(
            [*error.diagnostics, *structure.warnings()], key=lambda diagnostic: diagnostic.sort_key
        )


def _check(arguments: argparse.Namespace) -> int:
    classes = _classes(arguments.targets)
    structure, diagnostics = _structure(classes)
    if not diagnostics:
        diagnostics = _diagnostics(structure)
    for diagnostic in diagnostics:
        print(diagnostic.render_compiler())
    errors = sum(diagnostic.severity == "error" for diagnostic in diagnostics)
    warnings = len(diagnostics) - errors
    print(
        f"checked {len(structure.tasks)} task(s), {len(classes)} node class(es): "
        f"{errors} error(s), {warnings} warning(s)"
    )
    return 1 if errors else 0


def _graph(arguments: argparse.Namespace) -> int:
    structure, diagnostics = _structure(_classes(arguments.targets))
    if not diagnostics:
        diagnostics = [d for d in _diagnostics(structure) if d.severity == "error"]
    if diagnostics:
        for diagnostic in diagnostics:
            print(diagnostic.render_compiler(), file=sys.stderr)
        return 1
    print(structure.plan().to_mermaid())
    return 0


if __name__ == "__main__":
    sys.exit(main())
