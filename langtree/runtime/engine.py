"""Run a plan on LangChain chat models: steps as runnables, scheduled by their data flow.

Scheduling is per element (see :class:`~langtree.runtime.waits.InstanceWaits`). A plan
step *opens* (its instances are listed) once every command that the dry run carries out
before it and that reaches its node has been carried out (see
:class:`~langtree.runtime.commands.CommandTracker`); commands themselves still wait for
the steps they read to finish for all their instances. An opened step's instance then
starts as soon as the instances it depends on in its own branch have finished: the
instances of each step it depends on whose indices agree with its own on the list levels
of the two nodes' deepest common ancestor (all of them when that ancestor is the root
task, or the nodes are in different tasks). A section's summary thus starts once its own
paragraphs are done, while another section's paragraphs may still run; a step of
another task fed by an ``@each`` over the sections waits for all of them.
``max_concurrency`` caps the model calls in flight across the whole run.

Each instance's messages are assembled (and their tokens counted) once, from the values
known when it starts, exactly as the dry run assembles them. Before the first call no
prompt is assembled: the dry run's commands are replayed and the root tasks' texts are
scanned for missing external variables (:mod:`langtree.runtime.precheck`). A step that
does not depend on another may start before or after that one finishes, so its context
can differ from run to run in the values of such unrelated steps.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeVar

from pydantic import BaseModel, ValidationError

from langtree.errors import ExecutionError
from langtree.prompts.preview import PromptBuilder, StepPrompt
from langtree.prompts.state import Address, RunState, instance_text, to_plain
from langtree.prompts.template import StepTemplate
from langtree.runtime.call import StepCall, bind_step
from langtree.runtime.commands import CommandTracker
from langtree.runtime.failure import StepFailedError
from langtree.runtime.precheck import missing_external_variables
from langtree.runtime.provenance import ProvenanceLog
from langtree.runtime.provider import LLMProvider
from langtree.runtime.resampling import aggregate, sample
from langtree.runtime.result import RunResult, SkippedInstance, TraceRecord
from langtree.runtime.schema import step_model
from langtree.runtime.waits import InstanceWaits
from langtree.structure.analysis import Analysis, prompt_variable_names
from langtree.structure.known import known_fields, supplied_fields
from langtree.structure.plan import ExecutionPlan, PlanStep
from langtree.structure.registry import NodeRegistry
from langtree.structure.structure import collector_paused
from langtree.structure.tree_node import TreeNode, display_name
from langtree.structure.type_config import TypeMappingConfig

__all__ = ["RunSetup", "execute", "require_provider", "run_blocking"]

DEFAULT_MAX_CONCURRENCY = 16
DEFAULT_MAX_RETRIES = 2

OnError = Literal["raise", "continue"]

_Result = TypeVar("_Result")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSetup:
    """A validated structure, planned for the caller's inputs.

    Attributes:
        registry: The nodes.
        analysis: The validated structure (its data flows).
        plan: The steps for these inputs.
        tasks: The root task classes by tag.
        inputs: The caller's values by root task tag.
        variables: External prompt variables.
        template: The message layout.
        config: How mapped values convert.
        model_names: Model keys to model names, for token counting.
    """

    registry: NodeRegistry
    analysis: Analysis
    plan: ExecutionPlan
    tasks: Mapping[str, type[TreeNode]]
    inputs: Mapping[str, object]
    variables: Mapping[str, object]
    template: StepTemplate
    config: TypeMappingConfig
    model_names: Mapping[str | None, str | None]


def require_provider(provider: object) -> LLMProvider:
    """The run's provider.

    Raises:
        ExecutionError: There is none, or it is not an ``LLMProvider``.
    """
    if isinstance(provider, LLMProvider):
        return provider
    found = "no provider" if provider is None else f"{type(provider).__name__!r} is not a provider"
    raise ExecutionError(
        f"Cannot run: {found}\n"
        "  hint: pass the models when building the structure: "
        "RunStructure(provider=LLMProvider({...}))"
    )


async def execute(
    setup: RunSetup,
    provider: LLMProvider,
    *,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    max_retries: int = DEFAULT_MAX_RETRIES,
    on_error: OnError = "raise",
) -> RunResult:
    """Run every step of the plan and validate the root tasks.

    With ``on_error="continue"`` a step instance that fails after its retries does not
    stop the run: the instances that depend on it are skipped, the others finish, and
    the result lists the failures (``RunResult.errors``) and the skipped instances; a
    task whose values then do not validate raises when it is read from the result.

    Before any model call, the dry run's commands are replayed offline (mapped values
    that do not fit fail here), the root tasks' texts are checked for missing external
    variables without assembling any prompt, and every step's model is taken from the
    provider.

    Raises:
        ExecutionError: A setting is out of range, external variables are missing, a
            command's data does not fit, or the filled tasks do not validate.
        StepFailedError: A step instance gave no valid output in any attempt (with
            ``on_error="raise"``).
        StructureError: A step's model key is not in the provider.
    """
    _check_settings(max_concurrency, max_retries)
    with collector_paused():
        state = RunState.start(setup.registry, setup.inputs)
        log = ProvenanceLog(setup.registry)
        log.record_start(state, setup.inputs)
        builder = _prompt_builder(setup, state)
        builder.missing = missing_external_variables(
            setup.registry,
            setup.analysis,
            setup.plan,
            setup.inputs,
            variables=setup.variables,
            config=setup.config,
        )
        builder.check_missing()
        run = _Run(setup, provider, asyncio.Semaphore(max_concurrency), max_retries, state, builder)
        run.log = log
        run.commands.log = log
        run.on_error = on_error
        await run.all_steps()
        tasks, invalid = run.validated_tasks()
        return RunResult(
            tasks=tasks,
            trace=tuple(run.trace),
            resampled_values=dict(run.resampled_values),
            provenance_records=tuple(log.records),
            errors=tuple(run.errors),
            skipped=tuple(run.skipped),
            partials=copy.deepcopy(state.roots),
            invalid=invalid,
        )


def run_blocking(start: Callable[[], Awaitable[_Result]]) -> _Result:
    """Run a coroutine to completion from synchronous code.

    Inside a running event loop (a Jupyter cell) the coroutine runs on its own loop in a
    worker thread, which this call waits for.
    """

    async def main() -> _Result:
        return await start()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, main()).result()


def _prompt_builder(setup: RunSetup, state: RunState) -> PromptBuilder:
    """Builds the run's prompts from ``state``, as the values become known."""
    flows = list(setup.analysis.flows)
    return PromptBuilder(
        state,
        setup.variables,
        setup.template,
        setup.model_names,
        prompt_names=prompt_variable_names(flows),
        known=known_fields(setup.registry, flows, supplied_fields(setup.registry, setup.inputs)),
    )


