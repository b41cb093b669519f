"""The execution plan: every step, what it waits for, in a valid order (DESIGN D3, D4).

Dependencies come from three places: the declared order (``@sequential`` fields, and a
known node field's subtree within its parent's sequence), data flows (a command's
destination waits for the data it reads), and runtime variables (a prompt that shows a
generated field waits for it). A dependency against the declared order, or a cycle, is a
diagnostic; in a ``@parallel`` node, fields that need a sibling move to a follow-up step.
"""

from __future__ import annotations

import itertools
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TypeAlias

from langtree.dsl.commands import Modifier
from langtree.errors import Diagnostic
from langtree.structure.flows import Flow
from langtree.structure.placeholders import find_placeholders
from langtree.structure.registry import NodeRegistry, ResolvedPath
from langtree.structure.steps import StepDraft, element_path
from langtree.structure.tree import Node, NodeCommand

__all__ = ["ExecutionPlan", "PlanStep", "build_plan"]

FieldKey: TypeAlias = tuple[str, str]
"""A field of a node: (node tag, field name)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanStep:
    """One kind of structured-output call.

    Attributes:
        id: ``<node tag>:<fields>``, unique in the plan.
        node_tag: The node whose fields the step generates.
        element_path: The tag with ``[*]`` for each list the node lies in.
        fields: The generated fields, in declaration order.
        modifier: The node's modifier.
        model: The model key (``None``: the provider's default).
        resample: How many times each call is made (1: once).
        list_levels: How many lists the node lies in: 0 means one call; otherwise one
            call per element, known only when the data is.
        depends_on: The ids of the steps that must finish first.
    """

    id: str
    node_tag: str
    element_path: str
    fields: tuple[str, ...]
    modifier: Modifier
    model: str | None
    resample: int
    list_levels: int
    depends_on: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionPlan:
    """The steps of a run, each after the steps it depends on."""

    steps: tuple[PlanStep, ...]

    def step(self, step_id: str) -> PlanStep:
        """The step with ``step_id``.

        Raises:
            KeyError: No such step.
        """
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)

    def to_mermaid(self) -> str:
        """The plan as a Mermaid flowchart, one box per step, arrows from prerequisites."""
        names = {step.id: f"s{index}" for index, step in enumerate(self.steps)}
        lines = ["flowchart TD"]
        for step in self.steps:
            label = f"{step.element_path}<br/>{', '.join(step.fields)}"
            extras = [f"model: {step.model}"] if step.model else []
            extras += [f"resample: {step.resample}"] if step.resample > 1 else []
            if extras:
                label += "<br/>" + ", ".join(extras)
            lines.append(f'    {names[step.id]}["{label}"]')
        for step in self.steps:
            lines.extend(f"    {names[dep]} --> {names[step.id]}" for dep in step.depends_on)
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class _Need:
    """``consumer`` (a field, or ``None`` for the whole node) waits for ``producer``."""

    consumer: tuple[str, str | None]
    producer: FieldKey
    command: NodeCommand | None


def build_plan(
    registry: NodeRegistry, drafts: list[StepDraft], flows: list[Flow]
) -> tuple[ExecutionPlan, list[Diagnostic]]:
    """Order the drafted steps by their dependencies."""
    builder = _PlanBuilder(registry, drafts)
    needs = list(_flow_needs(flows)) + list(_placeholder_needs(registry, builder.drafts))
    builder.split_parallel(needs)
    builder.add_declared_order()
    builder.add_needs(needs)
    return builder.finish()


def _flow_needs(flows: list[Flow]) -> Iterator[_Need]:
    for flow in flows:
        consumers = list(_flow_consumers(flow))
        for mapping_flow in flow.mappings:
            producers = (
                _subtree_keys(flow.node)
                if mapping_flow.source is None
                else _path_keys(mapping_flow.source)
            )
            for producer in producers:
                for consumer in consumers:
                    yield _Need(consumer, producer, flow.command)


def _flow_consumers(flow: Flow) -> Iterator[tuple[str, str | None]]:
    destination = flow.destination
    if destination is None:
        return
    for mapping_flow in flow.mappings:
        if mapping_flow.scope == "value" and mapping_flow.target is not None:
            yield (_holder_tag(mapping_flow.target), None)
        elif destination.field is not None and destination.field.shape.node_class is None:
            yield (destination.node.tag, destination.field.name)
        else:
            yield (destination.node.tag, None)


def _holder_tag(resolved: ResolvedPath) -> str:
    node = resolved.node
    if resolved.field is not None and resolved.field.shape.node_class is not None:
        return node.parent or node.tag
    return node.tag


def _path_keys(resolved: ResolvedPath) -> list[FieldKey]:
    if resolved.field is None:
        return _subtree_keys(resolved.node)
    keys = [(_holder_tag(resolved), resolved.field.name)]
    if resolved.field.shape.node_class is not None:
        keys += _subtree_keys(resolved.node)
    return keys


def _subtree_keys(node: Node) -> list[FieldKey]:
    return [(node.tag, f.name) for f in node.fields]


def _placeholder_needs(registry: NodeRegistry, drafts: list[StepDraft]) -> Iterator[_Need]:
    for draft in drafts:
        node = registry.get(draft.node_tag)
        assert node is not None
        texts = [(ancestor, ancestor.text) for ancestor in _path_to(registry, node)]
        texts += [(node, node.field(name).description) for name in draft.fields]  # type: ignore[union-attr]
        for holder, text in texts:
            for placeholder in find_placeholders(text):
                producer = _field_above(registry, holder, placeholder.name)
                if producer is not None:
                    yield _Need((draft.node_tag, draft.fields[0]), producer, None)


def _path_to(registry: NodeRegistry, node: Node) -> list[Node]:
    path = []
    current: Node | None = node
    while current is not None:
        path.append(current)
        current = registry.get(current.parent) if current.parent else None
    return list(reversed(path))


def _field_above(registry: NodeRegistry, node: Node, name: str) -> FieldKey | None:
    for holder in reversed(_path_to(registry, node)):
        if holder.field(name) is not None:
            return (holder.tag, name)
    return None


class _PlanBuilder:
    def __init__(self, registry: NodeRegistry, drafts: list[StepDraft]) -> None:
        self.registry = registry
        self.drafts = drafts
        self.edges: dict[str, dict[str, NodeCommand | None]] = defaultdict(dict)
        self.diagnostics: list[Diagnostic] = []
        self._index()

    def _index(self) -> None:
        self.by_node: dict[str, list[StepDraft]] = defaultdict(list)
        self.producer: dict[FieldKey, StepDraft] = {}
        for draft in self.drafts:
            self.by_node[draft.node_tag].append(draft)
        for draft in self.drafts:
            for name in draft.fields:
                self._claim(draft.node_tag, name, draft)

    def _claim(self, tag: str, name: str, draft: StepDraft) -> None:
        """``draft`` produces the field, and everything under it when it is a node field."""
        self.producer.setdefault((tag, name), draft)
        node = self.registry.get(tag)
        child = self.registry.child(node, name) if node else None
        if child is not None:
            for node_field in child.fields:
                self._claim(child.tag, node_field.name, draft)

    # -- parallel follow-ups -----------------------------------------------------------

    def split_parallel(self, needs: list[_Need]) -> None:
        """Move fields of a parallel step that need a sibling into follow-up steps."""
        inside: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for need in needs:
            step = self._consumer_steps(need.consumer)
            for draft in step:
                if draft.modifier == "parallel" and need.producer[0] == draft.node_tag:
                    fields = draft.fields if need.consumer[1] is None else (need.consumer[1],)
                    for name in fields:
                        if (
                            name in draft.fields
                            and need.producer[1] in draft.fields
                            and name != need.producer[1]
                        ):
                            inside[draft.id][name].add(need.producer[1])
        if not inside:
            return
        self.drafts = [
            split
            for draft in self.drafts
            for split in self._layers(draft, inside.get(draft.id, {}))
        ]
        self._index()

    def _layers(self, draft: StepDraft, needs: dict[str, set[str]]) -> list[StepDraft]:
        if not needs:
            return [draft]
        layers: list[list[str]] = []
        placed: set[str] = set()
        remaining = list(draft.fields)
        while remaining:
            layer = [name for name in remaining if needs.get(name, set()) <= placed]
            if not layer:
                layer = remaining
            layers.append(layer)
            placed.update(layer)
            remaining = [name for name in remaining if name not in placed]
        return [replace(draft, fields=tuple(layer)) for layer in layers]

    # -- edges ---------------------------------------------------------------------------

    def add_declared_order(self) -> None:
        """Chain a sequential node's steps, and order subtrees within sequential ancestors."""
        for tag, drafts in self.by_node.items():
            if drafts[0].modifier == "sequential":
                for earlier, later in itertools.pairwise(drafts):
                    self.edges[later.id].setdefault(earlier.id, None)
            self._order_against_ancestors(tag, drafts)

    def _order_against_ancestors(self, tag: str, drafts: list[StepDraft]) -> None:
        node = self.registry.get(tag)
        assert node is not None
        while node.parent is not None:
            parent = self.registry.get(node.parent)
            assert parent is not None
            ancestor_drafts = self.by_node.get(parent.tag, [])
            if ancestor_drafts and ancestor_drafts[0].modifier == "sequential":
                position = [f.name for f in parent.fields].index(node.field_name or "")
                for ancestor_draft in ancestor_drafts:
                    for draft in drafts:
                        if ancestor_draft.position < position:
                            self.edges[draft.id].setdefault(ancestor_draft.id, None)
                        else:
                            self.edges[ancestor_draft.id].setdefault(draft.id, None)
            node = parent

    def add_needs(self, needs: list[_Need]) -> None:
        for need in needs:
            producer = self.producer.get(need.producer)
            if producer is None:
                continue
            for consumer in self._consumer_steps(need.consumer):
                if consumer.id == producer.id:
                    continue
                if self._against_order(consumer, producer, need):
                    continue
                self.edges[consumer.id].setdefault(producer.id, need.command)

    def _consumer_steps(self, consumer: tuple[str, str | None]) -> list[StepDraft]:
        drafts = self.by_node.get(consumer[0], [])
        if consumer[1] is None:
            return drafts
        return [draft for draft in drafts if consumer[1] in draft.fields]

    def _against_order(self, consumer: StepDraft, producer: StepDraft, need: _Need) -> bool:
        if consumer.node_tag != producer.node_tag or consumer.modifier != "sequential":
            return False
        if producer.position < consumer.position:
            return False
        node = self.registry.get(consumer.node_tag)
        assert node is not None
        message = (
            f"In @sequential {node.node_class.__qualname__!r}, {consumer.fields[0]!r} needs "
            f"{producer.fields[0]!r}, which is generated after it"
        )
        hint = (
            f"declare {producer.fields[0]!r} before {consumer.fields[0]!r}, make the node "
            "@parallel, or give the field a value"
        )
        self.diagnostics.append(self._diagnostic(node, need.command, message, hint))
        return True

    def _diagnostic(
        self, node: Node, command: NodeCommand | None, message: str, hint: str
    ) -> Diagnostic:
        if command is not None:
            return command.diagnostic(message, hint=hint)
        return Diagnostic(
            severity="error",
            message=message,
            hint=hint,
            class_name=node.origin.class_name,
            file=node.origin.file,
            line=node.origin.line,
        )

    # -- ordering ------------------------------------------------------------------------

    def finish(self) -> tuple[ExecutionPlan, list[Diagnostic]]:
        order, cycles = _topological_order([d.id for d in self.drafts], self.edges)
        for cycle in cycles:
            self.diagnostics.append(self._cycle_diagnostic(cycle))
        by_id = {draft.id: draft for draft in self.drafts}
        steps = tuple(self._step(by_id[step_id]) for step_id in order)
        return ExecutionPlan(steps=steps), self.diagnostics

    def _step(self, draft: StepDraft) -> PlanStep:
        node = self.registry.get(draft.node_tag)
        assert node is not None
        return PlanStep(
            id=draft.id,
            node_tag=draft.node_tag,
            element_path=element_path(self.registry, draft.node_tag),
            fields=draft.fields,
            modifier=draft.modifier,
            model=draft.model,
            resample=draft.resample,
            list_levels=sum(n.list_depth for n in _path_to(self.registry, node)),
            depends_on=tuple(sorted(self.edges.get(draft.id, {}))),
        )

    def _cycle_diagnostic(self, cycle: list[str]) -> Diagnostic:
        tags = list(dict.fromkeys(step_id.split(":")[0] for step_id in cycle))
        command = next(
            (self.edges[a][b] for a in cycle for b in cycle if self.edges.get(a, {}).get(b)),
            None,
        )
        node = self.registry.get(tags[0])
        assert node is not None
        message = "Dependency cycle: " + " -> ".join([*cycle, cycle[0]])
        hint = "every node on the cycle waits for another: remove one of the commands " + (
            "or runtime variables that link " + ", ".join(repr(tag) for tag in tags)
        )
        return self._diagnostic(node, command, message, hint)


def _topological_order(
    ids: Iterable[str], edges: dict[str, dict[str, NodeCommand | None]]
) -> tuple[list[str], list[list[str]]]:
    """Kahn's algorithm in declaration order; what is left over holds the cycles."""
    ids = list(ids)
    known = set(ids)
    waiting = {step_id: set(edges.get(step_id, {})) & known for step_id in ids}
    dependants: dict[str, list[str]] = defaultdict(list)
    for step_id, prerequisites in waiting.items():
        for prerequisite in prerequisites:
            dependants[prerequisite].append(step_id)
    ready = deque(step_id for step_id in ids if not waiting[step_id])
    order: list[str] = []
    while ready:
        step_id = ready.popleft()
        order.append(step_id)
        for dependant in dependants[step_id]:
            waiting[dependant].discard(step_id)
            if not waiting[dependant]:
                ready.append(dependant)
    done = set(order)
    left = [step_id for step_id in ids if step_id not in done]
    return order, _cycles(left, waiting)


def _cycles(left: list[str], waiting: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per group of steps that wait on each other."""
    cycles: list[list[str]] = []
    seen: set[str] = set()
    remaining = set(left)
    for start in left:
        if start in seen:
            continue
        path: list[str] = []
        current = start
        while current not in path:
            path.append(current)
            current = min(p for p in waiting[current] if p in remaining)
        cycle = path[path.index(current) :]
        seen.update(path)
        if not any(set(cycle) == set(known) for known in cycles):
            cycles.append(cycle)
    return cycles
