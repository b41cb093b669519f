"""One step instance's model calls: ask, read, validate, and retry what is worth retrying.

The step's model is bound once per plan step (`langtree.runtime.calls._methods`), so each
call is the bound model's own ``ainvoke``; the answer is read and validated with the
step's pydantic class here. Each call is traced as ``with_structured_output`` traces it:
a chain run named ``"<node path>: <fields>"`` whose output is ``{"raw", "parsed",
"parsing_error"}``, with the model's run as its child.

A failed call is one of three kinds (`langtree.runtime.faults._faults`), each with its own
fate:

- *invalid output* (no structured output, invalid values, an answer cut off at the output
  limit): asked again up to ``max_retries`` times, each retry adding one human message
  that names the problem;
- *transient* (timeouts, rate limits, server errors, dropped connections, and a call that
  passed ``call_timeout``): asked again with the same messages up to
  ``RetryPolicy.max_retries`` times, after a backoff or the provider's ``Retry-After``
  (up to ``RetryPolicy.max_wait``; it also pauses the model's other calls, and the
  failed call's trace record says so: `langtree.runtime.faults._cooldown`);
- *permanent* (anything else, and a provider's refusal of the assets sent, see
  `langtree.runtime.calls._refusals`): not asked again.

Every call, failed or not, gets its trace record as soon as it returns. Before each call
the run's ``rate_limit`` is waited for (`langtree.runtime.faults._rate_limit`; a replayed
answer does not wait) and its usage limits are checked
(`UsageMeter`); a limit that the call would pass stops the
run with a `RunLimitError`. The prompt's tokens are counted only for a limit that weighs
them (``tokens_per_minute``, ``input_tokens``, ``total_tokens``) and for a call the model
answered whose provider reports no usage; a call that got no answer (a connection refused,
a timeout) counts only the tokens its error reports.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    patch_config,
    set_config_context,
)
from langchain_core.runnables.utils import coro_with_context
from pydantic import BaseModel, ValidationError

from langtree.errors import ExecutionError
from langtree.prompts import (
    StepPrompt,
    add_instructions,
    cut_off_error,
    feedback_message,
    problem_text,
    unicode_problem,
    unsupported_assets,
    without_asset_bytes,
)
from langtree.runtime.calls._metadata import NODE_PATH_KEY
from langtree.runtime.calls._methods import StructuredBinding
from langtree.runtime.calls._refusals import as_refusal
from langtree.runtime.calls._replies import (
    Reading,
    answered_by,
    finish_reason,
    raw_text,
    read_reply,
    reported_usage,
)
from langtree.runtime.durable._call_key import call_key
from langtree.runtime.durable._journal import Journal, JournalEntry
from langtree.runtime.faults._cooldown import Cooldown
from langtree.runtime.faults._failure import RunLimitError
from langtree.runtime.faults._faults import (
    FailureKind,
    classify_failure,
    describe_failure,
    is_cut_off,
)
from langtree.runtime.faults._rate_limit import RateLimiter
from langtree.runtime.faults._retry import RetryPolicy, RetryWait
from langtree.runtime.observe._progress import announce_replayed
from langtree.runtime.observe._result import TraceRecord
from langtree.runtime.observe._usage import UsageMeter, usage_of_error

__all__ = ["CallContext", "CallSettings", "Generated", "StepCall"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CallSettings:
    """How a model's calls are made: the run's settings with the model's own overrides.

    Attributes:
        max_retries: How many times invalid output is asked for again.
        retry: How transient failures are retried.
        call_timeout: Seconds a call may take before it counts as a transient failure
            (``None``: no limit but the client's own).
        rate_limit: The pace of the calls, also told of a provider's ``Retry-After``
            (``None``: as fast as ``max_concurrency`` allows).
    """

    max_retries: int
    retry: RetryPolicy
    call_timeout: float | None = None
    rate_limit: RateLimiter | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CallContext:
    """What the calls of one run share.

    Attributes:
        semaphore: Caps the model calls in flight across the run.
        meter: Counts the run's calls and tokens against its limits.
        record: Receives each call's trace record as soon as the call returns.
        rng: Draws the jitter of the backoff.
        observed: Whether callbacks observe the run (LangChain tracing, a progress bar):
            only then is each call traced as a chain run of its own.
    """

    semaphore: asyncio.Semaphore
    meter: UsageMeter
    record: Callable[[TraceRecord], None]
    rng: random.Random = field(default_factory=random.Random)
    observed: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class Generated:
    """What a step instance's calls gave.

    Attributes:
        output: The validated output (``None``: every attempt failed).
        attempts: The record of every call.
        failure: Why there is no output: the kind of the last failure.
        cause: The exception the last call raised, when it raised.
    """

    output: BaseModel | None
    attempts: tuple[TraceRecord, ...]
    failure: FailureKind | None = None
    cause: BaseException | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Call:
    """One call of a step instance, to be recorded."""

    prompt: StepPrompt
    messages: tuple[BaseMessage, ...]
    attempt: int
    sample: int

    def record(
        self,
        model: str,
        *,
        usage: Mapping[str, object] | None,
        latency: float,
        raw_output: str,
        error: str | None,
        failure: FailureKind | None,
        waited: float,
        truncated: bool = False,
        answered_by: str | None = None,
        finish_reason: str | None = None,
        replayed: bool = False,
    ) -> TraceRecord:
        return TraceRecord(
            step_id=self.prompt.step_id,
            node_path=self.prompt.node_path,
            fields=self.prompt.fields,
            model=model,
            attempt=self.attempt,
            sample=self.sample,
            messages=without_asset_bytes(self.messages, self.prompt.assets),
            prompt_tokens=self.prompt.tokens,
            usage=usage,
            latency=latency,
            raw_output=raw_output,
            error=error,
            failure=failure,
            truncated=truncated,
            answered_by=answered_by,
            finish_reason=finish_reason,
            waited=waited,
            replayed=replayed,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Attempt:
    output: BaseModel | None
    record: TraceRecord
    error: BaseException | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StepCall:
    """Everything needed to call the model for the instances of one plan step.

    Attributes:
        binding: The model bound to the step's structured-output schema.
        output: The step's pydantic class, which validates the answers.
        model: The provider's key of the model.
        settings: Retries and timeout of the model's calls.
        cooldown: The model's pause after a ``Retry-After`` (shared by its steps).
        context: What the run's calls share.
        answer_files: The journal and the response cache the calls' answers are replayed
            from and recorded in (see ``langtree.runtime.durable._answer_files``).
        identity: What every call of the step shares in its key (the model, the schema
            and the method; see ``langtree.runtime.durable._call_key``).
        profile: The chat model's profile (``BaseChatModel.profile``), when it has one:
            a prompt with assets of a kind it says the model lacks is never sent.
    """

    binding: StructuredBinding
    output: type[BaseModel]
    model: str
    settings: CallSettings
    cooldown: Cooldown
    context: CallContext
    answer_files: tuple[Journal, ...] = ()
    identity: str = ""
    profile: Mapping[str, object] | None = None

    async def generate(self, prompt: StepPrompt, *, sample: int = 1) -> Generated:
        """Call until the output validates or a failure's budget is spent.

        Args:
            prompt: The instance's messages.
            sample: Which sample of a resampled step this is (1 when not resampled);
                recorded in the trace.

        Raises:
            RunLimitError: A call would pass one of the run's usage limits.
            JournalWriteError: The journal or the cache could not record the answer of
                a call still to make.
        """
        base = self._messages(prompt)
        messages = base
        # The node path in the metadata lets callbacks and the model's own run tell which
        # node instance a call generates for; the run name is the chain run's in tracing.
        config: RunnableConfig = {
            "metadata": {NODE_PATH_KEY: prompt.node_path},
            "run_name": f"{prompt.node_path}: {', '.join(prompt.fields)}",
        }
        attempts: list[TraceRecord] = []
        # Two budgets: an answer that could not be used and a call that got none are told
        # apart (``max_retries`` and ``RetryPolicy.max_retries``), so a flaky connection
        # does not spend the retries meant for a model's mistakes, nor the other way round.
        spent = {"invalid_output": 0, "transient": 0}
        waited = 0.0
        # Keyed on the messages without feedback: the feedback follows from the answer
        # before it, which the journal holds, so an answer's number says where it stands.
        answers = _Answers.of(self, prompt, base, sample)
        while True:
            call = _Call(prompt=prompt, messages=messages, attempt=len(attempts) + 1, sample=sample)
            # A recorded answer is used before any call: a run resumed from its journal sends
            # only the calls the journal does not hold, and in the same order.
            tried = answers.replayed(self, call)
            if tried is None:
                tried = await self._attempt(call, config, waited, answers)
            else:
                await answers.keep(self, tried)
                if self.context.observed:
                    await announce_replayed(prompt.node_path, valid=tried.output is not None)
            kind = tried.record.failure
            # `_may_retry()` spends one retry of the kind's budget: it is asked only for a
            # failure that may be retried at all.
            retrying = kind is not None and kind != "permanent" and self._may_retry(kind, spent)
            wait = self._retry_wait(kind, spent, tried.error) if retrying else None
            # The record says that the call now waits for its provider, before the wait.
            record = tried.record if wait is None else replace(tried.record, note=wait.note)
            self.context.record(record)
            attempts.append(record)
            if not retrying:
                return Generated(
                    output=tried.output, attempts=tuple(attempts), failure=kind, cause=tried.error
                )
            if kind == "invalid_output":
                assert tried.record.error is not None
                feedback = feedback_message(
                    tried.record.error, prompt.fields, self.binding.instructions
                )
                # The prompt and the latest problem only: the invalid answer is not sent
                # back as the model's message, and earlier problems are left out, so the
                # prompt does not grow with each retry.
                messages = (*base, feedback)
                # The next record counts its own waits only.
                waited = 0.0
            else:
                assert wait is not None
                waited = await self._back_off(wait)

    def _check_assets(self, prompt: StepPrompt) -> None:
        """Refuse, before the call, assets the model's profile says it cannot take.

        Raises:
            ExecutionError: Naming the asset and the model (a permanent failure).
        """
        problem = unsupported_assets(prompt.assets, self.profile)
        if problem is not None:
            raise ExecutionError(
                f"Model {self.model!r} cannot take the assets of {prompt.node_path}: "
                f"{problem}; give the step a model that reads them (llm(...))"
            )

    def _messages(self, prompt: StepPrompt) -> tuple[BaseMessage, ...]:
        if self.binding.instructions is None:
            return prompt.messages
        return add_instructions(prompt.messages, self.binding.instructions)

    def _may_retry(self, kind: FailureKind, spent: dict[str, int]) -> bool:
        # Counted before the comparison: a budget of n allows n retries after the first call.
        spent[kind] += 1
        budget = self.settings.max_retries
        if kind == "transient":
            budget = self.settings.retry.max_retries
        return spent[kind] <= budget

    def _retry_wait(
        self, kind: FailureKind | None, spent: dict[str, int], error: BaseException | None
    ) -> RetryWait | None:
        """The wait before a retry: none after invalid output."""
        if kind != "transient":
            return None
        return self.settings.retry.wait(spent["transient"], error, rng=self.context.rng)

    async def _back_off(self, wait: RetryWait) -> float:
        """Wait before a transient retry; returns the seconds waited here.

        A backoff is waited here. A wait the provider asked for pauses the model's
        other calls too: it is waited in `_attempt()`, as theirs is.
        """
        policy = self.settings.retry
        if wait.asked is None:
            await policy.sleep(wait.seconds)
            return wait.seconds
        # The provider's pause is the model's, not this call's: every call to the model
        # waits it out before taking a place (the cooldown), and the rate limit holds it too,
        # so that calls already in their place, waiting for their turn, do not go out in it.
        self.cooldown.hold(wait.seconds, policy)
        if self.settings.rate_limit is not None:
            self.settings.rate_limit.hold(self.model, wait.seconds)
        # Waited, and recorded, where every call of the model waits for the pause.
        return 0.0

    async def _attempt(
        self, call: _Call, config: RunnableConfig, waited: float, answers: _Answers
    ) -> _Attempt:
        """One call, holding a place of ``max_concurrency`` until its answer is in the
        journal: a run that is killed re-sends at most that many calls. The rate limit
        is waited for in that place, so calls start in the order they got one; a file
        that could not record the answer stops the run before the call is paid for."""
        waited += await self.cooldown.acquire(
            self.context.semaphore, self.settings.retry, call.prompt.node_path
        )
        try:
            # Checked in the call's place, just before the call: a write that failed while it
            # waited for the place stops it before it is paid for.
            answers.check_recordable(call.prompt)
            if self.settings.rate_limit is not None:
                waited += await self.settings.rate_limit.acquire(self.model, call.prompt.tokens)
            tried = await self._call(call, config, waited)
            await answers.keep(self, tried)
            return tried
        finally:
            self.context.semaphore.release()

    async def _call(self, call: _Call, config: RunnableConfig, waited: float) -> _Attempt:
        prompt, meter = call.prompt, self.context.meter
        # Outside the ``try``: a limit the call would pass stops the run (a `RunLimitError`
        # propagates), it is not a failure of the step to classify and retry.
        self._admit(prompt)
        started = time.perf_counter()
        try:
            # Inside it: assets the model's profile refuses are this call's permanent
            # failure, recorded in the trace as a provider's refusal would be.
            self._check_assets(prompt)
            reading = await self._ask(list(call.messages), config)
        except asyncio.CancelledError:
            # A call cancelled in flight (Ctrl-C, the deadline, another step's failure) got
            # no answer: it leaves the tokens in flight and counts as unanswered, then the
            # cancellation goes on.
            meter.settle(prompt.tokens, None, answered=False)
            raise
        # A provider may raise any type: each error is classified and recorded, and
        # the step's fate follows from its kind (nothing is dropped); one that refuses
        # the assets sent becomes LangTree's own, naming them (permanent).
        except Exception as error:  # noqa: BLE001
            refused = as_refusal(error, prompt, self.model)
            return self._raised(call, refused, time.perf_counter() - started, waited)
        latency = time.perf_counter() - started
        usage = reported_usage(reading.message)
        # Settled as soon as the answer is in, valid or not: the tokens were spent either way.
        meter.settle(prompt.tokens, usage, answered=True)
        valid, problem = self._validate(reading)
        record = call.record(
            self.model,
            usage=usage,
            latency=latency,
            raw_output=raw_text(reading),
            error=problem,
            failure=None if valid is not None else "invalid_output",
            truncated=reading.truncated,
            answered_by=answered_by(reading.message),
            finish_reason=finish_reason(reading.message),
            waited=waited,
        )
        return _Attempt(output=valid, record=record)

    def _admit(self, prompt: StepPrompt) -> None:
        """Count the call against the run's limits.

        Raises:
            RunLimitError: The call would pass a limit.
        """
        limit = self.context.meter.admit(prompt.tokens)
        if limit is not None:
            raise RunLimitError(
                limit=limit.limit,
                allowed=limit.allowed,
                used=limit.used,
                where=f" before a call of step {prompt.step_id!r} for {prompt.node_path!r}",
            )

    def _raised(self, call: _Call, error: Exception, latency: float, waited: float) -> _Attempt:
        usage: Mapping[str, object] | None = usage_of_error(error)
        cut_off = is_cut_off(error)
        record = call.record(
            self.model,
            usage=usage,
            latency=latency,
            raw_output="",
            error=cut_off_error(error) if cut_off else self._describe(error),
            failure=self._classify(error),
            waited=waited,
            truncated=cut_off,
        )
        self.context.meter.settle(call.prompt.tokens, usage, answered=record.answered)
        return _Attempt(output=None, record=record, error=error)

    def _classify(self, error: BaseException) -> FailureKind:
        # LangTree's own ``call_timeout`` ran out: transient (see the module), and no
        # classifier is asked, as no provider raised it.
        if isinstance(error, _CallTimeoutError):
            return "transient"
        policy = self.settings.retry
        return classify_failure(
            error, transient_errors=policy.transient_errors, classifier=policy.classifier
        )

    @staticmethod
    def _describe(error: BaseException) -> str:
        return str(error) if isinstance(error, _CallTimeoutError) else describe_failure(error)

    async def _ask(self, messages: list[BaseMessage], config: RunnableConfig) -> Reading:
        """One call, within ``call_timeout`` when one is set."""
        timeout = self.settings.call_timeout
        if timeout is None:
            return await self._traced(messages, config)
        try:
            async with asyncio.timeout(timeout) as scope:
                return await self._traced(messages, config)
        except TimeoutError as error:
            # Only a timeout of this scope is ``call_timeout``'s; a TimeoutError the client
            # raised itself is classified as the provider's (rule 6).
            if scope.expired():
                raise _CallTimeoutError(timeout) from error
            raise

    async def _traced(self, messages: list[BaseMessage], config: RunnableConfig) -> Reading:
        """One call of the bound model, traced as a chain run with the model's run inside,
        its answer read."""
        if not self.context.observed:
            return read_reply(self.binding, await self._unobserved(messages, config))
        config = ensure_config(config)
        manager = get_async_callback_manager_for_config(config)
        # A run id the caller set is the chain run's, and is taken out of the config: the
        # model's own run under it must get an id of its own.
        run = await manager.on_chain_start(
            None, messages, name=config.get("run_name"), run_id=config.pop("run_id", None)
        )
        try:
            child = patch_config(config, callbacks=run.get_child())
            with set_config_context(child) as context:
                # As ``RunnableSequence`` runs a step: the child config set in the context,
                # in a task of its own, so that tracers that read the context rather than
                # the config see the model's run as this chain run's child.
                reply = await coro_with_context(
                    self.binding.runnable.ainvoke(messages, config=child), context, create_task=True
                )
            reading = read_reply(self.binding, reply)
        # A cancellation too: the chain run is closed as failed rather than left open.
        except BaseException as error:
            await run.on_chain_error(error)
            raise
        await run.on_chain_end(
            {"raw": reply, "parsed": reading.arguments, "parsing_error": reading.problem}
        )
        return reading

    async def _unobserved(self, messages: list[BaseMessage], config: RunnableConfig) -> object:
        """A call that no callback handler sees: the chain run would be invisible, so the
        model is called directly (its own run still gets the metadata), without
        LangChain's run bookkeeping when the binding allows (``DirectCall``)."""
        direct = self.binding.direct
        if direct is not None and direct.applies(messages):
            return await direct.ainvoke(messages, config)
        return await self.binding.runnable.ainvoke(messages, config=config)

    def _validate(self, reading: Reading) -> tuple[BaseModel | None, str | None]:
        """The answer as the step's class, or why it is not usable (text that is not
        Unicode, a lone surrogate, is invalid output: no later prompt could carry it)."""
        parsed = reading.arguments
        # A parsed answer may be a pydantic object of another class (a user's runnable
        # parsed it): validated again, from plain data, as the step's class.
        if isinstance(parsed, BaseModel):
            parsed = parsed.model_dump()
        problem: object = reading.problem
        if isinstance(parsed, Mapping):
            problem = unicode_problem(parsed, "answer", subject="The answer's value")
            if problem is None:
                try:
                    return self.output.model_validate(parsed), None
                except ValidationError as error:
                    problem = error
        return None, problem_text(problem, cut_off=reading.truncated)


@dataclass(slots=True, kw_only=True)
class _Answers:
    """A step instance's answers in the run's journal and cache: those recorded are
    replayed, in order, before any model call; new ones are added to every file, valid or
    not, and committed before their call gives back its place."""

    files: tuple[Journal, ...] = ()
    key: str = ""
    source: Journal | None = None
    recorded: tuple[JournalEntry, ...] = ()
    given: int = 0

    @classmethod
    def of(
        cls, step: StepCall, prompt: StepPrompt, messages: tuple[BaseMessage, ...], sample: int
    ) -> _Answers:
        if not step.answer_files:
            return cls()
        key = call_key(
            step.identity,
            step_id=prompt.step_id,
            node_path=prompt.node_path,
            fields=prompt.fields,
            sample=sample,
            messages=messages,
        )
        found = [(file, file.answers(key)) for file in step.answer_files]
        # The longer chain wins; the journal, listed first, on a tie.
        source, recorded = max(found, key=lambda pair: len(pair[1]))
        return cls(files=step.answer_files, key=key, source=source, recorded=recorded)

    def replayed(self, step: StepCall, call: _Call) -> _Attempt | None:
        """The next recorded answer as an attempt, or ``None`` when a call must be made
        (none is left, or a valid one no longer validates)."""
        # ``given`` counts the answers used so far: once it reaches the chain recorded for
        # this key, every further call is new.
        if self.source is None or self.given >= len(self.recorded):
            return None
        entry = self.recorded[self.given]
        output = None
        # A valid answer is validated again: the step's class may have changed (a validator)
        # since it was recorded, and an answer it refuses is asked for anew.
        if entry.output is not None:
            try:
                output = step.output.model_validate_json(entry.output)
            except ValidationError:
                return None
        # Counted only here: a recorded answer the step's class now refuses is not replayed,
        # and the call made for it instead is no replay.
        self.source.count_replayed()
        record = call.record(
            step.model,
            usage=entry.usage,
            latency=entry.latency,
            raw_output=entry.raw_output,
            error=entry.error,
            failure=None if output is not None else "invalid_output",
            waited=0.0,
            replayed=True,
        )
        return _Attempt(output=output, record=record)

    def check_recordable(self, prompt: StepPrompt) -> None:
        """Stop the run before a model call whose answer a file could not record.

        Raises:
            JournalWriteError: A file is read-only, or a write to it failed.
        """
        for file in self.files:
            file.check_recordable(prompt.step_id, prompt.node_path)

    async def keep(self, step: StepCall, tried: _Attempt) -> None:
        """Count an answer, and record it when a model gave it in this run."""
        record = tried.record
        # A call that got no answer (a timeout, a refused connection) has nothing to keep,
        # and is asked again anew by the next run.
        if not record.answered:
            return
        self.given += 1
        # ``given`` counts replayed answers too, so a new answer continues the chain it
        # follows; a replayed one is in its file already and is not copied to the other.
        if not self.files or record.replayed:
            return
        entry = JournalEntry(
            key=self.key,
            answer=self.given,
            step_id=record.step_id,
            node_path=record.node_path,
            sample=record.sample,
            model=step.model,
            output=None if tried.output is None else tried.output.model_dump_json(),
            raw_output=record.raw_output,
            error=record.error,
            usage=record.usage,
            latency=record.latency,
        )
        # Both files at once; the call keeps its place under ``max_concurrency`` until both
        # have committed (`_attempt`).
        await asyncio.gather(*(file.record(entry) for file in self.files))


class _CallTimeoutError(Exception):
    """A call that passed ``call_timeout``."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"TimeoutError: no answer within {timeout:g} s (call_timeout)")
