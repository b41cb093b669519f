"""Every prompt a run would send, assembled offline (the dry run users test against).

Steps come in plan order; a step is shown once per node instance whose fields are not
all known yet (``[*]``: once for elements that only exist after earlier steps). Each
command is carried out as soon as no later step produces what it reads; values that only
a model can produce appear as ``[pending: produced by step ...]``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage

from langtree.errors import ExecutionError
from langtree.prompts.assembly import assemble
from langtree.prompts.dataflow import EXTERNAL, apply_flow
from langtree.prompts.state import Address, RunState, instance_text
from langtree.prompts.template import StepTemplate
from langtree.prompts.tokens import count_tokens
from langtree.prompts.values import Pending
from langtree.structure.analysis import Analysis, prompt_variable_names
from langtree.structure.compatibility import TypeMappingConfig
from langtree.structure.flows import Flow, TargetScope
from langtree.structure.known import known_fields, supplied_fields
from langtree.structure.plan import ExecutionPlan, PlanStep
from langtree.structure.registry import NodeRegistry
from langtree.structure.tree import Node, NodeField, title_from_name

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
        token_budget: The most tokens the step's model may receive, when configured
            (``RunStructure({"token_budget": ...})``).
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
    token_budget: int | None = None

    @property
    def over_budget(self) -> bool:
        """Whether the prompt needs more tokens than its budget allows."""
        return self.token_budget is not None and self.token_count > self.token_budget


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
        StructureError: The template fails to render.
    """
    state = RunState.start(registry, inputs)
    flows = list(analysis.flows)
    schedule = _FlowSchedule(registry, flows, plan.steps)
    builder = _PromptBuilder(
        state,
        variables,
        template,
        model_names,
        prompt_names=prompt_variable_names(flows),
        known=known_fields(registry, flows, supplied_fields(registry, inputs)),
    )
    prompts: list[StepPrompt] = []
    for position, step in enumerate(plan.steps):
        schedule.apply_ready(state, position, config)
        for address in state.instances(step.node_tag):
            values = state.view(address)
            if values is not None and all(_known(values, name) for name in step.fields):
                continue
            prompts.append(builder.build(step, address))
            state.write_generated(address, {name: Pending(step.id) for name in step.fields})
    builder.check_missing()
    return prompts


def _known(values: Mapping[str, object], name: str) -> bool:
    return name in values and not isinstance(values[name], Pending)


# -- when commands run ------------------------------------------------------------------

_FieldKey = tuple[str, str]
_WRITES: tuple[TargetScope, ...] = ("value",)
_SENDS: tuple[TargetScope, ...] = ("prompt", "outputs", "external")


class _FlowSchedule:
    """Runs each command once everything it reads is settled.

    A command reads the fields on its inclusion and source paths (a node source: the
    node's whole subtree) and the fields that lead to its node; it waits for every later
    step that generates one of them and for every other waiting command that writes one.
    Ready commands write their ``value`` targets first, then send ``prompt`` and
    ``outputs`` values, so that these reach the elements that the writes create.
    """

    def __init__(
        self, registry: NodeRegistry, flows: Sequence[Flow], steps: Sequence[PlanStep]
    ) -> None:
        self.flows = list(flows)
        self.waiting = set(range(len(self.flows)))
        self.reads = [_flow_reads(registry, flow) for flow in self.flows]
        self.readers: dict[_FieldKey, list[int]] = defaultdict(list)
        for index, keys in enumerate(self.reads):
            for key in keys:
                self.readers[key].append(index)
        self.blockers = self._blockers([_flow_writes(registry, flow) for flow in self.flows])
        self.unblocks: dict[int, list[int]] = defaultdict(list)
        for index, blockers in self.blockers.items():
            for blocker in blockers:
                self.unblocks[blocker].append(index)
        self.step_writes = [_step_writes(registry, step) for step in steps]
        self.later: Counter[_FieldKey] = Counter(key for keys in self.step_writes for key in keys)
        self.done_steps = 0
        self.candidates = set(self.waiting)

    def _blockers(self, writes: list[set[_FieldKey]]) -> dict[int, set[int]]:
        """For each command, the other commands that write something it reads."""
        writers: dict[_FieldKey, set[int]] = defaultdict(set)
        for index, keys in enumerate(writes):
            for key in keys:
                writers[key].add(index)
        return {
            index: {other for key in keys for other in writers.get(key, ())} - {index}
            for index, keys in enumerate(self.reads)
        }

    def apply_ready(self, state: RunState, position: int, config: TypeMappingConfig) -> None:
        """Carry out every command ready before the step at ``position``."""
        while self.done_steps < position:
            for key in self.step_writes[self.done_steps]:
                self.later[key] -= 1
                if self.later[key] <= 0:
                    self.candidates.update(self.readers.get(key, ()))
            self.done_steps += 1
        while ready := self._ready():
            flows = [self.flows[index] for index in ready]
            for flow in flows:
                apply_flow(state, flow, config, scopes=_WRITES)
            for flow in flows:
                apply_flow(state, flow, config, scopes=_SENDS)
            self.waiting.difference_update(ready)
            for index in ready:
                self.candidates.update(self.unblocks.get(index, ()))

    def _ready(self) -> list[int]:
        """The waiting commands among the candidates whose reads are all settled."""
        ready = [
            index
            for index in sorted(self.candidates & self.waiting)
            if not any(self.later[key] > 0 for key in self.reads[index])
            and not self.blockers[index] & self.waiting
        ]
        self.candidates.clear()
        return ready


