"""``RunStructure``: the object users build a run with.

It gathers the pipeline's stages behind one name: add root tasks, validate them and plan
the run (the structure stage), assemble its prompts offline (the prompts stage), and run
it on the provider's chat models (the runtime stage).
"""

from __future__ import annotations

import functools
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Collection,
    Generator,
    Iterator,
    Mapping,
)
from dataclasses import replace
from typing import Protocol, Unpack, cast

from langchain_core.runnables import Runnable, RunnableConfig

from langtree.errors import Diagnostic, ExecutionError, StructureError
from langtree.prompts import (
    DEFAULT_MODEL_KEY,
    Prompts,
    PromptSetup,
    StepPrompt,
    StepTemplate,
    preview_prompts,
    template_source,
)
from langtree.runtime import (
    DEFAULT_NAME,
    RUN_SETTING_KEYS,
    EventSink,
    LLMProvider,
    ProgressBar,
    RowResult,
    Rows,
    RunEvent,
    RunInputs,
    RunOptions,
    RunResult,
    RunSettings,
    RunSetup,
    RunWatch,
    SharedCalls,
    check_asset_support,
    checked_config,
    checked_variables,
    dataset_options,
    execute,
    iterate_async,
    iterate_sync,
    require_provider,
    run_async,
    run_dataset,
    run_interruptible,
    run_runnable,
    schema_tokens,
    stream_events,
)
from langtree.structure import ConfigInput, ExecutionPlan, Node, TreeStructure, task_tag

__all__ = ["ModelCatalog", "RunStructure"]


class ModelCatalog(Protocol):
    """Anything that can list the model keys ``llm(...)`` may name (an ``LLMProvider``)."""

    def list_models(self) -> list[str]:
        """The model keys, the default first."""
        ...


