"""Every prompt a run would send, assembled offline (the dry run users test against).

Steps come in plan order; a step is shown once per node instance whose fields are not
all known yet. Commands are carried out as the run would, just before the first step that
reads what they send; values that only a model can produce appear as ``[pending: ...]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from langchain_core.messages import BaseMessage

from langtree.errors import ExecutionError
from langtree.prompts.assembly import assemble
from langtree.prompts.dataflow import EXTERNAL, apply_flow
from langtree.prompts.state import Address, RunState, instance_text
from langtree.prompts.template import StepTemplate
from langtree.prompts.tokens import count_tokens
from langtree.prompts.values import Pending
from langtree.structure.analysis import Analysis
from langtree.structure.compatibility import TypeMappingConfig
from langtree.structure.flows import Flow
from langtree.structure.known import field_holder
from langtree.structure.plan import ExecutionPlan, PlanStep
from langtree.structure.registry import NodeRegistry
from langtree.structure.tree import title_from_name

__all__ = ["StepPrompt", "preview_prompts"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StepPrompt:
    """The messages one model call would receive.

    Attributes:
        step_id: The plan step (``<node tag>:<fields>``).
        node_path: The node instance, e.g. ``task.report.sections[0]`` (``[*]`` where
            the elements are not known before the run).
        fields: The fields the call generates.
        messages: The LangChain messages (system, then human).
        text: All messages' content, joined by a blank line.
        token_count: Tokens in ``text``, counted with ``encoding``.
        encoding: The tiktoken encoding used (see :mod:`langtree.prompts.tokens`).
        model: The model key the step uses (``None``: the provider's default).
        variables: Runtime variables by internal name (``prompt__<path>__<name>``).
    """

    step_id: str
    node_path: str
    fields: tuple[str, ...]
    messages: tuple[BaseMessage, ...]
    text: str
    token_count: int
    encoding: str
    model: str | None
    variables: Mapping[str, object]


def preview_prompts(
    registry: NodeRegistry,
    analysis: Analysis,
    plan: ExecutionPlan,
    inputs: Mapping[str, object],
    *,
    variables: Mapping[str, object],
    template: StepTemplate,
    config: TypeMappingConfig,
    model_names: Mapping[str | None, str | None],
) -> list[StepPrompt]:
    """Assemble the prompt of every step instance of the plan.

    Args:
        registry: The nodes.
        analysis: The validated structure (its data flows).
        plan: The steps, in order.
        inputs: The caller's values by root task tag.
        variables: External prompt variables (``{name}`` in root texts).
        template: The message layout.
        config: How mapped values convert.
        model_names: For each model key, the model's name for token counting.

    Raises:
        ExecutionError: External variables are missing, or a command's data does not fit.
    """
    state = RunState.start(registry, inputs)
    waiting = list(analysis.flows)
    prompts: list[StepPrompt] = []
    missing: set[str] = set()
    for step in plan.steps:
        waiting = _apply_ready(state, waiting, step, config)
        for address in state.instances(step.node_tag):
            values = state.instance(address)
            if values is not None and all(_known(values, name) for name in step.fields):
                continue
            prompts.append(_prompt(state, step, address, variables, template, model_names, missing))
            for name in step.fields:
                if values is not None:
                    values[name] = Pending(step.id)
    if missing:
        names = ", ".join(sorted(missing))
        raise ExecutionError(
            f"Missing external variable(s) {names}: pass them with variables={{...}}"
        )
    return prompts


def _known(values: dict[str, object], name: str) -> bool:
    return name in values and not isinstance(values[name], Pending)


def _apply_ready(
    state: RunState, waiting: list[Flow], step: PlanStep, config: TypeMappingConfig
) -> list[Flow]:
    """Carry out the commands that this step's node (or a node above it) reads."""
    above = {node.tag for node in state.registry.path(step.node_tag)}
    still: list[Flow] = []
    for flow in waiting:
        if _consumer_tags(state.registry, flow) & above:
            apply_flow(state, flow, config)
        else:
            still.append(flow)
    return still


def _consumer_tags(registry: NodeRegistry, flow: Flow) -> set[str]:
    if flow.destination is None:
        return {root.tag for root in registry.roots()}
    tags = {flow.destination.node.tag}
    for mapping_flow in flow.mappings:
        if mapping_flow.target is not None:
            tags.add(field_holder(registry, mapping_flow.target).tag)
    return tags


def _prompt(
    state: RunState,
    step: PlanStep,
    address: Address,
    variables: Mapping[str, object],
    template: StepTemplate,
    model_names: Mapping[str | None, str | None],
    missing: set[str],
) -> StepPrompt:
    external = dict(variables) | _external_values(state)
    document = assemble(state.registry, state, address, step.fields, external)
    missing.update(document.missing)
    node_path = instance_text(state.registry, address)
    messages = template.render(
        {
            "document": document.text,
            "fields": [title_from_name(name) for name in step.fields],
            "field_names": list(step.fields),
            "node_path": node_path,
            "step_id": step.id,
        }
    )
    text = "\n\n".join(str(message.content) for message in messages)
    count = count_tokens(text, model_names.get(step.model, step.model))
    return StepPrompt(
        step_id=step.id,
        node_path=node_path,
        fields=step.fields,
        messages=messages,
        text=text,
        token_count=count.count,
        encoding=count.encoding,
        model=step.model,
        variables=document.variables,
    )


def _external_values(state: RunState) -> dict[str, object]:
    return {
        name: values[0] if len(values) == 1 else values
        for (address, name), values in state.prompt_values.items()
        if address == EXTERNAL
    }
