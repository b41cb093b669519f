"""What each step reads before it can start: the sources of a plan's dependencies (DESIGN D4).

A *need* says that a consumer (one field's step, or every step of a node) waits for the
step that produces a field. Needs come from three places:

- ``@each``/``@all`` commands: the steps that see the destination's data (the steps of the
  node holding a ``value`` target, or of the destination, and of the nodes descended below
  it; the step that generates that node whole when it has none) wait for every generated
  field the sources read, also through other commands' ``value`` mappings into them. A
  mapping that reads a field through a ``.**.`` pluck reads the instances inside the
  plucked elements *partially*: it leaves out what a failed element never produced.
- runtime variables: a step whose prompt shows ``{name}`` waits for the field ``name``
  resolves to. A prompt shows the docstrings from the root task down to the step's node,
  the step's fields' descriptions, and, for a node field generated whole, every text of
  the nested classes.
- transforms: a transform waits for every generated field behind each name it reads (the
  field, and the fields below it for a node field), also through ``value`` mappings.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from langtree.dsl.extraction import Extraction
from langtree.errors import Diagnostic
from langtree.structure.element_flows import element_levels
from langtree.structure.flows import Flow, MappingFlow
from langtree.structure.known import field_holder
from langtree.structure.origins import Origin
from langtree.structure.placeholders import Placeholder, find_placeholders, placeholder_diagnostic
from langtree.structure.registry import FieldKey, NodeRegistry
from langtree.structure.steps import StepDraft
from langtree.structure.tree import Node, NodeCommand, node_diagnostic

__all__ = [
    "Consumer",
    "Need",
    "VariableUse",
    "find_needs",
    "path_to",
]


class Consumer(NamedTuple):
    """What waits: the step generating a field, or every step of a node (``field_name``
    is ``None``)."""

    node_tag: str
    field_name: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class VariableUse:
    """A ``{name}`` in one text, kept to point at it in diagnostics."""

    placeholder: Placeholder
    extraction: Extraction
    origin: Origin

    def diagnostic(self, message: str, hint: str) -> Diagnostic:
        """An error marking the ``{name}`` in its source line."""
        return placeholder_diagnostic(self.extraction, self.origin, self.placeholder, message, hint)


@dataclass(frozen=True, slots=True, kw_only=True)
class Need:
    """``consumer`` waits for the step producing ``producer``, because of ``command`` or
    ``variable`` (neither: the declared order)."""

    consumer: Consumer
    producer: FieldKey
    command: NodeCommand | None = None
    variable: VariableUse | None = None
    element_levels: int = 0
    """On how many list levels the consumer's instances need only the producer's instances
    with the same indices (an element-wise ``@each``, see
    ``langtree.structure.element_flows``); 0: they need all of them."""
    partial_below: str | None = None
    """The node of the elements that a ``.**.`` pluck of the mapping reading ``producer``
    plucks (its outermost one): a failed instance of a step on that node or below it
    gives a value the pluck leaves out, so the consumer goes on without it (``None``:
    the consumer needs every instance)."""

    def diagnostic(self, node: Node, message: str, hint: str) -> Diagnostic:
        """An error at the command or variable behind the need, else at ``node``."""
        if self.command is not None:
            return self.command.diagnostic(message, hint=hint)
        if self.variable is not None:
            return self.variable.diagnostic(message, hint)
        return node_diagnostic(node, message, hint)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Reads:
    """What one mapping reads: its source fields, and the node of the elements its
    outermost ``.**.`` pluck plucks (``None``: it has none)."""

    sources: tuple[FieldKey, ...]
    partial_below: str | None


def find_needs(
    registry: NodeRegistry,
    drafts: list[StepDraft],
    flows: list[Flow],
    prompt_names: Mapping[str, set[str]],
) -> list[Need]:
    """Every need of the drafted steps.

    Args:
        registry: The nodes.
        drafts: The steps, before parallel nodes are split.
        flows: The resolved ``@each``/``@all`` commands.
        prompt_names: Names that ``prompt`` mappings make resolvable, by node tag; such a
            ``{name}`` is the mapping's, not a field's.
    """
    finder = _NeedFinder(registry, drafts, prompt_names)
    return [*finder.flow_needs(flows), *finder.variable_needs(), *finder.transform_needs(flows)]


def path_to(registry: NodeRegistry, node: Node) -> list[Node]:
    """The nodes from the root task down to ``node``, both included."""
    path = [node]
    while (parent_tag := path[-1].parent) is not None:
        parent = registry.get(parent_tag)
        assert parent is not None
        path.append(parent)
    return path[::-1]


class _NeedFinder:
    def __init__(
        self,
        registry: NodeRegistry,
        drafts: list[StepDraft],
        prompt_names: Mapping[str, set[str]],
    ) -> None:
        self.registry = registry
        self.prompt_names = prompt_names
        self.uses: dict[tuple[str, str | None], list[tuple[VariableUse, FieldKey]]] = {}
        self.drafted: dict[str, set[str]] = defaultdict(set)
        self.tags_below: dict[str, list[str]] = defaultdict(list)
        self.transforms = [draft for draft in drafts if draft.transform is not None]
        for draft in drafts:
            self.drafted[draft.node_tag].update(draft.fields)
        for tag in self.drafted:
            node = registry.get(tag)
            assert node is not None
            for holder in path_to(registry, node):
                self.tags_below[holder.tag].append(tag)
        self.produced = {key for tag in self.drafted for key in self._produced_keys(tag)}

    def _produced_keys(self, tag: str) -> Iterator[FieldKey]:
        node = self.registry.get(tag)
        assert node is not None
        for name in self.drafted[tag]:
            yield FieldKey(tag, name)
            child = self.registry.child(node, name)
            if child is not None:
                yield from self.registry.subtree_fields(child)

    # -- commands ---------------------------------------------------------------------

    def flow_needs(self, flows: list[Flow]) -> Iterator[Need]:
        writers = self._value_writers(flows)
        for flow in flows:
            levels = element_levels(self.registry, flow, self.produced)
            for mapping_flow in flow.mappings:
                reads = self._reads(flow, mapping_flow)
                producers = self._producers(reads, writers)
                for consumer in self._consumers(flow, mapping_flow) if producers else ():
                    for producer, partial_below in producers.items():
                        yield Need(
                            consumer=consumer,
                            producer=producer,
                            command=flow.command,
                            # Only the command's own sources lie in the iterated elements.
                            element_levels=levels if producer in reads.sources else 0,
                            partial_below=partial_below,
                        )

    def _reads(self, flow: Flow, mapping_flow: MappingFlow) -> _Reads:
        return _Reads(
            sources=tuple(self._sources(flow, mapping_flow)),
            partial_below=self._partial_below(flow, mapping_flow),
        )

    def _partial_below(self, flow: Flow, mapping_flow: MappingFlow) -> str | None:
        """The node of the elements of the mapping's outermost ``.**.`` pluck, if any."""
        pluck = next((p for p in mapping_flow.plucks if p.operator == "**"), None)
        if pluck is None or mapping_flow.source is None:
            return None
        node: Node | None = flow.node
        for node_field in mapping_flow.source.fields[: pluck.after]:
            node = self.registry.child(node, node_field.name) if node is not None else None
        return node.tag if node is not None else None

    def _value_writers(self, flows: list[Flow]) -> dict[FieldKey, list[_Reads]]:
        """For each field a ``value`` mapping writes, what each such mapping reads."""
        writers: dict[FieldKey, list[_Reads]] = defaultdict(list)
        for flow in flows:
            for mapping_flow in flow.mappings:
                target = mapping_flow.target
                if mapping_flow.scope != "value" or target is None or target.field is None:
                    continue
                reads = self._reads(flow, mapping_flow)
                key = FieldKey(field_holder(self.registry, target).tag, target.field.name)
                written = [key]
                if target.field.shape.node_class is not None:
                    written += self.registry.subtree_fields(target.node)
                for written_key in written:
                    writers[written_key].append(reads)
        return writers

    def _producers(
        self, reads: _Reads, writers: Mapping[FieldKey, list[_Reads]]
    ) -> dict[FieldKey, str | None]:
        """The generated fields behind a mapping's sources: each source a step produces,
        and, for a source that a ``value`` mapping writes, the generated fields behind that
        mapping's sources (so that a reader through a further command waits for the first
        writer). Each with the ``partial_below`` of the mappings that read it itself:
        the one they share, else ``None`` (a ``.**.`` pluck that leaves out a failed
        element makes the value complete for every reader after it)."""
        found: dict[FieldKey, set[str | None]] = defaultdict(set)
        seen = {(key, reads.partial_below) for key in reads.sources}
        pending = list(seen)
        while pending:
            key, partial_below = pending.pop()
            if key in self.produced:
                found[key].add(partial_below)
            for writer in writers.get(key, ()):
                fresh = [(source, writer.partial_below) for source in writer.sources]
                fresh = [state for state in fresh if state not in seen]
                seen.update(fresh)
                pending += fresh
        return {
            key: next(iter(belows)) if len(belows) == 1 else None for key, belows in found.items()
        }

    def _sources(self, flow: Flow, mapping_flow: MappingFlow) -> Iterator[FieldKey]:
        source = mapping_flow.source
        if source is None:
            yield from self.registry.subtree_fields(flow.node)
        elif source.field is None:
            yield from self.registry.subtree_fields(source.node)
        else:
            yield FieldKey(field_holder(self.registry, source).tag, source.field.name)
            if source.field.shape.node_class is not None:
                yield from self.registry.subtree_fields(source.node)

    def _consumers(self, flow: Flow, mapping_flow: MappingFlow) -> list[Consumer]:
        destination = flow.destination
        if destination is None:
            return []
        if mapping_flow.scope == "value" and mapping_flow.target is not None:
            return self._node_consumers(field_holder(self.registry, mapping_flow.target))
        leaf = destination.field
        if leaf is not None and leaf.shape.node_class is None:
            if leaf.name in self.drafted.get(destination.node.tag, ()):
                return [Consumer(destination.node.tag, leaf.name)]
            return self._whole_producer(destination.node)
        return self._node_consumers(destination.node)

    def _node_consumers(self, node: Node) -> list[Consumer]:
        """The steps of ``node`` and of the nodes descended below it, else its producer."""
        tags = self.tags_below.get(node.tag)
        if tags:
            return [Consumer(tag, None) for tag in tags]
        return self._whole_producer(node)

    def _whole_producer(self, node: Node) -> list[Consumer]:
        """The step that generates ``node`` as part of a node field, if one does."""
        current = node
        while current.parent is not None and current.field_name is not None:
            if current.field_name in self.drafted.get(current.parent, ()):
                return [Consumer(current.parent, current.field_name)]
            parent = self.registry.get(current.parent)
            assert parent is not None
            current = parent
        return []

    # -- transforms -------------------------------------------------------------------

    def transform_needs(self, flows: list[Flow]) -> Iterator[Need]:
        writers = self._value_writers(flows) if self.transforms else {}
        for draft in self.transforms:
            assert draft.transform is not None
            node = self.registry.get(draft.node_tag)
            assert node is not None
            consumer = Consumer(draft.node_tag, draft.fields[0])
            for name in draft.transform.names:
                key = self.registry.field_above(node, name)
                if key is None:  # a Jinja2 global, such as range
                    continue
                reads = _Reads(sources=(key, *self._below(key)), partial_below=None)
                for producer, partial_below in self._producers(reads, writers).items():
                    yield Need(
                        consumer=consumer,
                        producer=producer,
                        command=draft.transform.command,
                        partial_below=partial_below,
                    )

    def _below(self, key: FieldKey) -> Iterator[FieldKey]:
        """The fields below a node field (none for a leaf)."""
        holder = self.registry.get(key.node_tag)
        child = self.registry.child(holder, key.field_name) if holder is not None else None
        if child is not None:
            yield from self.registry.subtree_fields(child)

    # -- runtime variables ----------------------------------------------------------------

    def variable_needs(self) -> Iterator[Need]:
        for tag, names in self.drafted.items():
            node = self.registry.get(tag)
            assert node is not None
            for holder in path_to(self.registry, node):
                yield from self._text_needs(Consumer(tag, None), holder, None)
            # A transform's text goes to no model: its {name}s are prompt text of none.
            computed = {draft.fields[0] for draft in self.transforms if draft.node_tag == tag}
            for name in sorted(names - computed):
                yield from self._field_needs(node, name)

    def _field_needs(self, node: Node, name: str) -> Iterator[Need]:
        consumer = Consumer(node.tag, name)
        yield from self._text_needs(consumer, node, name)
        child = self.registry.child(node, name)
        for nested in self.registry.subtree(child) if child is not None else ():
            yield from self._text_needs(consumer, nested, None)
            for nested_field in nested.fields:
                yield from self._text_needs(consumer, nested, nested_field.name)

    def _text_needs(
        self, consumer: Consumer, holder: Node, field_name: str | None
    ) -> Iterator[Need]:
        """Needs for the ``{name}`` in ``holder``'s docstring, or its field's description."""
        key = (holder.tag, field_name)
        uses = self.uses.get(key)
        if uses is None:
            uses = self.uses[key] = list(self._variable_uses(holder, field_name))
        for use, producer in uses:
            yield Need(consumer=consumer, producer=producer, variable=use)

    def _variable_uses(
        self, holder: Node, field_name: str | None
    ) -> Iterator[tuple[VariableUse, FieldKey]]:
        """Each ``{name}`` of a text that resolves to a generated field, with that field."""
        holder_field = holder.field(field_name) if field_name is not None else None
        extraction = holder_field.extraction if holder_field else holder.extraction
        origin = holder_field.origin if holder_field else holder.origin
        for placeholder in find_placeholders(extraction.text):
            if placeholder.name in self.prompt_names.get(holder.tag, ()):
                continue
            producer = self.registry.field_above(holder, placeholder.name)
            if producer is not None and producer in self.produced:
                use = VariableUse(placeholder=placeholder, extraction=extraction, origin=origin)
                yield use, producer
