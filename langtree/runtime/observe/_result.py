"""What a run returns: the filled root tasks, one trace record per model call, what
wrote each value (DESIGN D14), and, with ``on_error="continue"``, what failed."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, overload

from langchain_core.messages import BaseMessage
from pydantic_core import to_jsonable_python

from langtree.errors import ExecutionError
from langtree.prompts import PromptTokens, copied
from langtree.runtime.durable._cache import CacheReport
from langtree.runtime.durable._journal import JournalReport
from langtree.runtime.engine._json_view import add_resampled_values
from langtree.runtime.faults._faults import FailureKind, got_answer
from langtree.runtime.observe._provenance import ProvenanceRecord, UnknownPathError
from langtree.runtime.observe._result_display import result_markdown
from langtree.runtime.observe._usage import RunUsage, run_tokens
from langtree.runtime.page._files import write_page
from langtree.runtime.page._render import page_html
from langtree.runtime.page._saved import SavedRun, saved_run
from langtree.structure import ExecutionPlan, TreeNode, task_tag

if TYPE_CHECKING:
    from langtree.runtime.faults._failure import StepFailedError

__all__ = ["RunResult", "SkippedInstance", "TraceRecord", "TransformRecord"]

_Task = TypeVar("_Task", bound=TreeNode)


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceRecord:
    """One model call (one attempt of one step instance).

    Attributes:
        step_id: The plan step (``<node tag>:<fields>``).
        node_path: The node instance, e.g. ``task.report.sections[0]``.
        fields: The fields the call generates.
        model: The provider's key of the model called.
        attempt: 1 for the first call of the instance, 2 for the first retry, ...
        sample: Which of a resampled step's samples the call belongs to (1 to n; 1 when
            the step does not resample).
        messages: The messages sent (a retry adds one human message with the feedback),
            each asset's block without its bytes: ``extras["asset"]`` names it by its
            placeholder (``[image 1: Front]``; see ``without_asset_bytes``).
        prompt_tokens: The tokens of the step's prompt, as the prompt stage counts them
            (`token_count`), counted when first read.
        usage: The provider's ``usage_metadata`` of the reply, when it reports one.
        latency: Seconds the call took.
        raw_output: The reply as the model gave it: the structured-output tool call's
            arguments as JSON, else the reply's text (empty when the call raised).
        error: Why the output was not accepted (``None``: accepted): the validation
            problems, one per line, or the exception the call raised.
        failure: What kind of failure ``error`` is: ``"invalid_output"``,
            ``"transient"`` or ``"permanent"`` (``None``: accepted).
        truncated: Whether the provider said the answer stopped at its output limit.
        answered_by: The model name the provider reported (``response_metadata``), which
            tells which model of a ``with_fallbacks`` chain answered.
        finish_reason: Why the provider said the model stopped (``"stop"``,
            ``"tool_calls"``, ``"length"``...; ``None``: it did not say, or the call
            raised).
        waited: Seconds waited before the call: a retry's backoff or ``Retry-After``,
            or a rate-limit cooldown of the model.
        replayed: Whether the answer came from the run's journal or response cache
            instead of a model call (nothing was paid for it in this run).
        note: What the run does about the failure besides its kind (``None``: nothing
            more to say): the wait for the provider before the retry, when its
            ``Retry-After`` asked for one, e.g. "waiting 300 s for the provider before the
            retry: it asked for 100000 s (Retry-After), more than RetryPolicy.max_wait".
    """

    step_id: str
    node_path: str
    fields: tuple[str, ...]
    model: str
    attempt: int
    sample: int = 1
    messages: tuple[BaseMessage, ...]
    prompt_tokens: PromptTokens
    usage: Mapping[str, object] | None
    latency: float
    raw_output: str
    error: str | None
    failure: FailureKind | None = None
    truncated: bool = False
    answered_by: str | None = None
    finish_reason: str | None = None
    waited: float = 0.0
    replayed: bool = False
    note: str | None = None

    @property
    def answered(self) -> bool:
        """Whether the model answered the call (`got_answer()`): a call that got no answer
        counts only the tokens its error reported (see `run_tokens()`)."""
        return got_answer(self.failure)

    @property
    def token_count(self) -> int:
        """Tokens of the step's prompt, as the prompt stage counts them (counted when
        first read: a run that does not need them leaves them uncounted)."""
        return self.prompt_tokens.count

    def to_dict(self) -> dict[str, object]:
        """The record as JSON-ready data (messages as ``{"role", "content"}``)."""
        return {
            "step_id": self.step_id,
            "node_path": self.node_path,
            "fields": list(self.fields),
            "model": self.model,
            "attempt": self.attempt,
            "sample": self.sample,
            "messages": [
                {"role": message.type, "content": message.text} for message in self.messages
            ],
            "token_count": self.token_count,
            "usage": to_jsonable_python(self.usage),
            "latency": self.latency,
            "raw_output": self.raw_output,
            "error": self.error,
            "failure": self.failure,
            "truncated": self.truncated,
            "answered_by": self.answered_by,
            "finish_reason": self.finish_reason,
            "waited": self.waited,
            "replayed": self.replayed,
            "note": self.note,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class TransformRecord:
    """One transform computed for one node instance (no model call).

    Attributes:
        step_id: The plan step (``<node tag>:<field>``).
        node_path: The node instance, e.g. ``task.report.sections[0]``.
        field: The field computed.
        expression: The transform's Jinja2 expression.
        value: The value written, as plain data.
        latency: Seconds the evaluation took.
    """

    step_id: str
    node_path: str
    field: str
    expression: str
    value: object
    latency: float

    def to_dict(self) -> dict[str, object]:
        """The record as JSON-ready data."""
        return {
            "step_id": self.step_id,
            "node_path": self.node_path,
            "field": self.field,
            "expression": self.expression,
            "value": to_jsonable_python(self.value),
            "latency": self.latency,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SkippedInstance:
    """A step instance not run because an instance it depends on failed or was skipped
    (``on_error="continue"``).

    Attributes:
        step_id: The plan step.
        node_path: The node instance.
        because: The step id and node path of the failed (or skipped) instance it
            depended on, e.g. ``task.report.sections:summary at task.report.sections[1]``.
    """

    step_id: str
    node_path: str
    because: str

    def to_dict(self) -> dict[str, object]:
        """The record as JSON-ready data."""
        return {"step_id": self.step_id, "node_path": self.node_path, "because": self.because}


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    """The filled root tasks of a run, validated against the user's classes.

    ``result[TaskClass]`` (or ``result["task.name"]``) gives the instance.

    The raw number behind a numerical ``@resampled[f]->fn`` aggregation (DESIGN D12) is
    not part of the user's class, so the instance holds only the enum member it maps to;
    the number is in `resampled_values`, and `dump()` and `to_json()` add it
    next to the field as ``f_resampled_value``.

    With ``RunStructure({"on_error": "continue"})`` a run whose steps fail still returns:
    `errors` lists the failures, `skipped` the instances not run because of
    them, and ``result[Task]`` raises `ExecutionError` for a task
    whose values do not validate (`failure()` names every such task); `partial()` gives
    any task's values as JSON data.

    Attributes:
        tasks: Each root task's instance, by tag (the tasks that validated).
        trace: One record per model call, in the order the calls finished.
        transforms: One record per transform computed, in the order they were (they
            call no model, so they are not in ``trace``).
        resampled_values: The aggregated number of each numerically aggregated field, by
            ``(node path, field)``, e.g. ``("task.rate_review", "rating"): 2.6``.
        provenance_records: Every write of the run, in write order (see
            `provenance()`).
        errors: Every step instance that failed after its retries (``on_error="continue"``).
        skipped: The instances not run because one they depend on failed.
        partials: Each root task's values as JSON data, by tag (see `partial()`).
        invalid: Why each task that did not validate failed, by tag.
        usage: The calls and tokens of the run, retries and failed calls included,
            overall and per model key (answers replayed from a journal are not counted:
            they were paid for by the run that recorded them).
        journal: How the run used its journal (``None``: it had none): answers
            replayed, answers recorded, and calls of the journal it did not make.
        cache: How the run used its response cache (``None``: it had none): answers
            replayed from it and answers added.
        plan: The plan the run followed (``None``: a result not made by a run).
    """

    tasks: Mapping[str, TreeNode]
    trace: tuple[TraceRecord, ...]
    transforms: tuple[TransformRecord, ...] = ()
    resampled_values: Mapping[tuple[str, str], float] = field(default_factory=dict)
    provenance_records: tuple[ProvenanceRecord, ...] = ()
    errors: tuple[StepFailedError, ...] = ()
    skipped: tuple[SkippedInstance, ...] = ()
    partials: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    invalid: Mapping[str, str] = field(default_factory=dict)
    usage: RunUsage = field(default_factory=RunUsage)
    journal: JournalReport | None = None
    cache: CacheReport | None = None
    plan: ExecutionPlan | None = None

    @overload
    def __getitem__(self, key: type[_Task]) -> _Task: ...

    @overload
    def __getitem__(self, key: str) -> TreeNode: ...

    def __getitem__(self, key: type[TreeNode] | str) -> TreeNode:
        """The task's instance.

        Raises:
            KeyError: It is not a task of this run.
            ExecutionError: Its values do not validate (a step failed under
                ``on_error="continue"``); `partial()` gives them as JSON data.
        """
        tag = self._tag(key)
        if tag in self.invalid:
            raise ExecutionError(self.invalid[tag])
        return self.tasks[tag]

    def failure(self) -> ExecutionError | None:
        """Why the run failed although it returned: a task whose values do not validate
        (a step failed under ``on_error="continue"``).

        Returns:
            One `ExecutionError` whose message holds, task after task, what reading
            each such task raises, with this result as its ``result``; ``None`` when
            every task validated.
        """
        if not self.invalid:
            return None
        error = ExecutionError("\n".join(self.invalid.values()))
        error.result = self
        return error

    def __repr__(self) -> str:
        return (
            f"RunResult(tasks={list(self.tasks)!r}, calls={self.usage.calls}, "
            f"tokens={run_tokens(self.trace)}, errors={len(self.errors)})"
        )

    def _repr_markdown_(self) -> str:
        """The notebook display: calls, tokens (the provider's, else the prompts'
        counts), retries, replays and transforms in one line; each task's values as JSON
        (as `dump()` gives them, clipped after 200 lines); then the failures and the
        instances skipped because of them."""
        return result_markdown(self)

    def _tag(self, key: type[TreeNode] | str) -> str:
        tag = key if isinstance(key, str) else task_tag(key.__name__)
        if tag is None or (tag not in self.tasks and tag not in self.invalid):
            tasks = ", ".join(repr(name) for name in [*self.tasks, *self.invalid])
            raise KeyError(f"{key!r} is not a task of this run; its tasks are {tasks}")
        return tag

    def partial(self, key: type[TreeNode] | str) -> dict[str, object]:
        """A task's values as JSON data, whether or not they validate (a copy).

        The values are what `dump()` would show (Enum members as their values, each
        ``f_resampled_value`` beside its field; see `langtree.runtime.engine._json_view`), as far
        as the run got, so ``json.dumps`` takes them as they are.

        Raises:
            KeyError: It is not a task of this run.
        """
        values = copied(dict(self.partials.get(self._tag(key), {})))
        assert isinstance(values, dict)
        return values

    def provenance(self, path: str) -> tuple[ProvenanceRecord, ...]:
        """What wrote the value at a field path, newest first: the first record wrote
        the value the result holds, the others are the history it replaced.

        ``path`` is an instance path as ``langtree.prompts._state.instance_text`` prints it,
        a dot and the field, one ``[i]`` per list level:
        ``"task.summarize_report.sections[0].summary"``,
        ``"task.write_digest.section_summaries"``. Fields holding nodes have no records
        of their own; their nodes' fields do.

        Raises:
            UnknownPathError: (a ``KeyError``) Nothing was written at ``path``; the
                message names close paths.
        """
        found = tuple(record for record in reversed(self.provenance_records) if record.path == path)
        if not found:
            known = list(dict.fromkeys(record.path for record in self.provenance_records))
            raise UnknownPathError(path, known)
        return found

    def provenance_paths(self) -> list[str]:
        """Every field path written, in order of its first write."""
        return list(dict.fromkeys(record.path for record in self.provenance_records))

    def provenance_json(self) -> list[dict[str, object]]:
        """Every write as JSON-ready data, in write order (as in `to_json()`)."""
        return [record.to_dict() for record in self.provenance_records]

    def dump(self, key: type[TreeNode] | str) -> dict[str, object]:
        """A task's values as JSON-ready data, with each ``f_resampled_value`` added.

        ``{"rating": "GOOD", "rating_resampled_value": 2.6, ...}``: the number goes into
        the dict of the node instance it was aggregated for, right after the field.
        """
        task = self[key]
        tag = next(name for name, value in self.tasks.items() if value is task)
        data: dict[str, object] = task.model_dump(mode="json")
        add_resampled_values(data, tag, self.resampled_values)
        return data

    def to_dict(self) -> dict[str, object]:
        """The tasks' values (see `dump()`), the trace, the provenance and the usage as
        JSON data, and the ``plan`` the run followed (`ExecutionPlan.to_dict()`); a run
        with transforms adds ``transforms``, a run with failures adds ``errors``,
        ``skipped``, the ``partial`` values of the tasks that do not validate (see
        `partial()`) and why each does not (``invalid``)."""
        data: dict[str, object] = {
            "tasks": {tag: self.dump(tag) for tag in self.tasks},
            "trace": [record.to_dict() for record in self.trace],
            "provenance": self.provenance_json(),
            "usage": self.usage.to_json_dict(),
        }
        if self.plan is not None:
            data["plan"] = self.plan.to_dict()
        if self.transforms:
            data["transforms"] = [record.to_dict() for record in self.transforms]
        if self.errors or self.skipped or self.invalid:
            data["errors"] = [
                {"step_id": error.step_id, "node_path": error.node_path, "message": str(error)}
                for error in self.errors
            ]
            data["skipped"] = [record.to_dict() for record in self.skipped]
            data["partial"] = {tag: self.partial(tag) for tag in self.invalid}
            data["invalid"] = dict(self.invalid)
        return data

    def to_json(self) -> str:
        """`to_dict()` as indented JSON text.

        Raises:
            ExecutionError: The values nest too deep for Python's ``json`` module.
        """
        data = self.to_dict()
        try:
            return json.dumps(data, indent=2, ensure_ascii=False)
        except RecursionError:
            # The standard library's encoder recurses once per level of nesting.
            raise ExecutionError(
                "The run's values nest too deep for JSON text (Python's json module "
                f"stops at about {sys.getrecursionlimit() // 2} levels)\n"
                "  hint: read the values from the result (result[TaskClass], "
                "result.partial(...)) instead"
            ) from None

    def to_html(self) -> str:
        """The run's page: one HTML document to open in a browser, offline (no script,
        nothing fetched), the same page as ``langtree show`` makes from the file that
        `to_json()` wrote. It shows the tree of tasks and nodes, each value with what
        wrote it, each step instance with its prompt, answer, attempts, latency, tokens
        and model, the failures marked, and the plan as a diagram (see docs/cli.md).

        Raises:
            ExecutionError: The values nest too deep for Python's ``json`` module.
        """
        return page_html(self._page_data())

    def write_html(self, path: str | os.PathLike[str]) -> None:
        """Write `to_html()` to a file (UTF-8, as the page declares).

        Raises:
            LangTreeError: The file cannot be written.
            ExecutionError: The values nest too deep for Python's ``json`` module.
        """
        write_page(self._page_data(), Path(path))

    def _page_data(self) -> SavedRun:
        # Through the JSON text, so that the page is the one its saved file gives.
        return saved_run(json.loads(self.to_json()), "the run's result")
