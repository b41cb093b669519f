"""How a run fails: a step that failed, a limit reached, an interruption.

Each carries what the run had done when it stopped (`RunResult`, as ``.result``,
attached when the error leaves the run), so no failure loses the work already paid for:

```text
ExecutionError
 ├── StepFailedError     a step instance got no usable output (any kind of failure)
 ├── RunLimitError       the run reached its deadline or a usage limit
 └── JournalWriteError   the journal or cache cannot record an answer (durable.journal)
KeyboardInterrupt
 └── RunInterrupted      Ctrl-C stopped a synchronous run
```

`langtree.errors` draws the whole tree.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal

from langtree.errors import ExecutionError, rebuilt_error
from langtree.prompts import TEXT_INSTEAD_OF_TOOL_CALL
from langtree.runtime.faults._faults import FailureKind
from langtree.runtime.observe._result import TraceRecord
from langtree.runtime.observe._usage import UsageFigure

if TYPE_CHECKING:
    from langtree.runtime.observe._provenance import ProvenanceRecord
    from langtree.runtime.observe._result import RunResult

__all__ = ["Diagnosis", "RunInterrupted", "RunLimitError", "StepFailedError", "deadline_keeper"]

Limit = UsageFigure | Literal["deadline"]

Diagnosis = FailureKind | Literal["truncated", "prose"]
"""What a failed step's hint is about: its kind, or, for invalid output, the model's
answer cut off at its output limit (``"truncated"``) or given as text instead of a tool
call (``"prose"``)."""

_HINTS: Mapping[Diagnosis, str] = {
    "invalid_output": "the raw outputs are in error.attempts; check the model's support for "
    "structured output (or choose another method with ModelConfig(model, method=...)), or "
    "pass max_retries=... to run()",
    "truncated": "the model stopped at its output limit; raise the model's max_tokens, or "
    "split the step's fields (@sequential)",
    "prose": "the model answered in text instead of calling the tool: servers that ignore "
    "tool_choice (llama.cpp, Ollama) need ModelConfig(model, method='json_schema')",
    "transient": "the provider kept failing (timeouts, rate limits, server errors); raise "
    "retry=RetryPolicy(max_retries=...) or call_timeout, or lower max_concurrency",
    "permanent": "retrying cannot fix this (credentials, model name, request settings); the "
    "exception is error.__cause__",
}


class StepFailedError(ExecutionError):
    """A step instance got no usable output (DESIGN D11).

    Attributes:
        step_id: The plan step (``<node tag>:<fields>``).
        node_path: The node instance, with its list indices.
        fields: The fields the step generates.
        sample: Which sample of a resampled step failed (``None``: the step does not
            resample, or no sample gave valid output).
        kind: Why: ``"invalid_output"`` (every answer was invalid or cut off),
            ``"transient"`` (the provider kept failing) or ``"permanent"`` (an error that
            retrying cannot fix).
        attempts: The record of every attempt, each with its raw output and error.
        diagnosis: What the hint is about (the kind, or ``"truncated"``, ``"prose"``).
        problem: The message without its hint: the step, where, and the last error.
        result: What the run had done when it stopped (``None`` while the error is only
            listed in ``RunResult.errors``).
    """

    def __init__(
        self,
        *,
        step_id: str,
        node_path: str,
        fields: tuple[str, ...],
        kind: FailureKind,
        attempts: tuple[TraceRecord, ...],
        sample: int | None = None,
        samples: int = 1,
    ) -> None:
        self.step_id = step_id
        self.node_path = node_path
        self.fields = fields
        self.kind = kind
        self.attempts = attempts
        self.sample = sample
        self.samples = samples
        self.result: RunResult | None = None
        self.diagnosis = self._diagnosis()
        self.problem = self._problem()
        super().__init__(f"{self.problem}\n  hint: {_HINTS[self.diagnosis]}")

    @property
    def task(self) -> str:
        """The root task's tag, e.g. ``task.report``."""
        return ".".join(self.node_path.split(".")[:2]).split("[")[0]

    @property
    def partial(self) -> Mapping[str, object]:
        """Each root task's values as JSON data when the run stopped, by tag (see
        `RunResult.partial()`)."""
        return self.result.partials if self.result is not None else {}

    @property
    def trace(self) -> tuple[TraceRecord, ...]:
        """Every model call of the run until it stopped."""
        return self.result.trace if self.result is not None else self.attempts

    @property
    def provenance(self) -> tuple[ProvenanceRecord, ...]:
        """Every write of the run until it stopped."""
        return self.result.provenance_records if self.result is not None else ()

    def _problem(self) -> str:
        last = self.attempts[-1] if self.attempts else None
        where = repr(self.node_path)
        if self.sample is not None and self.samples > 1:
            where += f" (sample {self.sample} of {self.samples})"
        count = f"{len(self.attempts)} attempt(s)"
        if self.kind == "invalid_output":
            head = f"gave no valid output for {where} in {count}; the last error:"
        elif self.kind == "transient":
            head = f"could not get an answer for {where}: {count} failed; the last error:"
        else:
            head = f"failed for {where} with an error that retrying cannot fix:"
        return f"Step {self.step_id!r} {head}\n{last.error if last else None}"

    def _diagnosis(self) -> Diagnosis:
        last = self.attempts[-1] if self.attempts else None
        # The last attempt decides: the hint is about what ended the step, not what an
        # earlier retry ran into.
        if last is not None and last.truncated:
            return "truncated"
        if last is not None and TEXT_INSTEAD_OF_TOOL_CALL in (last.error or ""):
            return "prose"
        return self.kind

    def __reduce__(self) -> tuple[object, ...]:
        # Pickled whole (Ray's workers send errors between processes): the keyword-only
        # ``__init__`` cannot be called again with the message alone.
        return (rebuilt_error, (type(self), self.args, self.__dict__))