class RunStructure(TreeStructure):
    """Root tasks, checked and planned before a single model call.

    Args:
        config: Settings as a dict (e.g. ``{"validation_strategy": "permissive",
            "default_modifier": "parallel", "call_timeout": 60}``), a
            ``TypeMappingConfig``, or ``None``. The run settings (those of `RunOptions`:
            ``max_concurrency``, ``call_timeout``, ``usage_limits``, ...) are the
            defaults of every run, which ``run(...)`` may override; `prompts()` reads
            assets' files under the structure's own ``asset_folders``.
        provider: The models that ``llm(...)`` may name; when given, unknown keys are
            reported by `validate()`.

    Raises:
        StructureError: A setting is unknown or wrong, or ``provider`` is not a provider
            (every problem is reported).

    Examples:
        >>> from langtree import TreeNode
        >>> class TaskGreet(TreeNode):
        ...     name: str
        ...     greeting: str
        >>> structure = RunStructure()
        >>> structure.add(TaskGreet)
        >>> structure.validate()
        ()
        >>> [step.fields for step in structure.plan({TaskGreet: {"name": "Ada"}}).steps]
        [('greeting',)]
    """

    def __init__(self, config: ConfigInput = None, provider: ModelCatalog | None = None) -> None:
        catalog = _is_catalog(provider)
        models = provider.list_models() if provider is not None and catalog else None
        settings, problems = RunSettings.from_mapping(config if isinstance(config, Mapping) else {})
        wrong = [
            _error(problem, "e.g. RunStructure({'call_timeout': 60, 'retry': {'max_retries': 5}})")
            for problem in problems
        ]
        if not catalog:
            wrong.append(
                _error(
                    f"RunStructure's provider must be an LLMProvider or None, got {provider!r}",
                    "pass the models by key, e.g. "
                    "RunStructure(provider=LLMProvider({'default': ChatOpenAI(...)}))",
                )
            )
        try:
            super().__init__(config, models=models, other_keys=RUN_SETTING_KEYS)
        except StructureError as error:
            raise StructureError([*error.diagnostics, *wrong]) from None
        if wrong:
            raise StructureError(wrong)
        self.settings = settings
        """The settings of every run, from ``config`` (``run(...)`` may override them)."""
        self.provider = provider
        config = self.config
        self._template = StepTemplate(template_source(config.prompt_template, config.instructions))

    def get_node(self, tag: str) -> Node | None:
        """The node at ``tag`` (``task.report.sections``), or ``None``.

        Raises:
            StructureError: ``tag`` is not a string.
        """
        if not isinstance(tag, str):
            raise StructureError([_error(f"get_node() takes a tag, got {tag!r}", _tag_hint(tag))])
        return super().get_node(tag)

    def validate(self, inputs: Mapping[object, object] | None = None) -> tuple[Diagnostic, ...]:
        """Check every rule over all added tasks, with what the caller will supply.

        Args:
            inputs: The caller's values by task class or tag, as for `run()`.
                Without them, every field without a default is checked as generated.

        With an ``LLMProvider``, the assets that the inputs and the defaults hold are
        checked against the profiles of the models that would receive them (a model
        given as a factory is checked when a run builds it; see ``docs/assets.md``).

        Returns:
            The warnings, sorted by location.

        Raises:
            StructureError: Holding every error found, sorted by location; or ``inputs``
                do not fit (as `plan()`); or a step would send its model an asset of
                a kind the model's profile says it lacks.
            ExecutionError: Checking the assets, a command's data does not fit.
        """
        checked = self._checked_inputs(inputs)
        warnings = super().validate(checked)
        if isinstance(self.provider, LLMProvider):
            setup = functools.partial(self._prompt_setup, checked, {})
            check_asset_support(self.nodes, self.provider, setup)
        return warnings

    def plan(self, inputs: Mapping[object, object] | None = None) -> ExecutionPlan:
        """The steps the run would make, in a valid order.

        Args:
            inputs: What the caller will supply, by task class, tag or class name (dicts
                or instances); fields supplied there are not generated.

        Raises:
            StructureError: The tasks do not validate with these inputs, or ``inputs`` is
                not a mapping, names a task twice (e.g. by class and by tag) or no added
                task, or holds values that do not fit (see ``TreeStructure.plan``).
        """
        return super().plan(self._checked_inputs(inputs))

    def prompts(
        self,
        inputs: Mapping[object, object] | None = None,
        variables: Mapping[str, object] | None = None,
    ) -> Prompts:
        """Every prompt the run would send, in plan order, assembled offline.

        A step appears once per node instance known from the inputs (``[*]`` where the
        elements only exist after earlier steps); values that a model would produce first
        appear as ``[pending: produced by step ...]``. Each prompt carries its model's
        token budget when one is configured: check ``prompt.over_budget``
        (``langtree prompts`` flags such prompts and exits with status 1).

        The list also totals what the run will cost before it starts: ``prompts.cost``
        (calls, counting ``resample(n)``, and input tokens), ``prompts.by_step()`` and
        ``prompts.by_model()``, by the keys the run's usage reports (a step that names no
        model under the provider's default key, ``"default"`` without a provider);
        retries and the elements of lists a model writes come on top.

        Args:
            inputs: The caller's values by task class or tag (dicts or instances).
            variables: External prompt variables (``{name}`` in root task texts).

        Raises:
            StructureError: The tasks do not validate, or the inputs do not fit them
                (as `plan()`).
            ExecutionError: ``variables`` is not a mapping of names, external variables
                are missing, or mapped data does not fit.
        """
        checked = self._checked_inputs(inputs)
        setup = self._prompt_setup(checked, checked_variables(variables))
        schemas = schema_tokens(setup)
        return Prompts(
            (
                self._budgeted(replace(prompt, schema_tokens=schemas.get(prompt.step_id)))
                for prompt in preview_prompts(setup)
            ),
            default_model=self._default_model(),
        )

    def _prompt_setup(
        self,
        inputs: Mapping[object, object],
        variables: Mapping[str, object],
        settings: RunSettings | None = None,
    ) -> PromptSetup:
        """The tasks planned for checked inputs, with what their prompts show.

        Args:
            inputs: The caller's values.
            variables: The external variables.
            settings: The run's settings, for the files assets come from (``None``: the
                structure's).

        Raises:
            StructureError: The tasks do not validate with these inputs.
        """
        return PromptSetup(
            registry=self.nodes,
            analysis=self._analyse(),
            plan=self.plan(inputs),
            inputs=self._inputs_by_tag(inputs),
            variables=variables,
            template=self._template,
            config=self.config.type_mapping,
            model_names=self._model_names(),
            shape=self.config.shape,
            asset_files=(settings or self.settings).asset_files,
        )

    def _budgeted(self, prompt: StepPrompt) -> StepPrompt:
        budget = self.config.budget_for(prompt.model or self._default_model())
        return replace(prompt, token_budget=budget) if budget is not None else prompt

    def _default_model(self) -> str:
        """The key of the model a step that names none calls (see `Prompts.model_of()`)."""
        models = self.provider.list_models() if self.provider is not None else []
        return models[0] if models else DEFAULT_MODEL_KEY

    def run(
        self,
        inputs: Mapping[object, object] | None = None,
        variables: Mapping[str, object] | None = None,
        *,
        config: RunnableConfig | None = None,
        progress: bool = False,
        **options: Unpack[RunOptions],
    ) -> RunResult:
        """Run every step on the provider's models and return the filled tasks.

        Works in scripts and inside a running event loop (a notebook): the run happens on
        LangTree's own event loop, the same for every run of the process (`arun()`'s
        too), so clients that keep connections bound to a loop (httpx) work run after
        run, before and after an `arun()`. Ctrl-C stops
        the run within a second: no call starts after it, calls in flight are
        cancelled, and `RunInterrupted` (a ``KeyboardInterrupt``) carries what had
        finished. Arguments, errors and result as `arun()`.
        """
        config = self._with_progress(inputs, variables, config, progress)
        if config is not None:
            return self._traced(variables, options).invoke(inputs, checked_config(config))
        return run_interruptible(lambda watch: self._arun(inputs, variables, options, watch))

    async def arun(
        self,
        inputs: Mapping[object, object] | None = None,
        variables: Mapping[str, object] | None = None,
        *,
        config: RunnableConfig | None = None,
        progress: bool = False,
        **options: Unpack[RunOptions],
    ) -> RunResult:
        """Run every step on the provider's models and return the filled tasks.

        Everything is checked before the first model call: the provider, the tasks, the
        inputs, the external variables, the settings and the model keys. The run happens
        on LangTree's own event loop, where `run()` runs too, while the caller's loop
        awaits it: clients that bind their connections to the loop of their first call
        (httpx, and so ``ChatOpenAI``) keep working after the caller's loop is closed
        (``asyncio.run``) and in a later `run()`. Cancelling the caller cancels the run.

        Args:
            inputs: The caller's values by task class or tag (dicts or instances).
            variables: External prompt variables (``{name}`` in root task texts).
            config: A LangChain ``RunnableConfig`` (``callbacks``, ``tags``,
                ``metadata``, ``run_name``): the run is then one traced run (in
                LangSmith, one trace) named ``run_name`` (default ``"LangTree run"``),
                with every model call a child run, as `build()`'s runnable does.
            progress: Show a progress bar of the run's calls (in a notebook, an output
                line updated in place; elsewhere a line on stderr), counting from the
                calls ``prompts()`` expects (``langtree.runtime.ProgressBar``).
            **options: Settings of this run, overriding the config's: the keys of
                `RunOptions`, e.g. ``max_concurrency=8``, ``call_timeout=60``,
                ``usage_limits=UsageLimits(calls=500)``.

        Returns:
            Each task's instance (``result[TaskClass]``), the trace of every call, and
            the run's usage.

        Raises:
            StructureError: The tasks do not validate, the inputs do not fit them (as
                `plan()`), or a model key is not in the provider.
            ExecutionError: No provider, an unknown or wrong setting, ``variables`` not
                a mapping of names, ``config`` not a mapping, missing external
                variables, an asset's file that may not be read, mapped data that does
                not fit, a transform that fails, or values that do not validate after
                the run. Raised once the run has
                started, it holds what had finished in ``error.result``.
            StepFailedError: A step instance got no usable output.
            RunLimitError: The deadline or a usage limit was reached.
        """
        config = self._with_progress(inputs, variables, config, progress)
        if config is not None:
            traced = self._traced(variables, options)
            return await traced.ainvoke(inputs, checked_config(config))
        return await self._arun(inputs, variables, options)

    def stream(
        self,
        inputs: Mapping[object, object] | None = None,
        variables: Mapping[str, object] | None = None,
        **options: Unpack[RunOptions],
    ) -> Iterator[RunEvent]:
        """Run as `run()` does, handing out what the run writes as it writes it.

        Runs on LangTree's own event loop, as `run()` does; stopping the iteration
        (or Ctrl-C) cancels the run. Arguments, events and errors as `astream()`.
        """
        return iterate_sync(self._events(inputs, variables, options))

    def astream(
        self,
        inputs: Mapping[object, object] | None = None,
        variables: Mapping[str, object] | None = None,
        **options: Unpack[RunOptions],
    ) -> AsyncIterator[RunEvent]:
        """Run as `arun()` does: ``async for event in structure.astream(inputs)``.

        Events come as the tree fills, at node granularity (every value is validated,
        none is half-parsed): ``StepFinished`` for each step instance (its values, and
        the partial tree so far), ``ValueMapped`` for each value an ``@each``/``@all``
        mapping writes, ``StepFailed`` for a failure the run goes on after
        (``on_error="continue"``), and last ``RunFinished`` with the ``RunResult``. The
        values are JSON data, as ``RunResult.dump()`` shows them, and ``event.to_dict()``
        is the whole event as JSON data. See ``langtree.runtime.observe._events``.

        Raises:
            ExecutionError: Raised here, before the run: no provider, a wrong setting,
                ``variables`` not a mapping of names. While iterating: what
                `arun()` raises, after the events that came before.
        """
        return iterate_async(self._events(inputs, variables, options))

    def _events(
        self, inputs: object, variables: Mapping[str, object] | None, options: RunOptions
    ) -> AsyncGenerator[RunEvent, None]:
        """The run's events, every argument checked first."""
        checked = self._checked_inputs(inputs)
        named = checked_variables(variables)
        provider = require_provider(self.provider)
        self.settings.updated(**options)
        return stream_events(
            lambda sink: self._execute(provider, checked, named, options, events=sink)
        )

    async def _arun(
        self,
        inputs: object,
        variables: Mapping[str, object] | None,
        options: RunOptions,
        watch: RunWatch | None = None,
    ) -> RunResult:
        """Run on LangTree's own loop, where every run drives the models (``runtime.loop``)."""
        checked = self._checked_inputs(inputs)
        named = checked_variables(variables)
        provider = require_provider(self.provider)
        return await run_async(lambda: self._execute(provider, checked, named, options, watch))

    async def _execute(
        self,
        provider: LLMProvider,
        inputs: Mapping[object, object],
        variables: Mapping[str, object],
        options: RunOptions,
        watch: RunWatch | None = None,
        events: EventSink | None = None,
    ) -> RunResult:
        setup = self._run_setup(inputs, variables, self.settings.updated(**options))
        return await execute(setup, provider, watch, events=events)

    def _run_setup(
        self,
        inputs: Mapping[object, object],
        variables: Mapping[str, object],
        settings: RunSettings,
    ) -> RunSetup:
        return RunSetup(
            prompts=self._prompt_setup(inputs, variables, settings),
            tasks=self.tasks,
            settings=settings,
            on_error=self.config.on_error,
        )

    def run_many(
        self,
        rows: Rows,
        variables: Mapping[str, object] | None = None,
        *,
        ordered: bool = True,
        rows_in_flight: int | None = None,
        skip: Collection[int] = (),
        on_row: Callable[[RowResult], object] | None = None,
        **options: Unpack[RunOptions],
    ) -> Generator[RowResult, None, None]:
        """Run the tree once per row of inputs, handing out each row's result as it is
        ready; arguments, errors and behaviour as `arun_many()`.

        Runs on LangTree's own event loop, as `run()` does; Ctrl-C cancels the rows
        in flight (their finished calls are in the journal, when there is one) and
        raises ``KeyboardInterrupt``. Leaving the loop early, or ``close()``, cancels
        them too: close an iteration you leave by an exception
        (``with contextlib.closing(structure.run_many(rows)) as results:``).
        """
        return iterate_sync(
            self._dataset(rows, variables, ordered, rows_in_flight, skip, on_row, options)
        )

    def arun_many(
        self,
        rows: Rows,
        variables: Mapping[str, object] | None = None,
        *,
        ordered: bool = True,
        rows_in_flight: int | None = None,
        skip: Collection[int] = (),
        on_row: Callable[[RowResult], object] | None = None,
        **options: Unpack[RunOptions],
    ) -> AsyncIterator[RowResult]:
        """Run the tree once per row of inputs: ``async for row in
        structure.arun_many(rows)``.

        Rows are read lazily and run concurrently, and the rows share the run's
        settings: ``max_concurrency`` caps the model calls of all rows together,
        ``usage_limits`` hold for the whole dataset, and one journal (or cache) serves
        every row, so a dataset run that stopped resumes without repeating a finished
        call. A row that fails does not stop the others: its ``RowResult`` holds the
        error. ``deadline`` applies to each row.

        Args:
            rows: Each row is what `run()` takes as ``inputs``; any iterable or
                async iterable (a generator reading a file keeps memory flat).
            variables: External prompt variables, the same for every row.
            ordered: Hand rows out in input order; ``False``: as they finish.
            rows_in_flight: The most rows started and not yet handed out (default:
                twice ``max_concurrency``); memory is bounded by it.
            skip: Positions of rows not to run (e.g. those an earlier run wrote out),
                counted from 0. A negative position, or one past the last row of rows
                whose length is known (a list), is refused at once; past the last row
                of rows of unknown length (a generator), once they are exhausted.
            on_row: Called with each row's result as soon as it finishes (in input
                order, before the earlier rows are handed out): a progress bar.
            **options: Settings as `arun()` takes them (`RunOptions`).

        Returns:
            The rows' results (``RowResult``: ``index``, ``result``, ``error``).

        Raises:
            ExecutionError: Raised here, before any row: no provider, a wrong setting,
                ``variables`` not a mapping of names, ``rows`` not an iterable of
                inputs, a wrong ``rows_in_flight`` or ``skip``. While iterating: the
                journal or cache cannot be opened or written. After the last row:
                ``skip`` holds positions past it (rows of unknown length).
            RunLimitError: A usage limit was reached; raised after the rows in flight
                are handed out.
        """
        return iterate_async(
            self._dataset(rows, variables, ordered, rows_in_flight, skip, on_row, options)
        )

    def _dataset(
        self,
        rows: Rows,
        variables: Mapping[str, object] | None,
        ordered: bool,
        rows_in_flight: int | None,
        skip: Collection[int],
        on_row: Callable[[RowResult], object] | None,
        options: RunOptions,
    ) -> AsyncGenerator[RowResult, None]:
        """The dataset's rows as they are run, every argument checked first."""
        named = checked_variables(variables)
        provider = require_provider(self.provider)
        settings = self.settings.updated(**options)
        dataset = dataset_options(
            rows,
            ordered=ordered,
            rows_in_flight=2 * settings.max_concurrency
            if rows_in_flight is None
            else rows_in_flight,
            skip=skip,
            on_row=on_row,
        )

        async def run_row(inputs: object, shared: SharedCalls) -> RunResult:
            setup = self._run_setup(self._checked_inputs(inputs), named, settings)
            return await execute(setup, provider, shared=shared)

        return run_dataset(rows, run_row, settings, provider, dataset)

    def build(
        self,
        variables: Mapping[str, object] | None = None,
        *,
        name: str = DEFAULT_NAME,
        **options: Unpack[RunOptions],
    ) -> Runnable[RunInputs, RunResult]:
        """The whole run as a LangChain ``Runnable``: inputs mapping in, ``RunResult`` out.

        Its input is what `run()` takes as ``inputs`` (task classes or tags to the
        caller's values, or ``None``); ``invoke``, ``ainvoke``, ``batch`` and ``abatch``
        run the tree as `run()` and `arun()` do (a batch runs at most the
        config's ``max_concurrency`` inputs at once). In LangChain tracing each step's
        model call is a child run of the runnable's run.

        Args:
            variables: External prompt variables, the same for every input.
            name: The run's name in tracing.
            **options: Settings of every run, as `arun()` takes them (`RunOptions`; e.g.
                ``max_concurrency``: the most model calls in flight, per input).

        Raises:
            ExecutionError: ``variables`` is not a mapping of names, ``name`` is not a
                string, or a setting is unknown or wrong (checked here, not on the first
                ``invoke``).
        """
        checked_variables(variables)
        self.settings.updated(**options)
        if not isinstance(name, str):
            raise ExecutionError(
                f"build() takes a string name, got {name!r}\n  hint: e.g. build(name='review run')"
            )
        return self._traced(variables, options, name=name)

    def _with_progress(
        self,
        inputs: Mapping[object, object] | None,
        variables: Mapping[str, object] | None,
        config: RunnableConfig | None,
        progress: bool,
    ) -> RunnableConfig | None:
        """``config`` with a progress bar among its callbacks, when one is asked for."""
        if not progress:
            return config
        bar = ProgressBar(self.prompts(inputs, variables).cost.calls)
        given = dict(checked_config(config)) if config is not None else {}
        callbacks = given.get("callbacks")
        if callbacks is not None and not isinstance(callbacks, list):
            raise ExecutionError(
                "progress=True adds its bar to a list of callbacks, not to a callback "
                "manager\n  hint: pass config={'callbacks': [handler, ...]}"
            )
        given["callbacks"] = [*(callbacks or []), bar]
        return cast(RunnableConfig, given)

    def _traced(
        self,
        variables: Mapping[str, object] | None,
        options: RunOptions,
        *,
        name: str = DEFAULT_NAME,
    ) -> Runnable[RunInputs, RunResult]:
        """The run as a runnable whose LangChain run is the parent of every model call."""
        return run_runnable(
            lambda inputs, watch: self._arun(inputs, variables, options, watch), name=name
        )

    def _model_names(self) -> dict[str | None, str | None]:
        """Model keys to model names (for token counting), as far as the provider tells."""
        if self.provider is None:
            return {}
        keys = self.provider.list_models()
        names: dict[str | None, str | None] = {key: key for key in keys}
        if keys:
            names[None] = keys[0]
        return names


def _is_catalog(provider: object) -> bool:
    """``None``, or an object (not a class) that lists its model keys, as ``LLMProvider``."""
    if provider is None:
        return True
    return not isinstance(provider, type) and callable(getattr(provider, "list_models", None))


def _tag_hint(value: object) -> str:
    name = value.__name__ if isinstance(value, type) else ""
    tag = task_tag(name)
    if tag is not None:
        return f"pass the task's tag: get_node({tag!r})"
    return "pass the node's tag as a string, e.g. get_node('task.report.sections')"


def _error(message: str, hint: str) -> Diagnostic:
    return Diagnostic(severity="error", message=message, hint=hint)
