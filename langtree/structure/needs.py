"""What each step reads before it can start: the sources of a plan's dependencies (DESIGN D4).

A *need* says that a consumer (one field's step, or every step of a node) waits for the
step that produces a field. Needs come from three places:

- ``@each``/``@all`` commands: the steps that see the destination's data (the steps of the
  node holding a ``value`` target, or of the destination, and of the nodes descended below
  it; for a node generated whole, the step that generates it, besides its split steps)
  wait for every generated field the sources read, also through other commands'
  ``value`` mappings into them.
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

    def diagnostic(self, node: Node, message: str, hint: str) -> Diagnostic:
        """An error at the command or variable behind the need, else at ``node``."""
        if self.command is not None:
            return self.command.diagnostic(message, hint=hint)
        if self.variable is not None:
            return self.variable.diagnostic(message, hint)
        return node_diagnostic(node, message, hint)


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
                sources = list(self._sources(flow, mapping_flow))
                producers = self._producers(sources, writers)
                for consumer in self._consumers(flow, mapping_flow) if producers else ():
                    for producer in producers:
                        yield Need(
                            consumer=consumer,
                            producer=producer,
                            command=flow.command,
                            # Only the command's own sources lie in the iterated elements.
                            element_levels=levels if producer in sources else 0,
                        )

    def _value_writers(self, flows: list[Flow]) -> dict[FieldKey, list[list[FieldKey]]]:
        """For each field a ``value`` mapping writes, the sources of each such mapping."""
        writers: dict[FieldKey, list[list[FieldKey]]] = defaultdict(list)
        for flow in flows:
            for mapping_flow in flow.mappings:
                target = mapping_flow.target
                if mapping_flow.scope != "value" or target is None or target.field is None:
                    continue
                sources = list(self._sources(flow, mapping_flow))
                key = FieldKey(field_holder(self.registry, target).tag, target.field.name)
                written = [key]
                if target.field.shape.node_class is not None:
                    written += self.registry.subtree_fields(target.node)
                for written_key in written:
                    writers[written_key].append(sources)
        return writers

    def _producers(
        self, sources: list[FieldKey], writers: Mapping[FieldKey, list[list[FieldKey]]]
    ) -> list[FieldKey]:
        """The generated fields behind ``sources``: each source a step produces, and, for a
        source that a ``value`` mapping writes, the generated fields behind that mapping's
        sources (so that a reader through a further command waits for the first writer)."""
        producers: list[FieldKey] = []
        seen = set(sources)
        pending = list(sources)
        while pending:
            key = pending.pop()
            if key in self.produced:
                producers.append(key)
            for further in writers.get(key, ()):
                fresh = [source for source in further if source not in seen]
                seen.update(fresh)
                pending += fresh
        return producers

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
        """The steps of ``node`` and of the nodes descended below it, and its producer
        when a step generates it whole (its split steps are its only steps)."""
        tags = self.tags_below.get(node.tag, [])
        return [Consumer(tag, None) for tag in tags] + self._whole_producer(node)

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
                sources = [key, *self._below(key)]
                for producer in self._producers(sources, writers):
                    yield Need(
                        consumer=consumer, producer=producer, command=draft.transform.command
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
