"""The ``langtree`` command line.

``langtree check PATH_OR_MODULE...`` validates every ``Task*`` class found, together, and
prints problems compiler style. ``langtree graph PATH_OR_MODULE...`` prints the plan as a
Mermaid flowchart. ``langtree prompts PATH[:TaskName] [--input FILE.json]`` prints every
prompt a run would send, with its token count, as Markdown.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from langtree.api import RunStructure
from langtree.errors import Diagnostic, LangTreeError, StructureError
from langtree.prompts.preview import StepPrompt
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
    _add_prompts_command(commands)
    return parser


def _add_prompts_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    summary = "print every prompt a run would send, with token counts, as Markdown"
    command = commands.add_parser("prompts", help=summary, description=summary)
    command.add_argument(
        "target", metavar="PATH[:TaskName]", help="a .py file or module, and the task to preview"
    )
    command.add_argument(
        "--input", type=Path, metavar="FILE.json", help="the task's input values as JSON"
    )
    command.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an external prompt variable (repeatable)",
    )
    command.set_defaults(handler=_prompts)


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


def _valid_structure(targets: Sequence[str]) -> RunStructure | None:
    """The tasks found, validated; ``None`` after printing the errors to stderr."""
    structure, diagnostics = _structure(_classes(targets))
    if not diagnostics:
        diagnostics = [d for d in _diagnostics(structure) if d.severity == "error"]
    for diagnostic in diagnostics:
        print(diagnostic.render_compiler(), file=sys.stderr)
    return None if diagnostics else structure


def _graph(arguments: argparse.Namespace) -> int:
    structure = _valid_structure(arguments.targets)
    if structure is None:
        return 1
    print(structure.plan().to_mermaid())
    return 0


def _prompts(arguments: argparse.Namespace) -> int:
    target, _, task_name = arguments.target.partition(":")
    structure = _valid_structure([target])
    if structure is None:
        return 1
    inputs = _read_inputs(arguments.input, structure, task_name)
    prompts = structure.prompts(inputs, variables=_variables(arguments.var))
    print(_prompts_markdown(prompts))
    over = [prompt for prompt in prompts if prompt.over_budget]
    for prompt in over:
        print(
            f"langtree: {prompt.node_path}: {prompt.token_count} tokens, over the budget of "
            f"{prompt.token_budget}",
            file=sys.stderr,
        )
    return 1 if over else 0


def _read_inputs(
    path: Path | None, structure: RunStructure, task_name: str
) -> dict[object, object]:
    if task_name and task_tag(task_name) not in structure.tasks:
        found = ", ".join(cls.__name__ for cls in structure.tasks.values()) or "none"
        raise LangTreeError(f"No task {task_name!r} found; the tasks are {found}")
    if path is None:
        return {}
    try:
        values = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise LangTreeError(f"Cannot read inputs from {str(path)!r}: {error}") from None
    if not task_name:
        return dict(values) if isinstance(values, dict) else {}
    return {task_tag(task_name): values}


def _variables(pairs: list[str]) -> dict[str, object]:
    variables: dict[str, object] = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals:
            raise LangTreeError(f"--var takes NAME=VALUE, got {pair!r}")
        variables[name] = value
    return variables


def _prompts_markdown(prompts: list[StepPrompt]) -> str:
    total = sum(prompt.token_count for prompt in prompts)
    parts = [f"# {len(prompts)} prompt(s), {total} tokens"]
    for number, prompt in enumerate(prompts, start=1):
        model = f"model `{prompt.model}`" if prompt.model else "the default model"
        budget = (
            f" **Over the budget of {prompt.token_budget} tokens.**" if prompt.over_budget else ""
        )
        parts.append(
            f"## {number}. {prompt.node_path}: {', '.join(prompt.fields)}\n\n"
            f"Step `{prompt.step_id}`, {prompt.token_count} tokens ({prompt.encoding}), "
            f"{model}.{budget}"
        )
        for message in prompt.messages:
            parts.append(f"### {message.type.capitalize()}\n\n{_fenced(str(message.content))}")
    return "\n\n".join(parts)


def _fenced(text: str) -> str:
    """``text`` in a code fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}markdown\n{text.rstrip()}\n{fence}"


if __name__ == "__main__":
    sys.exit(main())
