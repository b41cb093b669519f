"""``RunStructure``: the object users build a run with.

It gathers the pipeline's stages behind one name: add root tasks, validate them and plan
the run (the structure stage), assemble its prompts offline (the prompts stage), and run
it on the provider's chat models (the runtime stage).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Protocol

from langchain_core.runnables import Runnable

from langtree.prompts.preview import StepPrompt, preview_prompts
from langtree.prompts.template import StepTemplate
from langtree.runtime.engine import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    RunSetup,
    execute,
    require_provider,
    run_blocking,
)
from langtree.runtime.result import RunResult
from langtree.runtime.runnable import RunInputs, run_runnable
from langtree.structure.config import ConfigInput
from langtree.structure.structure import TreeStructure

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
            "default_modifier": "parallel"}``), a ``TypeMappingConfig``, or ``None``.
        provider: The models that ``llm(...)`` may name; when given, unknown keys are
            reported by :meth:`validate`.

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
        models = provider.list_models() if provider is not None else None
        super().__init__(config, models=models)
        self.provider = provider
        template = self.config.prompt_template
        self._template = StepTemplate(template) if template is not None else StepTemplate()

    def prompts(
        self,
        inputs: Mapping[object, object] | None = None,
        variables: Mapping[str, object] | None = None,
    ) -> list[StepPrompt]:
        """Every prompt the run would send, in plan order, assembled offline.

        A step appears once per node instance known from the inputs (``[*]`` where the
        elements only exist after earlier steps); values that a model would produce first
        appear as ``[pending: produced by step ...]``. Each prompt carries its model's
        token budget when one is configured: check ``prompt.over_budget``
        (``langtree prompts`` flags such prompts and exits with status 1).

        Args:
            inputs: The caller's values by task class or tag (dicts or instances).
            variables: External prompt variables (``{name}`` in root task texts).

        Raises:
            StructureError: The tasks do not validate, or the inputs do not fit them.
            ExecutionError: External variables are missing, or mapped data does not fit.
        """
        plan = self.plan(inputs)
        prompts = preview_prompts(
            self.nodes,
            self._analyse(),
            plan,
            self._inputs_by_tag(inputs or {}),
            variables=variables or {},
            template=self._template,
            config=self.config.type_mapping,
            model_names=self._model_names(),
        )
        return [self._budgeted(prompt) for prompt in prompts]

    def _budgeted(self, prompt: StepPrompt) -> StepPrompt:
        budget = self.config.budget_for(prompt.model or self._default_model())
        return replace(prompt, token_budget=budget) if budget is not None else prompt

    def _default_model(self) -> str | None:
        models = self.provider.list_models() if self.provider is not None else []
        return models[0] if models else None

    def run(
        self,
        inputs: Mapping[object, object] | None = None,
        variables: Mapping[str, object] | None = None,
        *,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        max_retries: int = DEFAULT_MAX_RETRIES,
    ) -> RunResult:
        """Run every step on the provider's models and return the filled tasks.

        Works in scripts and inside a running event loop (a notebook), where the run
        happens on a worker thread. Arguments, errors and result as :meth:`arun`.
        """
        return run_blocking(
            lambda: self.arun(
                inputs, variables, max_concurrency=max_concurrency, max_retries=max_retries
            )
        )

    async def arun(
        self,
        inputs: Mapping[object, object] | None = None,
        variables: Mapping[str, object] | None = None,
        *,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        max_retries: int = DEFAULT_MAX_RETRIES,
    ) -> RunResult:
        """Run every step on the provider's models and return the filled tasks.

        Everything is checked before the first model call: the provider, the tasks, the
        inputs, the external variables and the model keys.

        Args:
            inputs: The caller's values by task class or tag (dicts or instances).
            variables: External prompt variables (``{name}`` in root task texts).
            max_concurrency: The most model calls in flight at once.
            max_retries: How many times a step's invalid output is asked for again.

        Returns:
            Each task's instance (``result[TaskClass]``) and the trace of every call.

        Raises:
            StructureError: The tasks do not validate, the inputs do not fit them, or a
                model key is not in the provider.
            ExecutionError: No provider, missing external variables, mapped data that
                does not fit, or a step whose output stays invalid
                (:class:`~langtree.runtime.StepFailedError`).
        """
        provider = require_provider(self.provider)
        self.validate()
        setup = RunSetup(
            registry=self.nodes,
            analysis=self._analyse(),
            plan=self.plan(inputs),
            tasks=self.tasks,
            inputs=self._inputs_by_tag(inputs or {}),
            variables=variables or {},
            template=self._template,
            config=self.config.type_mapping,
            model_names=self._model_names(),
        )
        return await execute(
            setup,
            provider,
            max_concurrency=max_concurrency,
            max_retries=max_retries,
            on_error=self.config.on_error,
        )

    def build(
        self,
        variables: Mapping[str, object] | None = None,
        *,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        max_retries: int = DEFAULT_MAX_RETRIES,
        name: str = "LangTree run",
    ) -> Runnable[RunInputs, RunResult]:
        """The whole run as a LangChain ``Runnable``: inputs mapping in, ``RunResult`` out.

        Its input is what :meth:`run` takes as ``inputs`` (task classes or tags to the
        caller's values, or ``None``); ``invoke``, ``ainvoke``, ``batch`` and ``abatch``
        run the tree as :meth:`arun` does (a batch runs at most the config's
        ``max_concurrency`` inputs at once). In LangChain tracing each step's model call
        is a child run of the runnable's run.

        Args:
            variables: External prompt variables, the same for every input.
            max_concurrency: The most model calls in flight at once, per input.
            max_retries: How many times a step's invalid output is asked for again.
            name: The run's name in tracing.
        """
        return run_runnable(
            lambda inputs: self.arun(
                inputs, variables, max_concurrency=max_concurrency, max_retries=max_retries
            ),
            name=name,
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