def _flow_reads(registry: NodeRegistry, flow: Flow) -> set[_FieldKey]:
    keys = {(node.parent, node.field_name) for node in registry.path(flow.node.tag)[1:]}
    reads: set[_FieldKey] = {(parent, name) for parent, name in keys if parent and name}
    if flow.inclusion is not None:
        reads |= _path_keys(registry, flow.node, flow.inclusion.fields, whole=False)
    for mapping_flow in flow.mappings:
        source = mapping_flow.source
        if source is None:
            reads |= _subtree_keys(registry, flow.node)
        else:
            reads |= _path_keys(registry, flow.node, source.fields, whole=True)
    return reads


def _flow_writes(registry: NodeRegistry, flow: Flow) -> set[_FieldKey]:
    destination = flow.destination
    if destination is None:
        return set()
    absolute = str(getattr(flow.command.command, "destination_path", "")).startswith("task.")
    start = registry.path(destination.node.tag)[0] if absolute else flow.node
    writes: set[_FieldKey] = set()
    for mapping_flow in flow.mappings:
        if mapping_flow.scope == "value" and mapping_flow.target is not None:
            fields = destination.fields + mapping_flow.target.fields
            writes |= _path_keys(registry, start, fields, whole=True)
    return writes


def _step_writes(registry: NodeRegistry, step: PlanStep) -> set[_FieldKey]:
    node = registry.get(step.node_tag)
    assert node is not None
    writes: set[_FieldKey] = set()
    for name in step.fields:
        writes.add((node.tag, name))
        child = registry.child(node, name)
        if child is not None:
            writes |= _subtree_keys(registry, child)
    return writes


def _path_keys(
    registry: NodeRegistry, start: Node, fields: Iterable[NodeField], *, whole: bool
) -> set[_FieldKey]:
    """The fields along a path from ``start``; ``whole``: a node at its end with its subtree."""
    keys: set[_FieldKey] = set()
    node: Node | None = start
    for node_field in fields:
        if node is None:
            break
        keys.add((node.tag, node_field.name))
        node = registry.child(node, node_field.name)
    if whole and node is not None and node is not start:
        keys |= _subtree_keys(registry, node)
    return keys


def _subtree_keys(registry: NodeRegistry, node: Node) -> set[_FieldKey]:
    keys = {(node.tag, node_field.name) for node_field in node.fields}
    for child in registry.children(node.tag):
        keys |= _subtree_keys(registry, child)
    return keys


# -- one prompt -------------------------------------------------------------------------


class _PromptBuilder:
    """Assembles and renders the prompt of one step instance."""

    def __init__(
        self,
        state: RunState,
        variables: Mapping[str, object],
        template: StepTemplate,
        model_names: Mapping[str | None, str | None],
        *,
        prompt_names: Mapping[str, set[str]],
        known: Mapping[str, set[str]],
    ) -> None:
        self.state = state
        self.variables = variables
        self.template = template
        self.model_names = model_names
        self.prompt_names = prompt_names
        self.known = known
        self.missing: dict[str, set[str]] = {}

    def build(self, step: PlanStep, address: Address) -> StepPrompt:
        external = _external_values(self.state) | dict(self.variables)
        registry = self.state.registry
        document = assemble(
            registry,
            self.state,
            address,
            step.fields,
            external,
            prompt_names=self.prompt_names,
            known=self.known,
        )
        root = registry.path(step.node_tag)[0].tag
        for name in document.missing:
            self.missing.setdefault(name, set()).add(root)
        node_path = instance_text(registry, address)
        messages = self.template.render(
            {
                "document": document.text,
                "fields": [title_from_name(name) for name in step.fields],
                "field_names": list(step.fields),
                "node_path": node_path,
                "step_id": step.id,
            }
        )
        text = "\n\n".join(str(message.content) for message in messages)
        count = count_tokens(text, self.model_names.get(step.model, step.model))
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

    def check_missing(self) -> None:
        """Raise when the root tasks' texts use external variables nobody supplied.

        Raises:
            ExecutionError: Naming every missing variable and the tasks that use it.
        """
        if not self.missing:
            return
        names = sorted(self.missing)
        tasks = sorted({tag for tags in self.missing.values() for tag in tags})
        listed = ", ".join(repr(name) for name in names)
        example = ", ".join(f"{name!r}: ..." for name in names)
        raise ExecutionError(
            f"Missing external variable(s) {listed}: the texts of "
            f"{', '.join(repr(tag) for tag in tasks)} use them and nothing supplies them\n"
            f"  hint: pass variables={{{example}}} to prompts() or run()"
        )


def _external_values(state: RunState) -> dict[str, object]:
    return {
        name: values[0] if len(values) == 1 else values
        for (address, name), values in state.prompt_values.items()
        if address == EXTERNAL
    }
