"""What a run's page is made from: a saved result (`RunResult.to_dict()`, as
``to_json()`` writes it) or the answers of a journal, checked as outside data.

A `RunResult` cannot be read back from its JSON (its tasks are the user's classes, its
trace holds LangChain messages), and it need not be: the page shows data, so it is made
from the saved data alone. ``RunResult.to_html()`` goes through the same data as a file
that ``to_json()`` wrote, so both give the same page.

A journal holds less than a result (see `langtree.runtime.page._journal_run`):
`SavedRun.origin` says which of the two the data came from.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from langtree.errors import LangTreeError
from langtree.runtime.faults._faults import got_answer
from langtree.runtime.observe._usage import Usage

__all__ = [
    "RUN_HINT",
    "SavedCall",
    "SavedError",
    "SavedMessage",
    "SavedPlan",
    "SavedPlanStep",
    "SavedRun",
    "SavedSkip",
    "SavedTransform",
    "SavedWrite",
    "saved_run",
]

RUN_HINT = "give the JSON that RunResult.to_json() wrote, or a journal file"
"""How to fix a file that is not a run, for every message that refuses one."""


class _Saved(BaseModel):
    # Keys a later version adds are left out rather than refused: an older LangTree can
    # still show a newer result.
    model_config = ConfigDict(frozen=True, extra="ignore")


class SavedMessage(_Saved):
    """One message of a call's prompt."""

    role: str
    content: str


class SavedCall(_Saved):
    """One model call (a `TraceRecord`'s data, or a journal's answer).

    Attributes:
        call: The journal's key of the call (``None`` in a saved result, where a step
            instance's calls are told apart by step, node and sample).
    """

    step_id: str
    node_path: str
    fields: tuple[str, ...]
    model: str
    attempt: int
    sample: int = 1
    messages: tuple[SavedMessage, ...] = ()
    token_count: int | None = None
    usage: dict[str, object] | None = None
    latency: float
    raw_output: str
    error: str | None = None
    failure: str | None = None
    truncated: bool = False
    answered_by: str | None = None
    finish_reason: str | None = None
    waited: float = 0.0
    replayed: bool = False
    note: str | None = None
    call: str | None = None

    @property
    def answered(self) -> bool:
        """Whether the model answered the call (`TraceRecord.answered`): only then does
        its prompt count for tokens the provider did not report."""
        return got_answer(self.failure)


class SavedTransform(_Saved):
    """One transform computed (a `TransformRecord`'s data)."""

    step_id: str
    node_path: str
    field: str
    expression: str
    value: object
    latency: float


class SavedWrite(_Saved):
    """One write of a value (a `ProvenanceRecord`'s data)."""

    kind: str
    path: str
    value: object
    at: str
    step_id: str | None = None
    model: str | None = None
    prompt_sha256: str | None = None
    attempt: int | None = None
    sample: int | None = None
    replayed: bool | None = None
    command: str | None = None
    source: str | None = None
    location: str | None = None
    expression: str | None = None


class SavedError(_Saved):
    """A step instance that failed after its retries."""

    step_id: str
    node_path: str
    message: str


class SavedSkip(_Saved):
    """A step instance not run because one it depends on failed."""

    step_id: str
    node_path: str
    because: str


class SavedPlanStep(_Saved):
    """One step of the plan (`ExecutionPlan.to_dict()`)."""

    id: str
    element_path: str
    fields: tuple[str, ...]
    model: str | None = None
    resample: int = 1
    transform: str | None = None
    depends_on: tuple[str, ...] = ()


class SavedPlan(_Saved):
    """The plan a run followed."""

    steps: tuple[SavedPlanStep, ...]


class SavedRun(_Saved):
    """Everything a run's page shows.

    Attributes:
        origin: ``"result"``: a saved `RunResult`; ``"journal"``: a journal's answers
            (no prompts, plan, values or provenance).
        plan: ``None`` in a journal, and in a result saved by a LangTree that did not
            save the plan.
    """

    origin: Literal["result", "journal"] = "result"
    tasks: dict[str, object]
    trace: tuple[SavedCall, ...]
    provenance: tuple[SavedWrite, ...] = ()
    # A run's totals, as `RunUsage.to_json_dict()` writes them; the counts of each model
    # (``by_model``) are left out, as the page does not show them.
    usage: Usage = Usage()
    plan: SavedPlan | None = None
    transforms: tuple[SavedTransform, ...] = ()
    errors: tuple[SavedError, ...] = ()
    skipped: tuple[SavedSkip, ...] = ()
    partial: dict[str, object] = {}
    invalid: dict[str, str] = {}


def saved_run(data: object, source: str) -> SavedRun:
    """``data`` (a result's `to_dict()`) checked as the data of a run's page.

    Args:
        data: The JSON data.
        source: What the data was read from, for the message.

    Raises:
        LangTreeError: ``data`` is not a saved result; the message lists each problem
            with where it is.
    """
    try:
        return SavedRun.model_validate(data)
    except ValidationError as error:
        problems = "\n".join(
            f"  - {'.'.join(str(part) for part in detail['loc']) or '(the whole file)'}: "
            f"{detail['msg']}"
            for detail in error.errors(include_url=False)
        )
        raise LangTreeError(
            f"{source!r} is not a saved LangTree result:\n{problems}\n  hint: {RUN_HINT}"
        ) from None
