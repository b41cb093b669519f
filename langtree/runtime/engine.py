"""Run a plan on LangChain chat models: steps as runnables, scheduled by their data flow.

A plan step starts when every step it depends on has finished for all its instances
and every command that the dry run carries out before it has been carried out (see
:class:`~langtree.runtime.commands.CommandTracker`); its instances then run
concurrently. Waiting is per plan step, not per element: an element of a list does not
start before the step it depends on has finished for every element. ``max_concurrency``
caps the model calls in flight across the whole run.

Each instance's messages are assembled exactly as the dry run assembles them, from the
values known when its step starts. A step that does not depend on another may start
before or after that one finishes, so its context can differ from run to run in the
values of such unrelated steps.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from langtree.errors import ExecutionError
from langtree.prompts.preview import PromptBuilder, StepPrompt, preview_prompts
from langtree.prompts.state import Address, RunState, to_plain
from langtree.prompts.template import StepTemplate
from langtree.runtime.call import StepCall
from langtree.runtime.commands import CommandTracker
from langtree.runtime.failure import StepFailedError
from langtree.runtime.provider import LLMProvider
from langtree.runtime.resampling import aggregate, sample
from langtree.runtime.result import RunResult, TraceRecord
from langtree.runtime.schema import step_model, tool_schema
from langtree.structure.analysis import Analysis, prompt_variable_names
from langtree.structure.known import known_fields, supplied_fields
from langtree.structure.plan import ExecutionPlan, PlanStep
from langtree.structure.registry import NodeRegistry
from langtree.structure.tree_node import TreeNode, display_name
from langtree.structure.type_config import TypeMappingConfig

__all__ = ["RunSetup", "execute", "require_provider", "run_blocking"]

DEFAULT_MAX_CONCURRENCY = 16
DEFAULT_MAX_RETRIES = 2

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
) -> RunResult:
    """Run every step of the plan and validate the root tasks.

    Before any model call, the whole run is assembled offline (missing external
    variables and mapped values that do not fit fail here) and every step's model is
    taken from the provider.

    Raises:
        ExecutionError: A setting is out of range, external variables are missing, a
            command's data does not fit, or the filled tasks do not validate.
        StepFailedError: A step instance gave no valid output in any attempt.
        StructureError: A step's model key is not in the provider.
    """
    _check_settings(max_concurrency, max_retries)
    preview_prompts(
        setup.registry,
        setup.analysis,
        setup.plan,
        setup.inputs,
        variables=setup.variables,
        template=setup.template,
        config=setup.config,
        model_names=setup.model_names,
    )
    run = _Run(setup, provider, asyncio.Semaphore(max_concurrency), max_retries)
    await run.all_steps()
    return RunResult(
        tasks=run.validated_tasks(),
        trace=tuple(run.trace),
        resampled_values=dict(run.resampled_values),
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
    ) -> None:
        self.setup = setup
        self.steps = setup.plan.steps
        self.state = RunState.start(setup.registry, setup.inputs)
        self.trace: list[TraceRecord] = []
        self.resampled_values: dict[tuple[str, str], float] = {}
        flows = list(setup.analysis.flows)
        self.builder = PromptBuilder(
            self.state,
            setup.variables,
            setup.template,
            setup.model_names,
            prompt_names=prompt_variable_names(flows),
            known=known_fields(
                setup.registry, flows, supplied_fields(setup.registry, setup.inputs)
            ),
        )
        self.commands = CommandTracker(setup.registry, flows, self.steps)
        self.calls = [
            self._step_call(step, provider, semaphore, max_retries) for step in self.steps
        ]

    def _step_call(
        self, step: PlanStep, provider: LLMProvider, semaphore: asyncio.Semaphore, retries: int
    ) -> StepCall:
        node = self.setup.registry.get(step.node_tag)
        assert node is not None
        model = provider.get(step.model)
        output = step_model(node, step)
        return StepCall(
            runnable=model.with_structured_output(tool_schema(output), include_raw=True),
            output=output,
            model=step.model or provider.default,
            max_retries=retries,
            semaphore=semaphore,
            record=self.trace.append,
        )

    async def all_steps(self) -> None:
        """Start each step as soon as it may, until all have finished."""
        self.commands.apply_ready(self.state, self.setup.config)
        pending = list(range(len(self.steps)))
        done: set[int] = set()
        running: dict[asyncio.Task[None], int] = {}
        try:
            while pending or running:
                for position in self._startable(pending, done, idle=not running):
                    pending.remove(position)
                    running[asyncio.create_task(self._step(position))] = position
                finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    position = running.pop(task)
                    task.result()
                    done.add(position)
                    self.commands.finish_step(position, self.state, self.setup.config)
        finally:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)

    def _startable(self, pending: list[int], done: set[int], *, idle: bool) -> list[int]:
        """The pending steps whose prerequisites are met.

        When nothing runs and no step qualifies, commands that can never be carried out
        (they wait for each other) stop holding back the first step whose steps are done.
        """
        finished = {self.steps[position].id for position in done}
        ready = [p for p in pending if set(self.steps[p].depends_on) <= finished]
        strict = [p for p in ready if self.commands.ready_for(p)]
        return strict or (ready[:1] if idle else [])

    async def _step(self, position: int) -> None:
        step = self.steps[position]
        addresses = [
            address for address in self.state.instances(step.node_tag) if self._due(step, address)
        ]
        prompts = [self.builder.build(step, address) for address in addresses]
        await asyncio.gather(
            *(
                self._instance(position, address, prompt)
                for address, prompt in zip(addresses, prompts, strict=True)
            )
        )

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
        self._write(address, parsed)

    def _write(self, address: Address, parsed: BaseModel) -> None:
        """Store the output; a value the caller supplied meanwhile is kept."""
        values = to_plain(parsed)
        assert isinstance(values, dict)
        current = self.state.instance(address) or {}
        fresh = {name: value for name, value in values.items() if name not in current}
        self.state.write_generated(address, fresh)

    def validated_tasks(self) -> dict[str, TreeNode]:
        """Each root task's values, validated against its class.

        Raises:
            ExecutionError: The values do not validate (e.g. a validator of the class).
        """
        tasks: dict[str, TreeNode] = {}
        for tag, task_class in self.setup.tasks.items():
            try:
                tasks[tag] = task_class.model_validate(self.state.roots[tag])
            except ValidationError as error:
                details = "\n".join(
                    f"  - {'.'.join(str(part) for part in detail['loc'])}: {detail['msg']}"
                    for detail in error.errors(include_url=False)
                )
                raise ExecutionError(
                    f"The values of {display_name(task_class)!r} do not validate after "
                    f"the run:\n{details}\n"
                    "  hint: check the class's validators against what the steps generate"
                ) from error
        return tasks
