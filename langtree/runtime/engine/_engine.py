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
(`langtree.runtime.engine._precheck`). A step waits for everything its prompt shows, and
its prompt leaves out what it does not wait for (`PlanStep.unseen`), so every run sends
the same prompts whichever call finishes first; ``tests/dataflow`` holds the engine to a
one-at-a-time reference run over generated trees.

A run (`_Run`) is built from four parts, each complete before the first call: what it is
given (`RunBasis`), what it records and whom it tells (`RunRecords`), how it calls its
models (`RunCalls`) and where its steps stand (`Schedule`). What changes as the run goes
is what the parts hold (values, records, waits), never which parts the run has.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from pydantic import BaseModel

from langtree.errors import ExecutionError
from langtree.prompts import Address, RunState, StepPrompt, instance_text, to_plain
from langtree.runtime.calls._call import Generated, StepCall
from langtree.runtime.calls._provider import LLMProvider
from langtree.runtime.datasets._shared import SharedCalls
from langtree.runtime.durable._journal import JournalWriteError
from langtree.runtime.engine._instances import Schedule, StepInstance
from langtree.runtime.engine._outcome import run_result
from langtree.runtime.engine._precheck import check_before_calls
from langtree.runtime.engine._records import RunRecords
from langtree.runtime.engine._resampling import Samples, aggregate, sample
from langtree.runtime.engine._run_calls import RunCalls
from langtree.runtime.engine._setup import RunBasis, RunSetup, RunWatch
from langtree.runtime.engine._transforms import compute
from langtree.runtime.faults._failure import RunLimitError, StepFailedError, deadline_keeper
from langtree.runtime.observe._events import EventSink
from langtree.runtime.observe._result import (
    RunResult,
    SkippedInstance,
    TraceRecord,
    TransformRecord,
)
from langtree.structure import PlanStep

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
    refused (see `langtree.runtime.engine._precheck`), and every step's model is taken from
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
            `langtree.runtime.observe._events`).

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
    run = _Run.start(setup, provider, shared, events)
    try:
        with run.records.span(list(setup.tasks)):
            await run.within_deadline()
        # Only once every step is done: a write to the journal or cache that failed in the
        # background stops the run here, with everything it had finished in the error.
        run.calls.check_files()
    except ExecutionError as error:
        error.result = run.result(stopped=True)
        raise
    # A cancellation (Ctrl-C, the caller's own) stays a cancellation: the partial result
    # goes to the watch, for a synchronous caller's `RunInterrupted`, and the note tells an
    # awaiting caller how far the run got.
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
    # However the run ends, its own journal and cache are closed, their last answers
    # committed: the calls already paid for are replayed by the next run.
    finally:
        run.calls.close_files()
    return run.result(stopped=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Run:
    """One run, made of parts each complete when the run is set up (`start()`).

    Attributes:
        basis: What the run is given: its set-up, values and prompt builder.
        records: What it records (trace, transforms, failures, provenance), and whom it
            tells.
        calls: How it calls its models.
        schedule: Where its steps stand, and the commands they wait for.
    """

    basis: RunBasis
    records: RunRecords
    calls: RunCalls
    schedule: Schedule

    @classmethod
    def start(
        cls,
        setup: RunSetup,
        provider: LLMProvider,
        shared: SharedCalls | None,
        events: EventSink | None,
    ) -> _Run:
        """Set a run up and check it, up to its first model call.

        Raises:
            ExecutionError: A setting is out of range, a check before the first call
                failed, or the journal or cache cannot be opened.
            StructureError: A step's model or schema cannot be had (see `execute()`).
        """
        # Settings first: one out of range fails before any value is read or model built.
        setup.settings.check()
        prompts = setup.prompts
        state = RunState.start(
            prompts.registry, prompts.inputs, on_missing=setup.on_error, split=prompts.split()
        )
        records = RunRecords.start(prompts.registry, events)
        # The inputs and defaults are the provenance log's first records: every later write
        # is told apart from what the caller gave.
        records.log.record_start(state, prompts.inputs)
        builder = prompts.builder(state)
        # The checks come before the models are bound and the journal and cache opened: a
        # run refused here has opened no file and bound no schema.
        check_before_calls(prompts, builder, provider)
        basis = RunBasis.start(setup, state, builder)
        return cls(
            basis=basis,
            records=records,
            calls=RunCalls.bind(basis, provider, records, shared),
            schedule=Schedule.of_plan(prompts, records.log),
        )

    async def within_deadline(self) -> None:
        """Run every step, stopping at the run's deadline.

        Raises:
            RunLimitError: The deadline passed (the steps still running are cancelled).
        """
        deadline = self.basis.setup.settings.deadline
        if deadline is None:
            await self.all_steps()
            return
        started = time.monotonic()
        # The deadline's clock starts now, after the checks before the first call (which
        # read assets through the same builder with no deadline): from here on, reading
        # an asset's file stops when the deadline passes.
        self.basis.builder.keep_time = deadline_keeper(deadline, started=started)
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
        schedule = self.schedule
        # The commands that read only what the inputs hold are carried out before any
        # step opens, as the dry run does before its first step.
        schedule.commands.carry_out_ready(self.basis.state, self.basis.prompts.config)
        # The first limit reached (or journal write failed) is kept until nothing runs: no
        # instance starts after it, and the calls in flight finish and keep their values.
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
                    # Nothing runs and nothing may start, yet steps are closed: they wait for
                    # commands that wait for each other and can never be carried out. The
                    # earliest such step in plan order opens without them, as the dry run
                    # reaches it; what it finishes may let the other steps open as usual.
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
                    # After `_outcome()`: a failed instance is marked broken before it is
                    # finished, so the dependents it wakes find the mark and are skipped.
                    # Finished even when it failed, or its dependents would wait forever.
                    schedule.waits.finish(instance.position, instance.address)
                self._settle()
        # Whatever ends the loop (a failure, the deadline, a cancellation), no call outlives
        # the run: the instances in flight are cancelled and awaited, their errors retrieved.
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
        steps = self.basis.steps
        starting: list[StepInstance] = []
        # Opening steps, skipping instances and computing transforms each finish instances
        # without a call, which may carry out commands and open further steps: the pass is
        # repeated until it releases nothing.
        while True:
            self._open(
                [p for p in schedule.closed if schedule.commands.ready_for(p) and waits.created(p)]
            )
            ready = waits.take_ready()
            if not ready:
                break
            for position, address in ready:
                instance = StepInstance(position=position, address=address)
                step = steps[position]
                because = waits.broken_dependency(position, address)
                # Each branch but the last finishes the instance at once, so that what waits
                # for it is released in the same pass (a skipped one is marked broken first,
                # so its dependents are skipped in turn, naming the same failure).
                if because is not None:
                    self._skip(instance, because)
                    waits.finish(position, address)
                elif not self._due(step, address):
                    waits.finish(position, address)
                elif step.transform is not None:
                    self._compute(position, address)
                    waits.finish(position, address)
                else:
                    starting.append(instance)
            self._settle()
        # Each prompt is built as its instance starts, from the values it waits for (all of
        # them known now), before any other call can write: the messages the dry run shows.
        for instance in starting:
            prompt = self.basis.builder.build(steps[instance.position], instance.address)
            task = asyncio.create_task(self._instance(instance.position, instance.address, prompt))
            schedule.start(task, instance)

    def _compute(self, position: int, address: Address) -> None:
        """Compute a transform's field for one instance and write it.

        Raises:
            ExecutionError: The transform failed (see `compute()`).
        """
        basis, records = self.basis, self.records
        step = basis.steps[position]
        assert step.transform is not None
        started = time.perf_counter()
        computed = compute(
            step.transform,
            step.fields[0],
            address,
            basis.state,
            basis.prompts.config,
            records.resampled_values,
        )
        values = {computed.field_name: computed.value}
        # Written before the element-wise commands it feeds are carried out
        # (`_finish_instance()`): they read the value from the run's state.
        basis.state.write_generated(address, values)
        records.transform(
            TransformRecord(
                step_id=step.id,
                node_path=instance_text(basis.prompts.registry, address),
                field=computed.field_name,
                expression=step.transform.expression,
                value=computed.value,
                latency=time.perf_counter() - started,
            )
        )
        records.log.record_transform(address, values, step_id=step.id, transform=step.transform)
        records.step_finished(step, address, values, basis.state.roots)
        self._finish_instance(position, address)

    def _outcome(self, task: asyncio.Task[None], instance: StepInstance) -> None:
        """Raise what an instance raised, unless it failed and the run continues."""
        error = task.exception()
        if error is None:
            return
        # Only a step's own failure lets the run go on; a limit, a journal write, a command's
        # data or a bug stops it whatever ``on_error`` says.
        if self.basis.setup.on_error == "continue" and isinstance(error, StepFailedError):
            self.records.failure(error)
            because = f"{error.step_id} at {error.node_path}"
            self.schedule.waits.mark_broken(instance.position, instance.address, because)
            return
        raise error

    def _skip(self, instance: StepInstance, because: str) -> None:
        step = self.basis.steps[instance.position]
        node_path = instance_text(self.basis.prompts.registry, instance.address)
        skipped = SkippedInstance(step_id=step.id, node_path=node_path, because=because)
        self.records.skipped.append(skipped)
        # Marked with the failure that caused the skip, not with this instance: every
        # instance skipped behind it names the instance that really failed.
        self.schedule.waits.mark_broken(instance.position, instance.address, because)

    def _open(self, positions: list[int]) -> None:
        """List the instances of steps that may open, and carry out what that settles."""
        for position in positions:
            self.schedule.closed.remove(position)
            instances = self.basis.state.instances(self.basis.steps[position].node_tag)
            self.schedule.waits.open(position, instances)
        # A step without instances finishes as it opens, which may make commands ready.
        self._settle()

    def _settle(self) -> None:
        """Carry out the commands that steps finished for all their instances make ready."""
        for position in self.schedule.waits.take_finished():
            self.schedule.commands.finish_step(
                position, self.basis.state, self.basis.prompts.config
            )

    def _finish_instance(self, position: int, address: Address) -> None:
        """Carry out what an instance's output sends to its own elements."""
        self.schedule.commands.finish_instance(
            position, address, self.basis.state, self.basis.prompts.config
        )

    def _due(self, step: PlanStep, address: Address) -> bool:
        """Whether the instance exists and lacks some of the step's fields."""
        # An index of ``None`` stands for list elements not known yet: nothing to call for.
        if None in address.indices:
            return False
        values = self.basis.state.instance(address)
        return values is not None and not all(name in values for name in step.fields)

    async def _instance(self, position: int, address: Address, prompt: StepPrompt) -> None:
        call = self.calls.of(position)
        with self.records.step_span(self.basis.steps[position], address, call.model):
            await self._called(position, address, prompt, call)

    async def _called(
        self, position: int, address: Address, prompt: StepPrompt, call: StepCall
    ) -> None:
        step = self.basis.steps[position]
        if step.resample > 1:
            samples = await sample(call, prompt, step.resample)
            parsed, attempts = self._aggregated(step, prompt, samples)
        else:
            generated = await call.generate(prompt)
            if generated.output is None:
                raise _failure(prompt, generated)
            parsed, attempts = generated.output, generated.attempts
        written = self._write(address, parsed)
        self._finish_instance(position, address)
        # Nothing written: the instance is gone, or every field was written while the call
        # was in flight; no provenance record or event then claims the model's values.
        if written:
            last = attempts[-1] if attempts else None
            # A resampled instance counts every call of its samples; otherwise the attempt
            # that gave the output. Replayed only when every usable answer came from a file.
            self.records.log.record_step(
                address,
                written,
                step_id=step.id,
                model=call.model,
                prompt_text=prompt.text,
                attempt=len(attempts) if step.resample > 1 else (last.attempt if last else 1),
                sample=step.resample,
                replayed=all(record.replayed for record in attempts if record.error is None),
            )
            self.records.step_finished(step, address, written, self.basis.state.roots)

    def _aggregated(
        self, step: PlanStep, prompt: StepPrompt, samples: Samples
    ) -> tuple[BaseModel, tuple[TraceRecord, ...]]:
        """The samples' aggregate, or the instance's failure.

        Raises:
            StepFailedError: A sample failed with a permanent error, or no sample gave
                valid output.
        """
        if samples.fatal is not None or not samples.valid:
            # The sample whose permanent error ended the others names the failure; without
            # one, the last sample in sample order does, as a single call's last attempt would.
            number = samples.fatal if samples.fatal is not None else max(samples.failed)
            last = samples.failed[number]
            whole = Generated(
                output=None,
                attempts=tuple(samples.attempts),
                failure=last.failure,
                cause=last.cause,
            )
            raise _failure(prompt, whole, sample=samples.fatal, samples=step.resample)
        settings = self.basis.prompts.analysis.settings.get(step.node_tag)
        combined = aggregate(samples.valid, step.fields, settings.aggregations if settings else {})
        # Kept by instance path: `json_view()` puts each number right after its field.
        for name, value in combined.resampled_values.items():
            self.records.resampled_values[(prompt.node_path, name)] = value
        return combined.output, tuple(samples.attempts)

    def _write(self, address: Address, parsed: BaseModel) -> dict[str, object]:
        """Store the output; a value the caller supplied meanwhile is kept.

        Returns:
            The fields written, with their values (none when the instance is gone).
        """
        state = self.basis.state
        values = to_plain(parsed)
        assert isinstance(values, dict)
        current = state.instance(address) or {}
        # A field the instance holds already keeps its value over the model's: one the
        # caller gave (a step asks for all its fields even when some are given), or one a
        # command wrote while the call was in flight.
        fresh = {name: value for name, value in values.items() if name not in current}
        if state.instance(address) is None:
            return {}
        node = self.basis.prompts.registry.get(address.tag)
        assert node is not None
        # Before the write: what the model put into fields left to split steps or known
        # already is dropped, and the known defaults stand again.
        self.basis.parts.fill(node, fresh)
        state.write_generated(address, fresh)
        return fresh

    def result(self, *, stopped: bool) -> RunResult:
        """What the run produced; ``stopped``: it ended early (a failure, a limit, Ctrl-C).

        Raises:
            ExecutionError: The run finished, no step failed, and a task does not
                validate (e.g. a validator of the class).
        """
        # Closed first, so that the reports count the last answers committed.
        self.calls.close_files()
        files = self.calls.reported_files()
        records = self.records
        return run_result(
            tasks=self.basis.setup.tasks,
            state=self.basis.state,
            trace=tuple(records.trace),
            transforms=tuple(records.transforms),
            provenance=tuple(records.log.records),
            errors=tuple(records.errors),
            skipped=tuple(records.skipped),
            resampled_values=dict(records.resampled_values),
            stopped=stopped,
            journal=files.journal_report,
            cache=files.cache_report,
            plan=self.basis.prompts.plan,
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
