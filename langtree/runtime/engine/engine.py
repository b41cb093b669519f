"""Run a plan on LangChain chat models: steps as runnables, scheduled by their data flow.

Scheduling is per element (see `InstanceWaits`). A plan
step *opens* (its instances are listed) once every command that the dry run carries out
before it and that reaches its node has been carried out (see
`CommandTracker`); commands themselves still wait for
the steps they read to finish for all their instances. An opened step's instance then
starts as soon as the instances it depends on in its own branch have finished: the
instances of each step it depends on whose indices agree with its own on the list levels
of the two nodes' deepest common ancestor (all of them when that ancestor is the root
task, or the nodes are in different tasks). A section's summary thus starts once its own
paragraphs are done, while another section's paragraphs may still run; a step of
another task fed by an ``@each`` over the sections waits for all of them.
``max_concurrency`` caps the model calls in flight across the whole run.

Each instance's messages are assembled (and their tokens counted) once, from the values
known when it starts, exactly as the dry run assembles them. Before the first call the
dry run's commands are replayed, the root tasks' texts are scanned for missing external
variables, and required assets and the assets a model cannot read are checked
(`langtree.runtime.engine.precheck`). A step waits for everything its prompt shows, and
its prompt leaves out what it does not wait for (`PlanStep.unseen`), so every run sends
the same prompts whichever call finishes first; ``tests/dataflow`` holds the engine to a
one-at-a-time reference run over generated trees.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Mapping

from langchain_core.runnables.config import ensure_config, get_async_callback_manager_for_config
from pydantic import BaseModel

from langtree.errors import ExecutionError
from langtree.prompts.preview import PromptBuilder, StepPrompt
from langtree.prompts.state import Address, RunState, instance_text, to_plain
from langtree.runtime.calls.call import CallContext, CallSettings, Generated, StepCall
from langtree.runtime.calls.methods import bind_structured
from langtree.runtime.calls.provider import LLMProvider
from langtree.runtime.calls.schema import output_schema
from langtree.runtime.datasets.shared import SharedCalls
from langtree.runtime.durable.answer_files import AnswerFiles
from langtree.runtime.durable.call_key import step_identity
from langtree.runtime.durable.journal import JournalWriteError
from langtree.runtime.engine.commands import CommandTracker
from langtree.runtime.engine.instances import Schedule, StepInstance
from langtree.runtime.engine.json_view import fields_view, json_view, roots_view
from langtree.runtime.engine.known_parts import KnownParts
from langtree.runtime.engine.outcome import run_result
from langtree.runtime.engine.precheck import check_before_calls, model_profile
from langtree.runtime.engine.resampling import Samples, aggregate, sample
from langtree.runtime.engine.setup import RunSetup, RunWatch
from langtree.runtime.engine.transforms import compute
from langtree.runtime.engine.waits import InstanceWaits
from langtree.runtime.faults.cooldown import Cooldown
from langtree.runtime.faults.failure import RunLimitError, StepFailedError, deadline_keeper
from langtree.runtime.observe.events import EventSink, StepFailed, StepFinished, ValueMapped
from langtree.runtime.observe.otel import model_identity, run_tracer
from langtree.runtime.observe.provenance import ProvenanceLog, ProvenanceRecord
from langtree.runtime.observe.result import RunResult, SkippedInstance, TraceRecord, TransformRecord
from langtree.structure.planning.plan import PlanStep

__all__ = ["execute"]


async def execute(
    setup: RunSetup,
    provider: LLMProvider,
    watch: RunWatch | None = None,
    shared: SharedCalls | None = None,
    events: EventSink | None = None,
) -> RunResult:
    """Run every step of the plan and validate the root tasks.

    With ``on_error="continue"`` a step instance that fails does not stop the run: the
    instances that depend on it are skipped, the others finish, and the result lists the
    failures (``RunResult.errors``) and the skipped instances; a task whose values then
    do not validate raises when it is read from the result.

    Before any model call, the dry run's commands are replayed offline (mapped values
    that do not fit fail here), the root tasks' texts are checked for missing external
    variables, required assets and assets a model's profile says it cannot read are
    refused (see `langtree.runtime.engine.precheck`), and every step's model is taken from
    the provider and bound to its output schema.

    Args:
        setup: The validated, planned run.
        provider: The models.
        watch: Receives the partial result if the run is cancelled.
        shared: What the run shares with the other rows of a dataset (``None``: the
            run has its own, and closes its journal and cache when it ends; a shared
            journal and cache are reported by the dataset, not in the run's result).
        events: Receives each step instance's values, each value a mapping writes and
            each failure the run goes on after, as they happen (see
            `langtree.runtime.observe.events`).

    Every ``ExecutionError`` raised once the run has started carries what had finished
    (``error.result``); one raised before (a setting, the checks before the first call)
    carries ``None``.

    Raises:
        ExecutionError: A setting is out of range, external variables or required
            assets are missing, a command's data does not fit, a transform fails, or
            the filled tasks do not validate.
        StepFailedError: A step instance got no usable output (with
            ``on_error="raise"``).
        RunLimitError: The run reached its deadline or a usage limit.
        JournalWriteError: The journal or the cache could not record an answer (a write
            failed, or the file is read-only and the run needed a call it does not hold).
        StructureError: A step's model key is not in the provider, a step would send
            its model an asset of a kind the model's profile says it lacks, or the nodes
            a step generates whole nest too deep for pydantic to build its schema.
    """
    setup.settings.check()
    prompts = setup.prompts
    state = RunState.start(
        prompts.registry, prompts.inputs, on_missing=setup.on_error, split=prompts.split()
    )
    log = ProvenanceLog(prompts.registry)
    log.record_start(state, prompts.inputs)
    builder = prompts.builder(state)
    check_before_calls(prompts, builder, provider)
    own = shared is None
    calls = SharedCalls.start(setup.settings, provider) if shared is None else shared
    run = _Run(setup, provider, state, builder, log, calls, own=own)
    if events is not None:
        run.stream_to(events)
    try:
        with run.span():
            await run.within_deadline()
        run.check_files()
    except ExecutionError as error:
        error.result = run.result(stopped=True)
        raise
    except asyncio.CancelledError as error:
        stopped = run.result(stopped=True)
        if watch is not None:
            watch.result = stopped
        finished = sum(1 for record in stopped.trace if record.error is None)
        error.add_note(
            f"LangTree: the run was cancelled after {len(stopped.trace)} model call(s), "
            f"{finished} of them with a usable answer"
        )
        raise
    finally:
        run.close_files()
    return run.result(stopped=False)


def _observed() -> bool:
    """Whether callbacks will see the run's calls: the caller's config (``build()``'s
    runnable passes its callbacks through the context), or tracing switched on."""
    return bool(get_async_callback_manager_for_config(ensure_config()).handlers)


class _Run:
    """The state of one run: values, trace, and the steps still to do."""

    def __init__(
        self,
        setup: RunSetup,
        provider: LLMProvider,
        state: RunState,
        builder: PromptBuilder,
        log: ProvenanceLog,
        shared: SharedCalls,
        *,
        own: bool,
    ) -> None:
        self.setup = setup
        self.prompts = setup.prompts
        self.shared = shared
        self.files = shared.files
        self.own_files = own
        self.steps = setup.prompts.plan.steps
        self.state = state
        self.trace: list[TraceRecord] = []
        self.transforms: list[TransformRecord] = []
        self.events: EventSink | None = None
        self.otel = run_tracer()
        self.resampled_values: dict[tuple[str, str], float] = {}
        flows = list(setup.prompts.analysis.flows)
        self.builder = builder
        self.log = log
        self.commands = CommandTracker(setup.prompts.registry, flows, self.steps, log=log)
        self.context = CallContext(
            semaphore=shared.semaphore,
            meter=shared.meter,
            record=self._recorded,
            rng=random.Random(),
            observed=_observed(),
        )
        self.cooldowns = shared.cooldowns
        self.parts = KnownParts(setup.prompts.registry, builder.known, builder.split)
        self.calls = [
            self._step_call(step, provider) if step.transform is None else None
            for step in self.steps
        ]
        self.errors: list[StepFailedError] = []
        self.skipped: list[SkippedInstance] = []
        self.schedule = Schedule(
            waits=InstanceWaits(setup.prompts.registry, self.steps),
            closed=list(range(len(self.steps))),
        )

    def _recorded(self, record: TraceRecord) -> None:
        self.trace.append(record)
        if self.otel is not None:
            self.otel.call(record)

    def span(self) -> contextlib.AbstractContextManager[object]:
        """The run's OpenTelemetry span, when tracing is set up."""
        if self.otel is None:
            return contextlib.nullcontext()
        return self.otel.run(list(self.setup.tasks))

    def _step_span(
        self, step: PlanStep, address: Address, model: str
    ) -> contextlib.AbstractContextManager[object]:
        if self.otel is None:
            return contextlib.nullcontext()
        node_path = instance_text(self.prompts.registry, address)
        return self.otel.step(step.id, node_path, step.fields, model)

    def stream_to(self, events: EventSink) -> None:
        """Tell ``events`` what the run writes from now on, and what fails."""
        self.events = events
        self.log.on_record = self._mapped

    def _mapped(self, record: ProvenanceRecord) -> None:
        if self.events is not None and record.kind == "mapping":
            mapped = ValueMapped(
                path=record.path,
                value=json_view(record.value, record.path, self.resampled_values),
                command=record.command or "",
                source=record.source,
            )
            self.events(mapped)

    def _step_finished(
        self, step: PlanStep, address: Address, values: Mapping[str, object]
    ) -> None:
        if self.events is None:
            return
        node_path = instance_text(self.prompts.registry, address)
        finished = StepFinished(
            step_id=step.id,
            node_path=node_path,
            values=fields_view(values, node_path, self.resampled_values),
            partial=roots_view(self.state.roots, self.resampled_values),
            transform=step.transform is not None,
        )
        self.events(finished)

    def _step_call(self, step: PlanStep, provider: LLMProvider) -> StepCall:
        """The step's model, bound to its output schema once for all its instances."""
        node = self.prompts.registry.get(step.node_tag)
        assert node is not None
        key = step.model or provider.default
        config = provider.config(key)
        output, schema = output_schema(node, step, self.parts)
        settings = self.setup.settings
        model = provider.get(key)
        files = self.files.of_model(config)
        if self.otel is not None:
            self.otel.models.setdefault(key, model_identity(key, model))
        return StepCall(
            binding=bind_structured(model, schema, config.method),
            output=output,
            model=key,
            settings=CallSettings(
                max_retries=settings.max_retries,
                retry=config.retry or settings.retry,
                call_timeout=config.call_timeout or settings.call_timeout,
                rate_limit=settings.rate_limit,
            ),
            cooldown=self.cooldowns.setdefault(key, Cooldown()),
            context=self.context,
            answer_files=files,
            identity=step_identity(key, model, schema, config.method) if files else "",
            profile=model_profile(model),
        )

    def close_files(self) -> None:
        """Close the journal and cache when the run opened them (once)."""
        if self.own_files:
            self.shared.close()

    def check_files(self) -> None:
        """Close the run's own journal and cache, their last answers committed, and stop
        the run if a write to them (or to a dataset's) failed.

        Raises:
            JournalWriteError: A write failed.
        """
        self.close_files()
        self.files.check_written()

    async def within_deadline(self) -> None:
        """Run every step, stopping at the run's deadline.

        Raises:
            RunLimitError: The deadline passed (the steps still running are cancelled).
        """
        deadline = self.setup.settings.deadline
        if deadline is None:
            await self.all_steps()
            return
        started = time.monotonic()
        self.builder.keep_time = deadline_keeper(deadline, started=started)
        try:
            async with asyncio.timeout(deadline) as scope:
                await self.all_steps()
        except TimeoutError as error:
            if not scope.expired():
                raise
            used = time.monotonic() - started
            raise RunLimitError(limit="deadline", allowed=deadline, used=used) from error

    async def all_steps(self) -> None:
        """Start each step instance as soon as it may, until all have finished.

        A step opens (its instances are listed) once the commands it waits for have been
        carried out; each instance then starts once the instances it depends on have
        finished (see `InstanceWaits`). When nothing runs
        and nothing may start, commands that can never be carried out (they wait for each
        other) stop holding back the first step whose steps are done.

        A usage limit that is reached, or a journal that cannot record an answer, stops
        the run from starting anything more, but the calls already in flight are paid
        for: they finish (and their values are kept) before the limit's error is raised.
        """
        self.commands.carry_out_ready(self.state, self.prompts.config)
        schedule = self.schedule
        limit: RunLimitError | JournalWriteError | None = None
        try:
            while True:
                if limit is None:
                    self._start_what_may()
                if not schedule.running:
                    if limit is not None:
                        raise limit
                    if not schedule.closed:
                        break
                    waits = schedule.waits
                    fallback = [p for p in schedule.closed if waits.deps_finished(p)]
                    assert fallback, "the plan's steps depend only on earlier steps"
                    self._open(fallback[:1])
                    continue
                for task, instance in await schedule.finished():
                    try:
                        self._outcome(task, instance)
                    except (RunLimitError, JournalWriteError) as error:
                        limit = limit or error
                    schedule.waits.finish(instance.position, instance.address)
                self._settle()
        finally:
            for task in schedule.running:
                task.cancel()
            await asyncio.gather(*schedule.running, return_exceptions=True)

    def _start_what_may(self) -> None:
        """Open the steps whose commands are done and start every instance that may,
        until nothing more changes without a model call.

        Transforms are computed on the spot; the model calls that may start wait until
        nothing more can be computed, so that their prompts show every value known
        without a call.
        """
        schedule = self.schedule
        waits = schedule.waits
        starting: list[StepInstance] = []
        while True:
            self._open(
                [p for p in schedule.closed if self.commands.ready_for(p) and waits.created(p)]
            )
            ready = schedule.waits.take_ready()
            if not ready:
                break
            for position, address in ready:
                instance = StepInstance(position=position, address=address)
                step = self.steps[position]
                because = schedule.waits.broken_dependency(position, address)
                if because is not None:
                    self._skip(instance, because)
                    schedule.waits.finish(position, address)
                elif not self._due(step, address):
                    schedule.waits.finish(position, address)
                elif step.transform is not None:
                    self._compute(position, address)
                    schedule.waits.finish(position, address)
                else:
                    starting.append(instance)
            self._settle()
        for instance in starting:
            prompt = self.builder.build(self.steps[instance.position], instance.address)
            task = asyncio.create_task(self._instance(instance.position, instance.address, prompt))
            schedule.start(task, instance)

    def _compute(self, position: int, address: Address) -> None:
        """Compute a transform's field for one instance and write it.

        Raises:
            ExecutionError: The transform failed (see `compute()`).
        """
        step = self.steps[position]
        assert step.transform is not None
        started = time.perf_counter()
        computed = compute(
            step.transform,
            step.fields[0],
            address,
            self.state,
            self.prompts.config,
            self.resampled_values,
        )
        values = {computed.field_name: computed.value}
        self.state.write_generated(address, values)
        record = TransformRecord(
            step_id=step.id,
            node_path=instance_text(self.prompts.registry, address),
            field=computed.field_name,
            expression=step.transform.expression,
            value=computed.value,
            latency=time.perf_counter() - started,
        )
        self.transforms.append(record)
        if self.otel is not None:
            self.otel.transform(step.id, record.node_path, record.expression, record.latency)
        self.log.record_transform(address, values, step_id=step.id, transform=step.transform)
        self._step_finished(step, address, values)
        self.commands.finish_instance(position, address, self.state, self.prompts.config)

    def _outcome(self, task: asyncio.Task[None], instance: StepInstance) -> None:
        """Raise what an instance raised, unless it failed and the run continues."""
        error = task.exception()
        if error is None:
            return
        if self.setup.on_error == "continue" and isinstance(error, StepFailedError):
            self.errors.append(error)
            if self.events is not None:
                self.events(StepFailed(error=error))
            because = f"{error.step_id} at {error.node_path}"
            self.schedule.waits.mark_broken(instance.position, instance.address, because)
            return
        raise error

    def _skip(self, instance: StepInstance, because: str) -> None:
        step = self.steps[instance.position]
        node_path = instance_text(self.prompts.registry, instance.address)
        self.skipped.append(SkippedInstance(step_id=step.id, node_path=node_path, because=because))
        self.schedule.waits.mark_broken(instance.position, instance.address, because)

    def _open(self, positions: list[int]) -> None:
        """List the instances of steps that may open, and carry out what that settles."""
        for position in positions:
            self.schedule.closed.remove(position)
            instances = self.state.instances(self.steps[position].node_tag)
            self.schedule.waits.open(position, instances)
        self._settle()

    def _settle(self) -> None:
        """Carry out the commands that steps finished for all their instances make ready."""
        for position in self.schedule.waits.take_finished():
            self.commands.finish_step(position, self.state, self.prompts.config)

    def _due(self, step: PlanStep, address: Address) -> bool:
        """Whether the instance exists and lacks some of the step's fields."""
        if None in address.indices:
            return False
        values = self.state.instance(address)
        return values is not None and not all(name in values for name in step.fields)

    async def _instance(self, position: int, address: Address, prompt: StepPrompt) -> None:
        call = self.calls[position]
        assert call is not None, "transforms are computed, not called"
        with self._step_span(self.steps[position], address, call.model):
            await self._called(position, address, prompt, call)

    async def _called(
        self, position: int, address: Address, prompt: StepPrompt, call: StepCall
    ) -> None:
        step = self.steps[position]
        if step.resample > 1:
            samples = await sample(call, prompt, step.resample)
            parsed, attempts = self._aggregated(step, prompt, samples)
        else:
            generated = await call.generate(prompt)
            if generated.output is None:
                raise _failure(prompt, generated)
            parsed, attempts = generated.output, generated.attempts
        written = self._write(address, parsed)
        self.commands.finish_instance(position, address, self.state, self.prompts.config)
        if written:
            last = attempts[-1] if attempts else None
            self.log.record_step(
                address,
                written,
                step_id=step.id,
                model=call.model,
                prompt_text=prompt.text,
                attempt=len(attempts) if step.resample > 1 else (last.attempt if last else 1),
                sample=step.resample,
                replayed=all(record.replayed for record in attempts if record.error is None),
            )
            self._step_finished(step, address, written)

    def _aggregated(
        self, step: PlanStep, prompt: StepPrompt, samples: Samples
    ) -> tuple[BaseModel, tuple[TraceRecord, ...]]:
        """The samples' aggregate, or the instance's failure.

        Raises:
            StepFailedError: A sample failed with a permanent error, or no sample gave
                valid output.
        """
        if samples.fatal is not None or not samples.valid:
            number = samples.fatal if samples.fatal is not None else max(samples.failed)
            last = samples.failed[number]
            whole = Generated(
                output=None,
                attempts=tuple(samples.attempts),
                failure=last.failure,
                cause=last.cause,
            )
            raise _failure(prompt, whole, sample=samples.fatal, samples=step.resample)
        settings = self.prompts.analysis.settings.get(step.node_tag)
        combined = aggregate(samples.valid, step.fields, settings.aggregations if settings else {})
        for name, value in combined.resampled_values.items():
            self.resampled_values[(prompt.node_path, name)] = value
        return combined.output, tuple(samples.attempts)

    def _write(self, address: Address, parsed: BaseModel) -> dict[str, object]:
        """Store the output; a value the caller supplied meanwhile is kept.

        Returns:
            The fields written, with their values (none when the instance is gone).
        """
        values = to_plain(parsed)
        assert isinstance(values, dict)
        current = self.state.instance(address) or {}
        fresh = {name: value for name, value in values.items() if name not in current}
        if self.state.instance(address) is None:
            return {}
        node = self.prompts.registry.get(address.tag)
        assert node is not None
        self.parts.fill(node, fresh)
        self.state.write_generated(address, fresh)
        return fresh

    def result(self, *, stopped: bool) -> RunResult:
        """What the run produced; ``stopped``: it ended early (a failure, a limit, Ctrl-C).

        Raises:
            ExecutionError: The run finished, no step failed, and a task does not
                validate (e.g. a validator of the class).
        """
        self.close_files()
        files = self.files if self.own_files else AnswerFiles()
        return run_result(
            tasks=self.setup.tasks,
            state=self.state,
            trace=tuple(self.trace),
            transforms=tuple(self.transforms),
            provenance=tuple(self.log.records),
            errors=tuple(self.errors),
            skipped=tuple(self.skipped),
            resampled_values=dict(self.resampled_values),
            stopped=stopped,
            journal=files.journal_report,
            cache=files.cache_report,
            plan=self.setup.prompts.plan,
        )


def _failure(
    prompt: StepPrompt, generated: Generated, *, sample: int | None = None, samples: int = 1
) -> StepFailedError:
    """The error of an instance whose calls gave no usable output."""
    assert generated.failure is not None
    error = StepFailedError(
        step_id=prompt.step_id,
        node_path=prompt.node_path,
        fields=prompt.fields,
        kind=generated.failure,
        attempts=generated.attempts,
        sample=sample,
        samples=samples,
    )
    error.__cause__ = generated.cause
    return error