class RunLimitError(ExecutionError):
    """The run reached its deadline or one of its usage limits; no call started after.

    Attributes:
        limit: Which: ``"deadline"``, ``"calls"``, ``"input_tokens"``,
            ``"output_tokens"`` or ``"total_tokens"``.
        allowed: The limit (seconds for the deadline).
        used: What the run had used when it stopped.
        reached: The message without its hint: which limit, and where the run stopped.
        result: What the run had done when it stopped.
    """

    def __init__(self, *, limit: Limit, allowed: float, used: float, where: str = "") -> None:
        self.limit = limit
        self.allowed = allowed
        self.used = used
        self.result: RunResult | None = None
        if limit == "deadline":
            self.reached = f"The run reached its deadline of {allowed:g} s"
            hint = "pass a larger deadline=..., or lower the work per run"
        else:
            self.reached = (
                f"The run reached its limit of {allowed:,} {limit.replace('_', ' ')} "
                f"({used:,} used){where}"
            )
            hint = f"raise usage_limits=UsageLimits({limit}=...)"
        super().__init__(f"{self.reached}\n  hint: {hint}; error.result holds what had finished")

    @property
    def setting(self) -> str:
        """The run setting that sets the limit: ``"deadline"`` or
        ``"usage_limits.<figure>"`` (``"usage_limits.calls"``)."""
        return "deadline" if self.limit == "deadline" else f"usage_limits.{self.limit}"

    def __reduce__(self) -> tuple[object, ...]:
        return (rebuilt_error, (type(self), self.args, self.__dict__))


def deadline_keeper(
    allowed: float, *, started: float, clock: Callable[[], float] = time.monotonic
) -> Callable[[], None]:
    """A check that raises once the run's deadline has passed: for the work the event
    loop cannot interrupt, such as reading an asset's file, which calls it between
    chunks (``asyncio.timeout`` only stops a run at an ``await``).

    Args:
        allowed: The deadline, in seconds.
        started: When the run started, on ``clock``.
        clock: Seconds on a monotonic clock (tests pass a fake one).
    """

    def keep_time() -> None:
        used = clock() - started
        if used >= allowed:
            raise RunLimitError(limit="deadline", allowed=allowed, used=used)

    return keep_time


# A ``KeyboardInterrupt``: code that stops on Ctrl-C (a script's ``except
# KeyboardInterrupt``, Jupyter) still does, and ``except Exception`` does not swallow
# it.
class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a synchronous run: no call started after it, calls in flight were
    cancelled.

    Attributes:
        result: What the run had done when it stopped.
        problem: The message without where it says the result is: how many calls the
            run had made, and how many of them got a usable answer.
    """

    def __init__(self, result: RunResult) -> None:
        self.result = result
        finished = sum(1 for record in result.trace if record.error is None)
        self.problem = (
            f"The run was interrupted after {len(result.trace)} model call(s), {finished} "
            "of them with a usable answer"
        )
        super().__init__(f"{self.problem}; error.result holds what had finished")

    def __reduce__(self) -> tuple[object, ...]:
        return (rebuilt_error, (type(self), self.args, self.__dict__))
