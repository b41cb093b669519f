"""Loading the user's tasks for the commands, and the arguments that name them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias

from langtree import RunStructure
from langtree.cli._config import add_config_option
from langtree.errors import Diagnostic, StructureError
from langtree.structure import (
    ConfigInput,
    TreeNode,
    class_parse_diagnostics,
    load_modules,
    node_classes,
    task_tag,
)

if TYPE_CHECKING:
    # argparse's class of subcommands is generic to type checkers only.
    Commands: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]
    Handler: TypeAlias = Callable[[argparse.Namespace], int]


def classes_in(targets: Sequence[str]) -> tuple[list[type[TreeNode]], list[Diagnostic]]:
    """The node classes of the targets, or (none and) every module that does not import.

    Raises:
        LangTreeError: A target does not exist (a usage error).
    """
    classes: list[type[TreeNode]] = []
    problems: list[Diagnostic] = []
    for target in targets:
        try:
            classes.extend(cls for module in load_modules(target) for cls in node_classes(module))
        except StructureError as error:
            problems.extend(error.diagnostics)
    return ([] if problems else classes), problems


def structure_of(
    classes: list[type[TreeNode]], config: ConfigInput
) -> tuple[RunStructure, list[Diagnostic]]:
    """The tasks among ``classes`` in one structure with the settings ``config`` (as
    ``--config`` gives them, checked), or the syntax errors that prevent it."""
    syntax = [diagnostic for cls in classes for diagnostic in class_parse_diagnostics(cls)]
    structure = RunStructure(config)
    if not syntax:
        for cls in classes:
            if task_tag(cls.__name__) is not None:
                structure.add(cls)
    return structure, syntax


def diagnostics_of(structure: RunStructure) -> list[Diagnostic]:
    try:
        return list(structure.validate())
    except StructureError as error:
        return sorted(
            [*error.diagnostics, *structure.warnings()], key=lambda diagnostic: diagnostic.sort_key
        )


def valid_structure(targets: Sequence[str], config: ConfigInput) -> RunStructure | None:
    """The tasks found, with the settings ``config``, validated; ``None`` after printing
    the errors to stderr (or that there is no task)."""
    classes, diagnostics = classes_in(targets)
    structure, syntax = structure_of(classes, config)
    diagnostics = diagnostics or syntax
    if not diagnostics:
        diagnostics = [d for d in diagnostics_of(structure) if d.severity == "error"]
    for diagnostic in diagnostics:
        print(diagnostic.render_compiler(), file=sys.stderr)
    if diagnostics or not has_tasks(structure, targets, classes):
        return None
    return structure


def has_tasks(
    structure: RunStructure, targets: Sequence[str], classes: Sequence[type[TreeNode]]
) -> bool:
    """Whether ``structure`` holds a task; if not, say so on stderr, naming the targets
    and the node classes found in them (a file of nodes without their task, say)."""
    if structure.tasks:
        return True
    where = ", ".join(repr(target) for target in targets)
    found = (
        f"the node classes there ({', '.join(cls.__name__ for cls in classes)}) are not tasks"
        if classes
        else "no TreeNode class is defined there"
    )
    print(
        f"langtree: error: No task found in {where}: {found}\n"
        "  hint: a root task is a TreeNode class named Task<Name>, e.g. "
        "'class TaskReport(TreeNode): ...'",
        file=sys.stderr,
    )
    return False


def add_targets_command(
    commands: Commands, name: str, handler: Handler, *, summary: str
) -> argparse.ArgumentParser:
    """A command on every task of files, folders or modules (``PATH_OR_MODULE...``)."""
    command = _command(commands, name, handler, summary)
    command.add_argument(
        "targets", nargs="+", metavar="PATH_OR_MODULE", help="a .py file, a folder or a module"
    )
    add_config_option(command)
    return command


def add_task_command(
    commands: Commands, name: str, handler: Handler, *, summary: str, purpose: str
) -> argparse.ArgumentParser:
    """A command on one file or module and, optionally, one of its tasks
    (``PATH[:TaskName]``), for ``purpose`` (``"run"``: "the task to run")."""
    command = _command(commands, name, handler, summary)
    command.add_argument(
        "target", metavar="PATH[:TaskName]", help=f"a .py file or module, and the task to {purpose}"
    )
    return command


def _command(
    commands: Commands, name: str, handler: Handler, summary: str
) -> argparse.ArgumentParser:
    command = commands.add_parser(name, help=summary, description=summary)
    command.set_defaults(handler=handler)
    return command
