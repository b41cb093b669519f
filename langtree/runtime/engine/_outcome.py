"""A run's `RunResult`, when it finishes and when it stops early.

A run that stops early (a failed step, a limit, Ctrl-C) still returns all it had done:
the tasks whose values validate, the others as JSON data with why they do not validate,
every trace record and every write.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from langtree.errors import ExecutionError
from langtree.prompts import MissingValue, RunState
from langtree.runtime.durable._cache import CacheReport
from langtree.runtime.durable._journal import JournalReport
from langtree.runtime.engine._json_view import roots_view
from langtree.runtime.faults._failure import StepFailedError
from langtree.runtime.observe._provenance import ProvenanceRecord
from langtree.runtime.observe._result import (
    RunResult,
    SkippedInstance,
    TraceRecord,
    TransformRecord,
)
from langtree.runtime.observe._usage import RunUsage
from langtree.structure import ExecutionPlan, TreeNode, display_name

__all__ = ["run_result"]


def run_result(
    *,
    tasks: Mapping[str, type[TreeNode]],
    state: RunState,
    trace: tuple[TraceRecord, ...],
    provenance: tuple[ProvenanceRecord, ...],
    transforms: tuple[TransformRecord, ...] = (),
    errors: tuple[StepFailedError, ...],
    skipped: tuple[SkippedInstance, ...],
    resampled_values: Mapping[tuple[str, str], float],
    stopped: bool,
    journal: JournalReport | None = None,
    cache: CacheReport | None = None,
    plan: ExecutionPlan | None = None,
) -> RunResult:
    """The result of a run.

    Args:
        tasks: The root task classes by tag.
        state: The values the run holds.
        trace: Every call.
        transforms: Every transform computed.
        provenance: Every write.
        errors: The step instances that failed (``on_error="continue"``).
        skipped: The instances skipped because of them.
        resampled_values: The numbers behind numerically aggregated fields.
        stopped: Whether the run ended before every step had run.
        journal: How the run used its journal, when it had one.
        cache: How the run used its response cache, when it had one.
        plan: The plan the run followed.

    Raises:
        ExecutionError: The run finished, no step failed, and a task does not validate
            (e.g. a validator of the class); the first such task's error, which carries
            the result (``error.result``, where ``invalid`` says why each task does not
            validate).
    """
    validated: dict[str, TreeNode] = {}
    invalid: dict[str, str] = {}
    failures: list[ExecutionError] = []
    for tag, task_class in tasks.items():
        try:
            validated[tag] = task_class.model_validate(state.roots[tag])
        except ValidationError as error:
            details = _details(error, [m for m in state.missing if m.task == tag])
            # After failures or an early stop, invalid values are expected: they are reported
            # in ``invalid``, not raised, so that the caller still gets the partial result.
            if errors or stopped:
                invalid[tag] = _why_invalid(task_class, details, errors, skipped, stopped=stopped)
                continue
            failure = ExecutionError(
                f"The values of {display_name(task_class)!r} do not validate after the "
                f"run:\n{details}\n"
                "  hint: check the class's validators against what the steps generate"
            )
            failure.__cause__ = error
            failures.append(failure)
            invalid[tag] = str(failure)
    result = RunResult(
        tasks=validated,
        trace=trace,
        transforms=transforms,
        resampled_values=dict(resampled_values),
        provenance_records=provenance,
        errors=errors,
        skipped=skipped,
        partials=roots_view(state.roots, resampled_values),
        invalid=invalid,
        usage=RunUsage.of_trace(trace),
        journal=journal,
        cache=cache,
        plan=plan,
    )
    # Raised only once every task is validated, so that the result the error carries says
    # why each task does not validate.
    if failures:
        failures[0].result = result
        raise failures[0]
    return result


def _why_invalid(
    task_class: type[TreeNode],
    details: str,
    errors: tuple[StepFailedError, ...],
    skipped: tuple[SkippedInstance, ...],
    *,
    stopped: bool,
) -> str:
    name = display_name(task_class)
    because = (
        "the run stopped before it finished"
        if stopped
        else f"{len(errors)} step instance(s) failed and {len(skipped)} were skipped"
    )
    return (
        f"The values of {name!r} do not validate: {because}:\n{details}\n"
        "  hint: see result.errors and result.skipped; "
        f"result.partial({name!r}) gives the values as plain data"
    )


def _details(error: ValidationError, missing: list[MissingValue]) -> str:
    """What does not validate, one line each, then the missing values that explain it
    (a mapping's source never produced, in a run that continued after failures)."""
    lines = [
        f"  - {'.'.join(str(part) for part in detail['loc'])}: {detail['msg']}"
        for detail in error.errors(include_url=False)
    ]
    lines += [f"  - {value.message}\n    hint: {value.hint}" for value in missing]
    return "\n".join(lines)
