"""The ``langtree`` command line.

``langtree check PATH_OR_MODULE...`` validates every ``Task*`` class found, together, and
prints problems compiler style. ``langtree graph PATH_OR_MODULE... [--input FILE.json]``
prints the plan as a Mermaid flowchart (the fields the inputs give are known, not
generated). ``langtree prompts PATH[:TaskName] [--input FILE.json]`` prints every
prompt a run would send, with its token count, as Markdown. ``langtree run
PATH[:TaskName] [--input FILE.json] [--model NAME]`` runs the tree and prints the filled
tasks as JSON, with progress and a summary on stderr; its run settings (``--method``,
``--max-concurrency``, ``--max-retries``, ``--call-timeout``, ``--deadline``,
``--max-calls``, ``--max-tokens``) are those of ``RunStructure.run``, and its errors name
them by their flags (``langtree.cli._flags``). Every command takes
``--config SPEC``, the settings of ``RunStructure(config)`` (a ``.json`` file holding one
object, or ``module:attribute`` naming a dict; see ``langtree.cli._config``), whose run
settings the options of ``run`` override. A run whose tasks need inputs that no step
generates (assets without a default) and that ``--input`` does not give is refused before
any call. A run that fails, reaches a limit or is interrupted prints what had finished (the
JSON of a finished run, with the values written so far) and exits with 1 (130 for
Ctrl-C, 2 for a journal that cannot record an answer); so does a run that went on after
failures (``on_error: "continue"``) and holds a task that does not validate. An option that
cannot apply (``--output`` or ``--as-completed`` without a dataset, ``--journal-max-age``
without a journal) is a usage error, a ``--var`` that no task uses a warning, and targets
that hold no task an error (status 1). ``langtree journal salvage OLD NEW`` copies the
answers of a damaged journal that can still be read into a new journal (see
``langtree.cli._journal``). ``langtree show RUN [--output PAGE.html]`` writes the page of
a run (a saved result's JSON or a journal): one HTML file that works offline; it opens
nothing. ``langtree --version`` prints the installed version.

Exit statuses: 0 ok; 1 problems in the user's tree or run (a module that does not import,
tasks that do not validate, a prompt over its token budget, a failed run); 2 usage or
environment errors (bad arguments, a missing file, an ``--input`` that cannot be read, is
not a JSON object or lacks inputs the run needs, a ``--model`` that cannot be built, a
``--config`` that cannot be read or whose settings ``RunStructure`` refuses, standard
output or a dataset's ``--output`` that cannot be written, e.g. on a full disk); 130
Ctrl-C; 141 the reader of the output went away (``langtree run ... | head -1``), the
status a shell reports for a program ended by a broken pipe. Each error is one message
without a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from langtree._display import fenced
from langtree._version import __version__
from langtree.cli._config import add_config_option, read_config
from langtree.cli._hints import error_text
from langtree.cli._inputs import (
    add_variables_option,
    read_inputs,
    variables_from,
    warn_unused_variables,
)
from langtree.cli._journal import add_journal_command
from langtree.cli._output import emit, flush_stdout, silence_stdout
from langtree.cli._run import add_run_command
from langtree.cli._show import add_show_command
from langtree.cli._trees import (
    add_targets_command,
    add_task_command,
    classes_in,
    diagnostics_of,
    has_tasks,
    structure_of,
    valid_structure,
)
from langtree.errors import LangTreeError
from langtree.prompts import Prompts

__all__ = ["main"]


BROKEN_PIPE = 141
"""The exit status when the output's reader went away: 128 + SIGPIPE, as a shell reports."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Returns:
        The exit status: 0 ok, 1 problems in the user's tree or run, 2 usage or
        environment errors, 130 Ctrl-C during a run, 141 the output's reader went away.
    """
    arguments = _build_parser().parse_args(argv)
    try:
        status = int(arguments.handler(arguments))
        flush_stdout()
    except LangTreeError as error:
        print(f"langtree: error: {error_text(error)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        silence_stdout()
        return BROKEN_PIPE
    return status


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="langtree", description="Check, preview and run LangTree prompt trees."
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"langtree {__version__}",
        help="print the version and exit",
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    add_targets_command(
        commands, "check", _check, summary="validate every Task class in files or modules"
    )
    graph = add_targets_command(
        commands, "graph", _graph, summary="print the execution plan as a Mermaid flowchart"
    )
    graph.add_argument(
        "--input",
        type=Path,
        metavar="FILE.json",
        help="input values as JSON, by task class name or tag: the fields they give are "
        "known, not generated",
    )
    _add_prompts_command(commands)
    add_run_command(commands)
    add_journal_command(commands)
    add_show_command(commands)
    return parser


def _add_prompts_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = add_task_command(
        commands,
        "prompts",
        _prompts,
        summary="print every prompt a run would send, with token counts, as Markdown",
        purpose="preview",
    )
    command.add_argument(
        "--input", type=Path, metavar="FILE.json", help="the task's input values as JSON"
    )
    add_variables_option(command)
    add_config_option(command)


def _check(arguments: argparse.Namespace) -> int:
    config = read_config(arguments.config)
    classes, diagnostics = classes_in(arguments.targets)
    structure, syntax = structure_of(classes, config)
    diagnostics = diagnostics or syntax or diagnostics_of(structure)
    if not diagnostics and not has_tasks(structure, arguments.targets, classes):
        return 1
    for diagnostic in diagnostics:
        emit(diagnostic.render_compiler())
    errors = sum(diagnostic.severity == "error" for diagnostic in diagnostics)
    warnings = len(diagnostics) - errors
    emit(
        f"checked {len(structure.tasks)} task(s), {len(classes)} node class(es): "
        f"{errors} error(s), {warnings} warning(s)"
    )
    return 1 if errors else 0


def _graph(arguments: argparse.Namespace) -> int:
    structure = valid_structure(arguments.targets, read_config(arguments.config))
    if structure is None:
        return 1
    inputs = read_inputs(arguments.input, structure, "")
    emit(structure.plan(inputs).to_mermaid())
    return 0


def _prompts(arguments: argparse.Namespace) -> int:
    target, _, task_name = arguments.target.partition(":")
    config = read_config(arguments.config)
    variables = variables_from(arguments.var)
    structure = valid_structure([target], config)
    if structure is None:
        return 1
    inputs = read_inputs(arguments.input, structure, task_name)
    warn_unused_variables(structure, variables)
    prompts = structure.prompts(inputs, variables=variables)
    emit(_prompts_markdown(prompts))
    over = [prompt for prompt in prompts if prompt.over_budget]
    for prompt in over:
        print(
            f"langtree: {prompt.node_path}: {prompt.token_count} tokens, over the budget of "
            f"{prompt.token_budget}",
            file=sys.stderr,
        )
    return 1 if over else 0


def _prompts_markdown(prompts: Prompts) -> str:
    total = sum(prompt.token_count for prompt in prompts)
    parts = [
        f"# {len(prompts)} prompt(s), {total} tokens in their messages",
        prompts.cost_markdown(),
    ]
    for number, prompt in enumerate(prompts, start=1):
        model = f"model `{prompts.model_of(prompt)}`"
        budget = (
            f" **Over the budget of {prompt.token_budget} tokens.**" if prompt.over_budget else ""
        )
        parts.append(
            f"## {number}. {prompt.node_path}: {', '.join(prompt.fields)}\n\n"
            f"Step `{prompt.step_id}`, {prompt.token_count} tokens ({prompt.encoding}), "
            f"{model}.{budget}"
        )
        for message in prompt.messages:
            text = fenced(str(message.content).rstrip(), "markdown")
            parts.append(f"### {message.type.capitalize()}\n\n{text}")
    return "\n\n".join(parts)
