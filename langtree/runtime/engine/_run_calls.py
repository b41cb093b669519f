"""How a run calls its models: each step's model bound once, and what the calls share.

`RunCalls` is made once the checks before the first call have passed: it takes every
step's model from the provider and binds it to the step's output schema, once for all
the step's instances, and holds what the run's calls share with each other (the cap on
calls in flight, the usage meter, cooldowns, the journal and cache) and, in a dataset,
with the other rows (`langtree.runtime.datasets._shared`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from langchain_core.runnables.config import ensure_config, get_async_callback_manager_for_config

from langtree.runtime.calls._call import CallContext, CallSettings, StepCall
from langtree.runtime.calls._methods import bind_structured
from langtree.runtime.calls._provider import LLMProvider
from langtree.runtime.calls._schema import output_schema
from langtree.runtime.datasets._shared import SharedCalls
from langtree.runtime.durable._answer_files import AnswerFiles
from langtree.runtime.durable._call_key import step_identity
from langtree.runtime.engine._precheck import model_profile
from langtree.runtime.engine._records import RunRecords
from langtree.runtime.engine._setup import RunBasis
from langtree.runtime.faults._cooldown import Cooldown
from langtree.runtime.observe._otel import model_identity
from langtree.structure import PlanStep

__all__ = ["RunCalls"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCalls:
    """How one run calls its models.

    Attributes:
        shared: What the run shares with the other rows of a dataset, or with nobody.
        own: Whether the run opened ``shared`` itself: it then closes the journal and
            cache when it ends, and reports them in its result.
        context: What the run's calls share.
        steps: Each plan step's call, by position (``None``: a transform, computed and
            not called).
    """

    shared: SharedCalls
    own: bool
    context: CallContext
    steps: tuple[StepCall | None, ...]

    @classmethod
    def bind(
        cls,
        basis: RunBasis,
        provider: LLMProvider,
        records: RunRecords,
        shared: SharedCalls | None,
    ) -> RunCalls:
        """Bind every called step's model (``shared``: the dataset's, or ``None`` to open
        the run's own journal and cache).

        Raises:
            ExecutionError: The journal or the cache cannot be opened.
            StructureError: The nodes a step generates whole nest too deep for pydantic
                to build its schema.
        """
        calls = SharedCalls.start(basis.setup.settings, provider) if shared is None else shared
        # A dataset's rows share the cap on calls in flight and the usage meter, so that
        # ``max_concurrency`` and the limits hold across the whole dataset.
        context = CallContext(
            semaphore=calls.semaphore,
            meter=calls.meter,
            record=records.call,
            rng=random.Random(),
            observed=_observed(),
        )
        # Every step is bound before the first call: a model or schema that cannot be had
        # stops the run before anything is paid for.
        steps = tuple(
            _step_call(basis, step, provider, calls, context, records)
            if step.transform is None
            else None
            for step in basis.steps
        )
        return cls(shared=calls, own=shared is None, context=context, steps=steps)

    def of(self, position: int) -> StepCall:
        """The call of the step at ``position``."""
        call = self.steps[position]
        assert call is not None, "transforms are computed, not called"
        return call

    def close_files(self) -> None:
        """Close the journal and cache when the run opened them (once)."""
        if self.own:
            self.shared.close()

    def check_files(self) -> None:
        """Close the run's own journal and cache, their last answers committed, and stop
        the run if a write to them (or to a dataset's) failed.

        Raises:
            JournalWriteError: A write failed.
        """
        self.close_files()
        self.shared.files.check_written()

    def reported_files(self) -> AnswerFiles:
        """The journal and cache the run's result reports: its own; a dataset reports
        those it shares."""
        return self.shared.files if self.own else AnswerFiles()


def _observed() -> bool:
    """Whether callbacks will see the run's calls: the caller's config (``build()``'s
    runnable passes its callbacks through the context), or tracing switched on."""
    return bool(get_async_callback_manager_for_config(ensure_config()).handlers)


def _step_call(
    basis: RunBasis,
    step: PlanStep,
    provider: LLMProvider,
    shared: SharedCalls,
    context: CallContext,
    records: RunRecords,
) -> StepCall:
    """The step's model, bound to its output schema once for all its instances."""
    node = basis.prompts.registry.get(step.node_tag)
    assert node is not None
    key = step.model or provider.default
    config = provider.config(key)
    output, schema = output_schema(node, step, basis.parts)
    settings = basis.setup.settings
    model = provider.get(key)
    files = shared.files.of_model(config)
    if records.otel is not None:
        records.otel.models.setdefault(key, model_identity(key, model))
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
        # A Retry-After pauses every call to the model, across a dataset's rows.
        cooldown=shared.cooldowns.setdefault(key, Cooldown()),
        context=context,
        answer_files=files,
        # Only a journal or cache keys answers by it, and it hashes the model and schema.
        identity=step_identity(key, model, schema, config.method) if files else "",
        profile=model_profile(model),
    )
