"""What a run will cost before it starts: calls and input tokens, per step and per model.

``RunStructure.prompts()`` returns `Prompts`, a list of the dry run's step prompts
that also totals them: each prompt is one call per sample (``resample(n)`` makes n), and
each call sends the prompt's tokens and its step's output schema. Retries, and the
elements of lists a model writes (shown once, as ``[*]``), are not known before the run,
so the figures are a lower bound of what the run sends; output tokens are not estimated.

Costs per model are filed under the key of the model a step calls, as the run's
``RunResult.usage.by_model`` files its calls: the key the step's ``llm()`` names, else
the provider's default (its first key), else, before a provider is given,
`DEFAULT_MODEL_KEY`, the key ``langtree run`` gives the model it builds itself.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from langtree._display import code, table
from langtree.prompts._preview import StepPrompt

__all__ = ["DEFAULT_MODEL_KEY", "Cost", "Prompts"]

_Key = TypeVar("_Key", bound=Hashable)

DEFAULT_MODEL_KEY = "default"
"""The key of the model that steps naming none call, when no provider names it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Cost:
    """What a group of prompts costs.

    Attributes:
        prompts: The step instances (prompts) in the group.
        calls: The model calls they make: each prompt once per sample.
        input_tokens: The tokens those calls send: messages, assets and output schemas.
        over_budget: The prompts over their model's token budget.
    """

    prompts: int = 0
    calls: int = 0
    input_tokens: int = 0
    over_budget: int = 0

    def add(self, prompt: StepPrompt) -> Cost:
        """This cost with one more prompt."""
        return Cost(
            prompts=self.prompts + 1,
            calls=self.calls + prompt.samples,
            input_tokens=self.input_tokens + prompt.call_tokens * prompt.samples,
            over_budget=self.over_budget + prompt.over_budget,
        )


class Prompts(list[StepPrompt]):
    """The step prompts of a dry run, in plan order, with what they cost.

    A plain ``list`` of ``StepPrompt`` (indexing, ``len``, iteration work as before), with
    totals: `cost`, `by_step()` and `by_model()`.

    Args:
        prompts: The prompts.
        default_model: The key of the model a step calls when it names none: the
            provider's default.
    """

    def __init__(
        self, prompts: Iterable[StepPrompt] = (), *, default_model: str = DEFAULT_MODEL_KEY
    ) -> None:
        super().__init__(prompts)
        self.default_model = default_model
        """The key of the model a step calls when it names none."""

    def model_of(self, prompt: StepPrompt) -> str:
        """The key of the model ``prompt`` is sent to."""
        return prompt.model or self.default_model

    @property
    def cost(self) -> Cost:
        """The whole run's calls and input tokens."""
        return _summed(self)

    def by_step(self) -> dict[str, Cost]:
        """The cost of each step kind (``step_id``), in plan order."""
        return _grouped(self, lambda prompt: prompt.step_id)

    def by_model(self) -> dict[str, Cost]:
        """The cost per model key (see `model_of()`), first use first: the keys
        ``RunResult.usage.by_model`` files the run's calls under."""
        return _grouped(self, self.model_of)

    def cost_markdown(self) -> str:
        """The costs as Markdown tables: per step, per model, and the total."""
        rows = [[code(step), *_figures(cost)] for step, cost in self.by_step().items()]
        models = [[code(model), *_figures(cost)] for model, cost in self.by_model().items()]
        heads = ["prompts", "calls", "input tokens", "over budget"]
        total = self.cost
        return (
            f"**{total.calls} call(s), {total.input_tokens:,} input tokens** "
            f"({total.prompts} prompt(s); retries and model-written lists add to it)\n\n"
            + table(["step", *heads], rows)
            + "\n\n"
            + table(["model", *heads], models)
        )

    def _repr_markdown_(self) -> str:
        """The notebook display: the cost tables, then each prompt."""
        shown = "\n\n---\n\n".join(prompt._repr_markdown_() for prompt in self)
        return self.cost_markdown() + ("\n\n---\n\n" + shown if shown else "")


def _summed(prompts: Iterable[StepPrompt]) -> Cost:
    cost = Cost()
    for prompt in prompts:
        cost = cost.add(prompt)
    return cost


def _grouped(prompts: Iterable[StepPrompt], key: Callable[[StepPrompt], _Key]) -> dict[_Key, Cost]:
    groups: dict[_Key, Cost] = {}
    for prompt in prompts:
        group = key(prompt)
        groups[group] = groups.get(group, Cost()).add(prompt)
    return groups


def _figures(cost: Cost) -> list[str]:
    return [str(cost.prompts), str(cost.calls), f"{cost.input_tokens:,}", str(cost.over_budget)]