def _check_settings(max_concurrency: int, max_retries: int) -> None:
    if max_concurrency < 1:
        raise ExecutionError(
            f"max_concurrency must be at least 1, got {max_concurrency!r}\n"
            "  hint: pass max_concurrency=1 to make one model call at a time"
        )
    if max_retries < 0:
        raise ExecutionError(
            f"max_retries must not be negative, got {max_retries!r}\n"
            "  hint: pass max_retries=0 to call each step once"
        )


class _Run:
    """The state of one run: values, trace, and the steps still to do."""

    def __init__(
        self,
        setup: RunSetup,
        provider: LLMProvider,
        semaphore: asyncio.Semaphore,
        max_retries: int,
        state: RunState,
        builder: PromptBuilder,
    ) -> None:
        self.setup = setup
        self.steps = setup.plan.steps
        self.state = state
        self.trace: list[TraceRecord] = []
        self.resampled_values: dict[tuple[str, str], float] = {}
        flows = list(setup.analysis.flows)
        self.builder = builder
        self.commands = CommandTracker(setup.registry, flows, self.steps)
        self.calls = [
            self._step_call(step, provider, semaphore, max_retries) for step in self.steps
        ]
        self.log: ProvenanceLog | None = None
        self.on_error: OnError = "raise"
        self.errors: list[StepFailedError] = []
        self.skipped: list[SkippedInstance] = []
        self.broken: dict[int, dict[Address, str]] = {}

    def _step_call(
        self, step: PlanStep, provider: LLMProvider, semaphore: asyncio.Semaphore, retries: int
    ) -> StepCall:
        node = self.setup.registry.get(step.node_tag)
        assert node is not None
        model = provider.get(step.model)
        output = step_model(node, step)
        runnable, tool_name = bind_step(model, output)
        return StepCall(
            runnable=runnable,
            tool_name=tool_name,
            output=output,
            model=step.model or provider.default,
            max_retries=retries,
            semaphore=semaphore,
            record=self.trace.append,
        )

    async def all_steps(self) -> None:
        """Start each step instance as soon as it may, until all have finished.

        A step opens (its instances are listed) once the commands it waits for have been
        carried out; each instance then starts once the instances it depends on have
        finished (see :class:`~langtree.runtime.waits.InstanceWaits`). When nothing runs
        and nothing may start, commands that can never be carried out (they wait for each
        other) stop holding back the first step whose steps are done.
        """
        self.commands.apply_ready(self.state, self.setup.config)
        waits = InstanceWaits(self.setup.registry, self.steps)
        closed = list(range(len(self.steps)))
        running: dict[asyncio.Task[None], tuple[int, Address]] = {}
        try:
            while True:
                self._start_what_may(waits, closed, running)
                if not running:
                    if not closed:
                        break
                    fallback = [p for p in closed if waits.deps_finished(p)]
                    assert fallback, "the plan's steps depend only on earlier steps"
                    self._open(waits, closed, fallback[:1])
                    continue
                finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    position, address = running.pop(task)
                    self._outcome(task, position, address)
                    waits.finish(position, address)
                self._settle(waits)
        finally:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)

    def _start_what_may(
        self,
        waits: InstanceWaits,
        closed: list[int],
        running: dict[asyncio.Task[None], tuple[int, Address]],
    ) -> None:
        """Open the steps whose commands are done and start every instance that may,
        until nothing more changes without a model call."""
        while True:
            self._open(waits, closed, [p for p in closed if self.commands.ready_for(p)])
            ready = waits.take_ready()
            if not ready:
                return
            for position, address in ready:
                step = self.steps[position]
                because = self._broken_dependency(waits, position, address)
                if because is not None:
                    self._skip(position, address, because)
                    waits.finish(position, address)
                elif self._due(step, address):
                    prompt = self.builder.build(step, address)
                    task = asyncio.create_task(self._instance(position, address, prompt))
                    running[task] = (position, address)
                else:
                    waits.finish(position, address)
            self._settle(waits)

    def _outcome(self, task: asyncio.Task[None], position: int, address: Address) -> None:
        """Raise what an instance raised, unless it failed and the run continues."""
        error = task.exception()
        if error is None:
            return
        if self.on_error == "continue" and isinstance(error, StepFailedError):
            self.errors.append(error)
            self.broken.setdefault(position, {})[address] = f"{error.step_id} at {error.node_path}"
            return
        raise error

    def _broken_dependency(
        self, waits: InstanceWaits, position: int, address: Address
    ) -> str | None:
        """The failed (or skipped) instance this one depends on, if any."""
        for dep, levels in waits.needs[position]:
            for other, what in self.broken.get(dep, {}).items():
                if other.indices[:levels] == address.indices[:levels]:
                    return what
        return None

    def _skip(self, position: int, address: Address, because: str) -> None:
        step = self.steps[position]
        node_path = instance_text(self.setup.registry, address)
        self.skipped.append(SkippedInstance(step_id=step.id, node_path=node_path, because=because))
        self.broken.setdefault(position, {})[address] = because

    def _open(self, waits: InstanceWaits, closed: list[int], positions: list[int]) -> None:
        """List the instances of steps that may open, and carry out what that settles."""
        for position in positions:
            closed.remove(position)
            waits.open(position, self.state.instances(self.steps[position].node_tag))
        self._settle(waits)

    def _settle(self, waits: InstanceWaits) -> None:
        """Carry out the commands that steps finished for all their instances make ready."""
        for position in waits.take_finished():
            self.commands.finish_step(position, self.state, self.setup.config)

    def _due(self, step: PlanStep, address: Address) -> bool:
        """Whether the instance exists and lacks some of the step's fields."""
        if None in address.indices:
            return False
        values = self.state.instance(address)
        return values is not None and not all(name in values for name in step.fields)

    async def _instance(self, position: int, address: Address, prompt: StepPrompt) -> None:
        step = self.steps[position]
        if step.resample > 1:
            samples, attempts = await sample(self.calls[position], prompt, step.resample)
            parsed = None
            if samples:
                settings = self.setup.analysis.settings.get(step.node_tag)
                combined = aggregate(
                    samples, step.fields, settings.aggregations if settings else {}
                )
                parsed = combined.output
                for name, number in combined.resampled_values.items():
                    self.resampled_values[(prompt.node_path, name)] = number
        else:
            parsed, attempts = await self.calls[position].generate(prompt)
        if parsed is None:
            raise StepFailedError(
                step_id=prompt.step_id,
                node_path=prompt.node_path,
                attempts=tuple(attempts),
                partial=copy.deepcopy(self.state.roots),
                trace=tuple(self.trace),
            )
        written = self._write(address, parsed)
        if self.log is not None and written:
            last = attempts[-1] if attempts else None
            self.log.record_step(
                address,
                written,
                step_id=step.id,
                model=self.calls[position].model,
                prompt_text=prompt.text,
                attempt=len(attempts) if step.resample > 1 else (last.attempt if last else 1),
                sample=step.resample,
            )

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
        self.state.write_generated(address, fresh)
        return fresh

    def validated_tasks(self) -> tuple[dict[str, TreeNode], dict[str, str]]:
        """Each root task's values, validated against its class; with failed steps
        (``on_error="continue"``), why each task that does not validate fails.

        Raises:
            ExecutionError: The values do not validate (e.g. a validator of the class)
                and no step failed.
        """
        tasks: dict[str, TreeNode] = {}
        invalid: dict[str, str] = {}
        for tag, task_class in self.setup.tasks.items():
            try:
                tasks[tag] = task_class.model_validate(self.state.roots[tag])
            except ValidationError as error:
                details = "\n".join(
                    f"  - {'.'.join(str(part) for part in detail['loc'])}: {detail['msg']}"
                    for detail in error.errors(include_url=False)
                )
                if not self.errors:
                    raise ExecutionError(
                        f"The values of {display_name(task_class)!r} do not validate after "
                        f"the run:\n{details}\n"
                        "  hint: check the class's validators against what the steps generate"
                    ) from error
                invalid[tag] = (
                    f"The values of {display_name(task_class)!r} do not validate: "
                    f"{len(self.errors)} step instance(s) failed and {len(self.skipped)} "
                    f"were skipped:\n{details}\n"
                    "  hint: see result.errors and result.skipped; "
                    f"result.partial({display_name(task_class)!r}) gives the values as plain data"
                )
        return tasks, invalid
