"""The ``langtree`` command line.

``langtree check PATH_OR_MODULE...`` validates every ``Task*`` class found, together, and
prints problems compiler style. ``langtree graph PATH_OR_MODULE...`` prints the plan as a
Mermaid flowchart. ``langtree prompts PATH[:TaskName] [--input FILE.json]`` prints every
prompt a run would send, with its token count, as Markdown. ``langtree run
PATH[:TaskName] [--input FILE.json] [--model NAME]`` runs the tree and prints the filled
tasks as JSON, with progress and a summary on stderr; its run settings (``--method``,
``--max-concurrency``, ``--max-retries``, ``--call-timeout``, ``--deadline``,
``--max-calls``, ``--max-tokens``) are those of ``RunStructure.run``. A run that fails,
reaches a limit or is interrupted prints what had finished and exits with 1 (130 for
Ctrl-C).

Exit statuses: 0 ok; 1 problems in the user's tree or run (a module that does not import,
tasks that do not validate, a prompt over its token budget, a failed run); 2 usage or
environment errors (bad arguments, a missing file, an ``--input`` that cannot be read or
is not a JSON object, a ``--model`` that cannot be built); 130 Ctrl-C; 141 the reader of
the output went away (``langtree run ... | head -1``), the status a shell reports for a
program ended by a broken pipe. Each error is one message without a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from langchain_core.runnables import Runnable

from langtree.api import RunStructure
from langtree.errors import Diagnostic, LangTreeError, StructureError
from langtree.prompts.preview import StepPrompt
from langtree.runtime.failure import RunInterrupted, RunLimitError, StepFailedError
from langtree.runtime.methods import METHOD_CHOICES, MethodChoice
from langtree.runtime.progress import RunProgress
from langtree.runtime.provider import ChatRunnable, LLMProvider, ModelConfig
from langtree.runtime.result import TraceRecord
from langtree.runtime.settings import RunOptions
from langtree.runtime.usage import UsageLimits
from langtree.structure.discovery import load_modules, node_classes
from langtree.structure.texts import class_parse_diagnostics
from langtree.structure.tree import task_tag
from langtree.structure.tree_node import TreeNode
from langtree.testing import FakeChatModel

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
        sys.stdout.flush()
    except LangTreeError as error:
        print(f"langtree: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE
    return status


def _silence_stdout() -> None:
    """Point stdout at the null device, so Python's final flush meets no broken pipe.

    What Python's documentation advises for a program whose output is piped into
    ``head`` (see "Note on SIGPIPE" in the ``signal`` module's documentation).
    """
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, descriptor)
    os.close(devnull)


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
    _add_run_command(commands)
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


def _add_run_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    summary = "run the tree and print the filled tasks as JSON"
    command = commands.add_parser("run", help=summary, description=summary)
    command.add_argument(
        "target", metavar="PATH[:TaskName]", help="a .py file or module, and the task to run"
    )
    command.add_argument(
        "--input",
        type=Path,
        metavar="FILE.json",
        help="input values as JSON: by task class name or tag, or (with :TaskName) the "
        "task's own values",
    )
    command.add_argument(
        "--model",
        metavar="NAME",
        help="'fake' (offline test model), or module:attribute naming an LLMProvider, a "
        "chat model or a function returning one (default: the embedded local model)",
    )
    command.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an external prompt variable (repeatable)",
    )
    _add_run_settings(command)
    command.set_defaults(handler=_run)


def _add_run_settings(command: argparse.ArgumentParser) -> None:
    settings = command.add_argument_group("run settings")
    settings.add_argument(
        "--method",
        choices=METHOD_CHOICES,
        help="how structured output is asked for (default: auto); for a chat model, not "
        "for an LLMProvider, which sets it per model with ModelConfig",
    )
    for flag, kind, meaning in (
        ("--max-concurrency", int, "the most model calls in flight (default 16)"),
        ("--max-retries", int, "how many times invalid output is asked for again (default 2)"),
        ("--call-timeout", float, "seconds one call may take before it is retried"),
        ("--deadline", float, "seconds the whole run may take"),
        ("--max-calls", int, "the most model calls the run may make, retries included"),
        ("--max-tokens", int, "the most tokens (prompt and completion) the run may use"),
    ):
        metavar = "SECONDS" if kind is float else "N"
        settings.add_argument(flag, type=kind, metavar=metavar, help=meaning)


def _run_options(arguments: argparse.Namespace) -> RunOptions:
    options: RunOptions = {}
    for name in ("max_concurrency", "max_retries", "call_timeout", "deadline"):
        value = getattr(arguments, name)
        if value is not None:
            options[name] = value
    if arguments.max_calls is not None or arguments.max_tokens is not None:
        options["usage_limits"] = UsageLimits(
            calls=arguments.max_calls, total_tokens=arguments.max_tokens
        )
    return options


def _classes(targets: Sequence[str]) -> tuple[list[type[TreeNode]], list[Diagnostic]]:
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
    classes, diagnostics = _classes(arguments.targets)
    structure, syntax = _structure(classes)
    diagnostics = diagnostics or syntax or _diagnostics(structure)
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
    classes, diagnostics = _classes(targets)
    structure, syntax = _structure(classes)
    diagnostics = diagnostics or syntax
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


def _run(arguments: argparse.Namespace) -> int:
    target, _, task_name = arguments.target.partition(":")
    checked = _valid_structure([target])
    if checked is None:
        return 1
    inputs = _read_inputs(arguments.input, checked, task_name, unwrap=True)
    variables = _variables(arguments.var)
    keys = _model_keys(checked, inputs)
    provider = _provider(arguments.model, keys, arguments.method)
    structure = RunStructure(checked.config, provider=provider)
    for tag, cls in checked.tasks.items():
        if not task_name or tag == task_tag(task_name):
            structure.add(cls)
    live = sys.stderr.isatty()
    progress = RunProgress(
        len(structure.prompts(inputs, variables)),
        on_change=(lambda done, total, failed: _show(done, total, failed, end="\r"))
        if live
        else None,
    )
    started = time.perf_counter()
    runnable = structure.build(variables, **_run_options(arguments))
    try:
        result = runnable.invoke(inputs, config={"callbacks": [progress]})
    except (StepFailedError, RunLimitError, RunInterrupted) as error:
        trace = error.result.trace if error.result is not None else ()
        _finish(trace, progress.total, live)
        print(f"langtree: error: {error}", file=sys.stderr)
        print(_summary(trace, time.perf_counter() - started), file=sys.stderr)
        return 130 if isinstance(error, RunInterrupted) else 1
    _finish(result.trace, progress.total, live)
    tasks = {type(task).__name__: task.model_dump(mode="json") for task in result.tasks.values()}
    output = tasks[next(iter(tasks))] if task_name else tasks
    print(json.dumps(output, indent=2, ensure_ascii=False))
    print(_summary(result.trace, time.perf_counter() - started), file=sys.stderr)
    return 0


def _finish(trace: Sequence[TraceRecord], total: int, live: bool) -> None:
    """The final progress line, counted from the trace (clears a live line first)."""
    if live:
        print(" " * 60, end="\r", file=sys.stderr)
    failed = sum(record.error is not None for record in trace)
    _show(len(trace), max(total, len(trace)), failed)


def _show(done: int, total: int, failed: int, end: str = "\n") -> None:
    print(f"langtree: {done}/{total} calls done, {failed} failed", end=end, file=sys.stderr)
    sys.stderr.flush()


def _summary(trace: Sequence[TraceRecord], seconds: float) -> str:
    """One line: calls, tokens (the provider's totals, else the prompts') and wall time."""
    tokens = sum(_tokens(record) for record in trace)
    return f"langtree: {len(trace)} call(s), {tokens} tokens, {seconds:.2f}s wall time"


def _tokens(record: TraceRecord) -> int:
    total = record.usage.get("total_tokens") if record.usage else None
    return total if isinstance(total, int) else record.token_count


def _model_keys(structure: RunStructure, inputs: dict[object, object]) -> list[str]:
    """The model keys the plan's steps use; ``"default"`` for steps without one."""
    models = [step.model for step in structure.plan(inputs).steps]
    keys = list(dict.fromkeys(model for model in models if model is not None))
    if None in models or not keys:
        keys = ["default", *(key for key in keys if key != "default")]
    return keys


NO_MODEL = (
    "no model configured: pass --model fake, --model module:attribute, or install the "
    "local model with `make local-model`"
)


def _provider(spec: str | None, keys: list[str], method: MethodChoice | None) -> LLMProvider:
    """The provider ``--model`` names, listing every key in ``keys``; a chat model is
    asked for structured output with ``method``.

    Raises:
        LangTreeError: The value names nothing usable, or building a model raised (the
            CLI exits with status 2).
    """
    return _built(_named_provider(spec, keys, method), keys, spec)


def _named_provider(spec: str | None, keys: list[str], method: MethodChoice | None) -> LLMProvider:
    if spec is None:
        try:  # the local model is an extra: import it only when it is asked for
            from langtree.models import default_local_model
        except ImportError:
            raise LangTreeError(NO_MODEL) from None
        return _same_model(default_local_model, keys, method)
    if spec == "fake":
        return _same_model(FakeChatModel, keys, method)
    module_name, colon, attribute = spec.rpartition(":")
    if not colon or not module_name or not attribute:
        raise LangTreeError(
            f"--model takes 'fake' or module:attribute, got {spec!r}\n"
            "  hint: e.g. --model my_models:provider (an LLMProvider or a chat model)"
        )
    try:
        modules = load_modules(module_name)
    except StructureError as error:
        rendered = "\n".join(diagnostic.render_compiler() for diagnostic in error.diagnostics)
        raise LangTreeError(
            f"--model {spec!r}: cannot import {module_name!r}:\n{rendered}"
        ) from None
    except LangTreeError as error:
        raise LangTreeError(f"--model {spec!r}: cannot import {module_name!r}: {error}") from None
    found = getattr(modules[0], attribute, None) if len(modules) == 1 else None
    if found is None:
        raise LangTreeError(f"--model {spec!r}: {module_name!r} has no attribute {attribute!r}")
    return _as_provider(found, spec, keys, method)


def _as_provider(
    found: object, spec: str, keys: list[str], method: MethodChoice | None
) -> LLMProvider:
    if callable(found) and not isinstance(found, (LLMProvider, Runnable, type)):
        found = _called(found, spec)
    if isinstance(found, LLMProvider):
        if method is not None:
            raise LangTreeError(
                f"--method does not apply to --model {spec!r}, an LLMProvider\n"
                "  hint: set the method per model in the provider: "
                "LLMProvider({'key': ModelConfig(model, method=...)})"
            )
        return found
    if isinstance(found, Runnable):
        return _same_model(lambda: found, keys, method)
    raise LangTreeError(
        f"--model {spec!r} is a {type(found).__name__!r}, not an LLMProvider or a chat model\n"
        "  hint: name an LLMProvider, a langchain_core BaseChatModel (or a runnable around "
        "one), or a function without arguments returning one"
    )


def _called(factory: Callable[[], object], spec: str) -> object:
    try:
        return factory()
    except LangTreeError:
        raise
    # A factory is the user's code and may raise any type (a client without its API key):
    # the CLI reports it in one message, as an environment error, not with a traceback.
    except Exception as error:  # noqa: BLE001
        raise LangTreeError(_factory_failed(f"--model {spec!r}", error)) from None


def _built(provider: LLMProvider, keys: list[str], spec: str | None) -> LLMProvider:
    """``provider`` with the models the run uses built now, so that a factory that fails
    stops the CLI before the run starts (``LLMProvider`` calls each factory once)."""
    for key in keys:
        if key in provider.list_models():
            try:
                provider.get(key)
            except LangTreeError:
                raise
            # As in _called: what the factory raises becomes one message.
            except Exception as error:  # noqa: BLE001
                subject = (
                    f"Model {key!r} of --model {spec!r}"
                    if spec is not None
                    else "The embedded local model"
                )
                raise LangTreeError(_factory_failed(subject, error)) from None
    return provider


def _factory_failed(subject: str, error: Exception) -> str:
    described = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return (
        f"{subject} could not be built: {described}\n"
        "  hint: check what building the model needs (an API key in the environment, an "
        "installed package, a reachable server)"
    )


def _same_model(
    build: Callable[[], ChatRunnable], keys: list[str], method: MethodChoice | None
) -> LLMProvider:
    """One model (built on first use) under every key, asked by ``method``."""
    model = ModelConfig(build, method=method or "auto")
    return LLMProvider(dict.fromkeys(keys, model))


MAX_INPUT_DEPTH = 100
"""The most levels of objects and arrays ``--input`` may nest (deeper values would exhaust
Python's recursion limit in the libraries that copy and serialise them)."""

TOO_DEEP = (
    f"its values are nested more than {MAX_INPUT_DEPTH} levels deep\n"
    "  hint: inputs are task values: objects and arrays a few levels deep"
)


def _read_inputs(
    path: Path | None, structure: RunStructure, task_name: str, *, unwrap: bool = False
) -> dict[object, object]:
    """The inputs by task; with ``task_name``, the file holds that task's values.

    With ``unwrap``, a file keyed by the task's class name or tag gives that entry.
    """
    if task_name and task_tag(task_name) not in structure.tasks:
        found = ", ".join(cls.__name__ for cls in structure.tasks.values()) or "none"
        raise LangTreeError(f"No task {task_name!r} found; the tasks are {found}")
    if path is None:
        return {}
    values = _json_object(path, _inputs_hint(structure, task_name))
    if not task_name:
        return values
    tag = task_tag(task_name)
    if unwrap:
        for key in (task_name, tag):
            if key in values:
                return {tag: values[key]}
    return {tag: values}


def _inputs_hint(structure: RunStructure, task_name: str) -> str:
    if task_name:
        return f'write {task_name}\'s own values, e.g. {{"field": "value"}}'
    names = [cls.__name__ for cls in structure.tasks.values()] or ["TaskName"]
    return f'write the values by task, e.g. {{"{names[0]}": {{"field": "value"}}}}'


def _json_object(path: Path, hint: str) -> dict[object, object]:
    """The JSON object ``path`` holds (UTF-8, with or without a byte order mark).

    Raises:
        LangTreeError: The file cannot be read, is not UTF-8 JSON, nests values more than
            ``MAX_INPUT_DEPTH`` levels deep, or holds something other than an object.
    """
    cannot = f"Cannot read inputs from {str(path)!r}"
    try:
        values = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, json.JSONDecodeError) as error:
        raise LangTreeError(f"{cannot}: {error}") from None
    except UnicodeDecodeError as error:
        raise LangTreeError(
            f"{cannot}: it is not UTF-8 text (byte {error.object[error.start]:#04x} at "
            f"position {error.start})\n  hint: save the file as UTF-8"
        ) from None
    except RecursionError:
        raise LangTreeError(f"{cannot}: {TOO_DEEP}") from None
    if _deeper_than(values, MAX_INPUT_DEPTH):
        raise LangTreeError(f"{cannot}: {TOO_DEEP}")
    if not isinstance(values, dict):
        raise LangTreeError(
            f"Inputs in {str(path)!r} must be a JSON object, not {_json_kind(values)}\n"
            f"  hint: {hint}"
        )
    return values


def _deeper_than(value: object, levels: int) -> bool:
    """Whether ``value`` nests objects and arrays more than ``levels`` deep (no recursion)."""
    pending = [(value, 1)]
    while pending:
        item, level = pending.pop()
        children = list(item.values()) if isinstance(item, dict) else item
        if isinstance(children, list):
            if level > levels:
                return True
            pending.extend((child, level + 1) for child in children)
    return False


def _json_kind(value: object) -> str:
    kinds = {list: "an array", str: "a string", bool: "true or false", int: "a number"}
    return kinds.get(type(value), "a number" if isinstance(value, float) else "null")


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
