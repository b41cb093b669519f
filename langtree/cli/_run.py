"""``langtree run``: the tree on a provider's models, with progress and a summary."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from langtree import RunStructure
from langtree.cli._config import add_config_option, read_config
from langtree.cli._flags import add_run_flags, run_options
from langtree.cli._hints import error_text
from langtree.cli._inputs import (
    add_variables_option,
    read_inputs,
    require_inputs,
    variables_from,
    warn_unused_variables,
)
from langtree.cli._models import model_keys, named_provider, provider_for
from langtree.cli._output import emit
from langtree.cli._rows import RowsRun, is_rows_file, run_rows, task_output
from langtree.cli._terminal import colours, painted
from langtree.cli._trees import add_task_command, valid_structure
from langtree.errors import ExecutionError, LangTreeError
from langtree.runtime import (
    JournalWriteError,
    LiveLine,
    LLMProvider,
    RunInterrupted,
    RunProgress,
    RunResult,
    TraceRecord,
    run_tokens,
)
from langtree.structure import ConfigInput, task_tag


def add_run_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = add_task_command(
        commands,
        "run",
        run_tree,
        summary="run the tree and print the filled tasks as JSON",
        purpose="run",
    )
    command.add_argument(
        "--input",
        type=Path,
        metavar="FILE.json",
        help="input values as JSON: by task class name or tag, or (with :TaskName) the "
        "task's own values; a .jsonl file is a dataset, one row of values per line",
    )
    command.add_argument(
        "--output",
        type=Path,
        metavar="FILE.jsonl",
        help="with a .jsonl input: append one result per row to this file (default: "
        "standard output); running again skips the rows it holds, resuming the dataset",
    )
    command.add_argument(
        "--as-completed",
        action="store_true",
        help="with a .jsonl input: write each row's result as soon as it finishes, not in "
        "input order",
    )
    command.add_argument(
        "--model",
        metavar="NAME",
        help="'fake' (offline test model), provider:model built by LangChain's "
        "init_chat_model (e.g. openai:gpt-4o-mini; needs the langchain package), or "
        "module:attribute naming an LLMProvider, a chat model or a function returning one "
        "(default: the embedded local model)",
    )
    add_variables_option(command)
    command.add_argument(
        "--dry-run",
        action="store_true",
        help="print what the run would cost (calls and input tokens, per step and per "
        "model) and exit, building no model",
    )
    add_config_option(command, run=True)
    add_run_flags(command)


def run_tree(arguments: argparse.Namespace) -> int:
    target, _, task_name = arguments.target.partition(":")
    config = read_config(arguments.config)
    rows = is_rows_file(arguments.input)
    _check_dataset_flags(arguments, rows=rows)
    options = run_options(arguments, RunStructure(config).settings)
    variables = variables_from(arguments.var)
    checked = valid_structure([target], config)
    if checked is None:
        return 1
    inputs = {} if rows else read_inputs(arguments.input, checked, task_name, unwrap=True)
    if not rows:
        require_inputs(checked, inputs, task_name, arguments.input)
    warn_unused_variables(_running(checked, task_name, config), variables)
    keys = model_keys(checked, inputs)
    if arguments.dry_run:
        # The costs go under the keys of the provider that --model names, as the run's
        # usage would; the dry run builds none of its models.
        unbuilt = named_provider(arguments.model, keys, arguments.method)
        return _dry_run(_running(checked, task_name, config, unbuilt), inputs, variables, rows=rows)
    provider = provider_for(arguments.model, keys, arguments.method)
    structure = _running(checked, task_name, config, provider)
    if rows:
        assert arguments.input is not None
        source = RowsRun(
            source=arguments.input,
            output=arguments.output,
            task_name=task_name,
            variables=variables,
            options=options,
            ordered=not arguments.as_completed,
        )
        return run_rows(structure, source)
    line = LiveLine() if sys.stderr.isatty() else None
    progress = _progress(structure.prompts(inputs, variables).cost.calls, line)
    started = time.perf_counter()
    runnable = structure.build(variables, **options)
    try:
        result = runnable.invoke(inputs, config={"callbacks": [progress]})
    except (ExecutionError, RunInterrupted) as error:
        if not isinstance(error.result, RunResult):
            raise  # raised before the run started: nothing had finished
        _finish(error.result.trace, progress.total, line)
        return _stopped(error.result, error, structure, task_name, started)
    _finish(result.trace, len(result.trace), line)
    # A run that went on after failures (on_error: "continue") failed all the same when
    # a task of it does not validate.
    failure = result.failure()
    if failure is not None:
        return _stopped(result, failure, structure, task_name, started)
    emit(_json(task_output(result, structure.tasks, task_name)))
    print(_summary(result.trace, time.perf_counter() - started), file=sys.stderr)
    return 0


def _stopped(
    result: RunResult,
    error: BaseException,
    structure: RunStructure,
    task_name: str,
    started: float,
) -> int:
    """Print what a run that failed or stopped had finished, say why and which tasks are
    partial; the exit status: 130 after Ctrl-C, 2 for a journal that cannot record an
    answer (the environment's fault), else 1."""
    emit(_json(task_output(result, structure.tasks, task_name)))
    print(f"langtree: error: {error_text(error)}", file=sys.stderr)
    if result.invalid:
        partial = ", ".join(structure.tasks[tag].__name__ for tag in result.invalid)
        print(
            f"langtree: printed what had finished; partial, as they do not validate: {partial}",
            file=sys.stderr,
        )
    print(_summary(result.trace, time.perf_counter() - started), file=sys.stderr)
    if isinstance(error, RunInterrupted):
        return 130
    return 2 if isinstance(error, JournalWriteError) else 1


def _check_dataset_flags(arguments: argparse.Namespace, *, rows: bool) -> None:
    """Refuse the flags of a dataset run in a run of one set of inputs.

    Raises:
        LangTreeError: Naming the flag, and what it is for.
    """
    if rows:
        return
    if arguments.output is not None:
        raise LangTreeError(
            "--output is for a dataset run: --input FILE.jsonl, one row per line\n"
            "  hint: without a .jsonl input, the filled tasks are printed; redirect them "
            "with > FILE.json"
        )
    if arguments.as_completed:
        raise LangTreeError(
            "--as-completed is for a dataset run: --input FILE.jsonl, one row per line\n"
            "  hint: without a .jsonl input, the filled tasks are printed once the run "
            "finishes; leave --as-completed out"
        )


def _running(
    checked: RunStructure,
    task_name: str,
    config: ConfigInput,
    provider: LLMProvider | None = None,
) -> RunStructure:
    """The tasks that run (all, or the one ``task_name`` names) on ``provider``, with the
    settings ``config`` (those of ``checked``: its run settings too)."""
    structure = RunStructure(config, provider=provider)
    for tag, cls in checked.tasks.items():
        if not task_name or tag == task_tag(task_name):
            structure.add(cls)
    return structure


def _dry_run(
    structure: RunStructure,
    inputs: dict[object, object],
    variables: dict[str, object],
    *,
    rows: bool,
) -> int:
    """Print what the run would cost, as ``RunStructure.prompts()`` totals it."""
    if rows:
        raise LangTreeError(
            "--dry-run estimates one run, not a dataset\n"
            "  hint: pass one row's values as a .json file, or see `langtree prompts`"
        )
    emit(structure.prompts(inputs, variables).cost_markdown())
    return 0


def _progress(calls: int, line: LiveLine | None) -> RunProgress:
    """Counts the run's calls (``calls`` expected) and, on a terminal, shows them on
    ``line`` as they change."""
    if line is None:
        return RunProgress(calls)

    def show(done: int, total: int, failed: int) -> None:
        # A failed call is asked again (a retry): one more call to come.
        text = _progress_line(
            done,
            max(total + failed, done),
            failed,
            replayed=progress.replayed,
            waiting=progress.waiting,
        )
        line.draw(sys.stderr, text, end="\r")

    progress = RunProgress(calls, on_change=show)
    return progress


def _finish(trace: Sequence[TraceRecord], total: int, line: LiveLine | None) -> None:
    """The final progress line, counted from the trace (over the live line, when there is
    one); a finished run's total is the calls it made."""
    failed = sum(record.error is not None for record in trace)
    replayed = sum(record.replayed for record in trace)
    if line is None:
        _show(len(trace), max(total, len(trace)), failed, replayed=replayed)
        return
    text = _progress_line(len(trace), max(total, len(trace)), failed, replayed=replayed)
    line.draw(sys.stderr, text, end="\n")


def _show(done: int, total: int, failed: int, end: str = "\n", *, replayed: int = 0) -> None:
    """The progress line, printed."""
    print(_progress_line(done, total, failed, replayed=replayed), end=end, file=sys.stderr)
    sys.stderr.flush()


def _progress_line(
    done: int, total: int, failed: int, *, replayed: int = 0, waiting: float | None = None
) -> str:
    """The progress line: answers replayed from the journal or cache are counted apart,
    and the longest wait for a provider in progress (its ``Retry-After``) is shown."""
    on = colours(sys.stderr)
    replays = f" ({replayed} replayed without a model call)" if replayed else ""
    calls = painted(f"{done}/{total} calls done", "green" if done == total else "yellow", on=on)
    failures = painted(f"{failed} failed", "red" if failed else "dim", on=on)
    shown = painted(replays, "dim", on=on) if replays else ""
    text = f"langtree: {calls}{shown}, {failures}"
    if waiting is not None:
        text += painted(f", waiting {waiting:g} s for the provider", "yellow", on=on)
    return text


def _json(output: object) -> str:
    return json.dumps(output, indent=2, ensure_ascii=False)


def _summary(trace: Sequence[TraceRecord], seconds: float) -> str:
    """One line: calls, tokens (as far as a provider received or reported them, see
    `run_tokens()`) and wall time."""
    made = sum(not record.replayed for record in trace)
    return f"langtree: {made} call(s), {run_tokens(trace)} tokens, {seconds:.2f}s wall time"
