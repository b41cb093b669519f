"""``StepFailedError``: a step whose output stayed invalid after every retry."""

from __future__ import annotations

from collections.abc import Mapping

from langtree.errors import ExecutionError
from langtree.runtime.result import TraceRecord

__all__ = ["StepFailedError"]


class StepFailedError(ExecutionError):
    """A step instance gave no valid output in any of its attempts (DESIGN D11).

    Attributes:
        step_id: The plan step.
        node_path: The node instance.
        attempts: The record of every attempt, each with its raw output and error.
        partial: What each root task held when the run stopped, as plain data by tag
            (supplied values, and everything generated and mapped so far).
        trace: Every model call of the run so far.
    """

    def __init__(
        self,
        *,
        step_id: str,
        node_path: str,
        attempts: tuple[TraceRecord, ...],
        partial: Mapping[str, object],
        trace: tuple[TraceRecord, ...],
    ) -> None:
        self.step_id = step_id
        self.node_path = node_path
        self.attempts = attempts
        self.partial = partial
        self.trace = trace
        last = attempts[-1].error if attempts else None
        super().__init__(
            f"Step {step_id!r} gave no valid output for {node_path!r} in "
            f"{len(attempts)} attempt(s); the last error:\n{last}\n"
            "  hint: the raw outputs are in error.attempts; check the model's support for "
            "structured output, or pass max_retries=... to run()"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (self.args, self.__dict__))


def _rebuild(args: tuple[object, ...], state: dict[str, object]) -> StepFailedError:
    error = StepFailedError.__new__(StepFailedError)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error
