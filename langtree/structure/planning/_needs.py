"""What each step reads before it can start: the sources of a plan's dependencies (DESIGN D4).

A *need* says that a consumer (one field's step, or every step of a node) waits for the
step that produces a field. Needs come from four places:

- ``@each``/``@all`` commands: the steps that see the destination's data (the steps of the
  node holding a ``value`` target, or of the destination, and of the nodes descended below
  it; for a node generated whole, the step that generates it, besides its split steps)
  wait for every generated field the sources read, also through other commands'
  ``value`` mappings into them. A mapping that reads a field through a ``.**.`` pluck
  reads the instances inside the plucked elements *partially*: it leaves out what a
  failed element never produced.
- runtime variables: a step whose prompt shows ``{name}`` waits for the field ``name``
  resolves to, and, for a node field, for the fields below it. A prompt shows the
  docstrings from the root task down to the step's node, the descriptions of the fields
  that lead there and of the step's fields, and, for a node field generated whole, every
  text of the nested classes.
- the context: a step shows its node's known values, with everything below them, so it
  waits for what produces them (D4: "a step starts when everything its node and its
  prompt need is known"): the steps below the node, the transforms of the node, and,
  through ``value`` mappings, the steps that produce what commands write there (an
  ``@each`` filling the fields of a list's elements).
- transforms: a transform waits for every generated field behind each name it reads (the
  field, and the fields below it for a node field), also through ``value`` mappings.

Every need follows ``value`` mappings: a field a command writes is produced by the steps
behind the command's sources. The needs that the prompt shows without naming the field
(the context, and the values below a node field that a ``{name}`` shows) are *weak*: they
give way to the declared order and to a producer that itself waits for the consumer
(`langtree.structure.planning._plan`), where the value is then shown as it is when the consumer
starts, the same in every run. The steps of one node never wait for each other through
the context: the declared order (``@sequential``) or the same initial context
(``@parallel``) decides what they show of each other.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from langtree.dsl import Extraction
from langtree.errors import Diagnostic
from langtree.structure._config import Outline
from langtree.structure.commands._context import declared_context
from langtree.structure.commands._element_flows import element_levels
from langtree.structure.commands._flows import Flow, MappingFlow
from langtree.structure.commands._placeholders import (
    Placeholder,
    find_placeholders,
    placeholder_diagnostic,
)
from langtree.structure.planning._known import field_holder, mapping_writes
from langtree.structure.planning._steps import StepDraft
from langtree.structure.tree._origins import Origin
from langtree.structure.tree._registry import FieldKey, NodeRegistry
from langtree.structure.tree._tree import Node, NodeCommand, NodeField, node_diagnostic
from langtree.structure.tree._tree_node import display_name

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
class _Use:
    """A ``{name}`` that resolves to ``field``, with the generated fields behind it and
    behind the fields below it (for a node field)."""

    variable: VariableUse
    field: FieldKey
    producers: dict[FieldKey, str | None]
    below: dict[FieldKey, str | None]


def _holds(key: FieldKey, tag: str) -> bool:
    """Whether the node field ``key`` holds the node at ``tag`` (at any depth)."""
    prefix = f"{key.node_tag}.{key.field_name}"
    return tag == prefix or tag.startswith(prefix + ".")


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
    ``langtree.structure.commands._element_flows``); 0: they need all of them."""
    weak: bool = False
    """Whether the consumer shows the value without naming it (see the module): the need
    gives way to the declared order and to a producer that waits for the consumer."""
    through_commands: bool = False
    """Whether the value the consumer names (in a ``{name}`` or a transform) is written
    by commands from the producer's field, rather than being that field: a consumer that
    is its own producer so is a cycle."""
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
    outline: Outline = "path",
) -> tuple[list[Need], list[Diagnostic]]:
    """Every need of the drafted steps, and the ``{name}``s that no order can satisfy.

    Args:
        registry: The nodes.
        drafts: The steps, before parallel nodes are split.
        flows: The resolved ``@each``/``@all`` commands.
        prompt_names: Names that ``prompt`` mappings make resolvable, by node tag; such a
            ``{name}`` is the mapping's, not a field's.
        outline: Which levels' texts lead to a step's node in its prompt.

    Returns:
        The needs, and an error for each ``{name}`` that shows a node field to the steps
        inside it: they would show a value they are still writing.
    """
    finder = _NeedFinder(registry, drafts, flows, prompt_names, outline)
    needs = [
        *finder.flow_needs(flows),
        *finder.variable_needs(),
        *finder.context_needs(),
        *finder.transform_needs(),
    ]
    return needs, list(finder.inside)


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
        flows: list[Flow],
        prompt_names: Mapping[str, set[str]],
        outline: Outline,
    ) -> None:
        self.registry = registry
        self.prompt_names = prompt_names
        self.outline = outline
        # The values no order can give (a name of a field that holds its reader), as an
        # ordered set: each text reports once, however many steps show it.
        self.inside: dict[Diagnostic, None] = {}
        self.uses: dict[tuple[str, str | None], list[_Use]] = {}
        self.drafted: dict[str, set[str]] = defaultdict(set)
        self.modelled: dict[str, set[str]] = defaultdict(set)
        self.tags_below: dict[str, list[str]] = defaultdict(list)
        self.transforms = [draft for draft in drafts if draft.transform is not None]
        for draft in drafts:
            self.drafted[draft.node_tag].update(draft.fields)
            if draft.transform is None:
                self.modelled[draft.node_tag].update(draft.fields)
        for tag in self.drafted:
            node = registry.get(tag)
            assert node is not None
            for holder in path_to(registry, node):
                self.tags_below[holder.tag].append(tag)
        self.produced = {key for tag in self.drafted for key in self._produced_keys(tag)}
        self.writers = self._value_writers(flows)

    def _produced_keys(self, tag: str) -> Iterator[FieldKey]:
        """The fields the steps of the node at ``tag`` produce."""
        node = self.registry.get(tag)
        assert node is not None
        for name in self.drafted[tag]:
            yield FieldKey(tag, name)
            yield from self._below(FieldKey(tag, name))

    # -- commands ---------------------------------------------------------------------

    def flow_needs(self, flows: list[Flow]) -> Iterator[Need]:
        for flow in flows:
            levels = element_levels(self.registry, flow, self.produced)
            for mapping_flow in flow.mappings:
                reads = self._reads(flow, mapping_flow)
                producers = self._producers(reads)
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
        """For each field a ``value`` mapping writes (the node fields that lead to a
        target it creates included), what each such mapping reads."""
        writers: dict[FieldKey, list[_Reads]] = defaultdict(list)
        for flow in flows:
            for mapping_flow in flow.mappings:
                written = list(mapping_writes(self.registry, flow, mapping_flow))
                if not written:
                    continue
                reads = self._reads(flow, mapping_flow)
                for tag, name in written:
                    writers[FieldKey(tag, name)].append(reads)
        return writers

    def _behind(self, keys: Iterable[FieldKey]) -> dict[FieldKey, str | None]:
        """The generated fields behind ``keys``, each with its ``partial_below`` (see
        `_producers()`)."""
        return self._producers(_Reads(sources=tuple(dict.fromkeys(keys)), partial_below=None))

    def _producers(self, reads: _Reads) -> dict[FieldKey, str | None]:
        """The generated fields behind a mapping's sources: each source a step produces,
        and, for a source that a ``value`` mapping writes, the generated fields behind that
        mapping's sources (so that a reader through a further command waits for the first
        writer). Each with the ``partial_below`` of the mappings that read it itself:
        the one they share, else ``None`` (a ``.**.`` pluck that leaves out a failed
        element makes the value complete for every reader after it)."""
        found: dict[FieldKey, set[str | None]] = defaultdict(set)
        pending = [(key, reads.partial_below) for key in dict.fromkeys(reads.sources)]
        seen = set(pending)
        while pending:
            key, partial_below = pending.pop()
            if key in self.produced:
                found[key].add(partial_below)
            for writer in self.writers.get(key, ()):
                fresh = [(source, writer.partial_below) for source in writer.sources]
                fresh = [state for state in fresh if state not in seen]
                # Each (field, partial_below) once: a chain of commands that writes back
                # into what it reads ends (the commands' own check reports the cycle).
                seen.update(fresh)
                pending += fresh
        return {
            key: next(iter(belows)) if len(belows) == 1 else None for key, belows in found.items()
        }

    def _sources(self, flow: Flow, mapping_flow: MappingFlow) -> Iterator[FieldKey]:
        source = mapping_flow.source
        if mapping_flow.is_literal:
            return
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
        # A ``value`` mapping writes a field: every step of the node holding it shows the
        # value (its context), and a step that generates the node whole makes it.
        if mapping_flow.scope == "value" and mapping_flow.target is not None:
            return self._node_consumers(field_holder(self.registry, mapping_flow.target))
        leaf = destination.field
        if leaf is not None and leaf.shape.node_class is None:
            # A ``prompt``/``outputs`` target at a leaf: the step generating that field
            # reads it; a known leaf, the step that generates its node whole, if any.
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

    def transform_needs(self) -> Iterator[Need]:
        for draft in self.transforms:
            assert draft.transform is not None
            node = self.registry.get(draft.node_tag)
            assert node is not None
            consumer = Consumer(draft.node_tag, draft.fields[0])
            for name in draft.transform.names:
                key = self.registry.field_above(node, name)
                if key is None:  # a Jinja2 global, such as range
                    continue
                if _holds(key, node.tag):
                    self._transform_inside(draft, key)
                    continue
                sources = (key, *self._below(key))
                reads = _Reads(sources=sources, partial_below=None)
                for producer, partial_below in self._producers(reads).items():
                    yield Need(
                        consumer=consumer,
                        producer=producer,
                        command=draft.transform.command,
                        through_commands=producer not in sources,
                        partial_below=partial_below,
                    )

    def _transform_inside(self, draft: StepDraft, key: FieldKey) -> None:
        """Report a transform that reads a node field holding its own node."""
        assert draft.transform is not None
        holder = self.registry.get(key.node_tag)
        assert holder is not None
        name, field = key.field_name, draft.fields[0]
        message = (
            f"transform() of {field!r} reads {name!r}, which holds the transform's own "
            f"node ({draft.node_tag!r}): it would read values that are still being written"
        )
        hint = (
            f"compute it in a field of {display_name(holder.node_class)!r} (outside "
            f"{name!r}), where it can wait for every element"
        )
        self.inside[draft.transform.command.diagnostic(message, hint=hint)] = None

    def _below(self, key: FieldKey) -> Iterator[FieldKey]:
        """The fields below a node field (none for a leaf)."""
        holder = self.registry.get(key.node_tag)
        child = self.registry.child(holder, key.field_name) if holder is not None else None
        if child is not None:
            yield from self.registry.subtree_fields(child)

    # -- the context ----------------------------------------------------------------------

    def context_needs(self) -> Iterator[Need]:
        """Weak needs of each node's model steps for the producers of its known values
        (those its ``@context[...]`` declares, when it declares some)."""
        for tag, names in self.modelled.items():
            node = self.registry.get(tag)
            assert node is not None
            keys = self._context_keys(node, names)
            # Marked when commands write the shown value from the producer's field: then
            # even a step of the producer's own node waits for it (`_add_weak`).
            written = self._behind(key for key in keys if key in self.writers)
            for producer, below in self._behind(keys).items():
                yield Need(
                    consumer=Consumer(tag, None),
                    producer=producer,
                    weak=True,
                    partial_below=below,
                    through_commands=producer in written,
                )

    def _context_keys(self, node: Node, generated: set[str]) -> list[FieldKey]:
        """The fields a step of ``node`` shows in its context, with what lies below them:
        its known fields, and what split steps fill below the fields its other steps
        generate (the fields themselves are the declared order's or unseen)."""
        declared, _ = declared_context(self.registry, node)
        if declared is None:
            shown = [FieldKey(node.tag, f.name) for f in node.fields]
        else:
            shown = [key for entry in declared for key in self._path_keys(node, entry.fields)]
        below = [key for field in shown for key in self._below(field)]
        own = {FieldKey(node.tag, name) for name in generated}
        return [key for key in shown if key not in own] + below

    def _path_keys(self, start: Node, fields: Iterable[NodeField]) -> Iterator[FieldKey]:
        """The fields a path from ``start`` goes through."""
        node: Node | None = start
        for node_field in fields:
            if node is None:
                return
            yield FieldKey(node.tag, node_field.name)
            node = self.registry.child(node, node_field.name)

    # -- runtime variables ----------------------------------------------------------------

    def variable_needs(self) -> Iterator[Need]:
        for tag, names in self.drafted.items():
            node = self.registry.get(tag)
            assert node is not None
            for holder, link in self._shown_levels(node):
                yield from self._text_needs(Consumer(tag, None), holder, None)
                if link is not None:
                    yield from self._text_needs(Consumer(tag, None), holder, link)
            # A transform's text goes to no model: its {name}s are prompt text of none.
            computed = {draft.fields[0] for draft in self.transforms if draft.node_tag == tag}
            # Sorted: the needs, and so the diagnostics, come in the same order every time.
            for name in sorted(names - computed):
                yield from self._field_needs(node, name)

    def _shown_levels(self, node: Node) -> Iterator[tuple[Node, str | None]]:
        """The levels whose texts a step of ``node`` shows (as the ``outline`` says), each
        with the field that leads on to the next level when its description is shown."""
        path = path_to(self.registry, node)
        # D10: a step's prompt follows the path from the root task down to its node, each
        # level with the description of the field that leads on; ``root`` shows the root
        # task's text then the node's, ``node`` the node's alone (docs/prompts.md).
        if self.outline == "path":
            for level, below in itertools.pairwise(path):
                yield level, below.field_name
        elif self.outline == "root" and len(path) > 1:
            yield path[0], None
        yield node, None

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
        for use in uses:
            if _holds(use.field, consumer.node_tag):
                self._inside(use, consumer)
                continue
            # The fields below the named one are shown without being named: weak needs.
            for producers, weak in ((use.producers, False), (use.below, True)):
                for producer, partial_below in producers.items():
                    yield Need(
                        consumer=consumer,
                        producer=producer,
                        variable=use.variable,
                        weak=weak,
                        # `use.producers` holds no field below
                        through_commands=not weak and producer != use.field,
                        partial_below=partial_below,
                    )

    def _inside(self, use: _Use, consumer: Consumer) -> None:
        """Report a ``{name}`` whose field holds the consumer's node."""
        placeholder = use.variable.placeholder
        name = use.field.field_name
        message = (
            f"{{{placeholder.name}}} shows the value of {name!r} to the steps inside it "
            f"(those of {consumer.node_tag!r}), which write part of that value"
        )
        hint = (
            f"a step cannot wait for a value it writes: name {name!r} in the description "
            "of a field generated after it, or leave this text out of those steps' "
            "prompts with the 'outline' setting"
        )
        self.inside[use.variable.diagnostic(message, hint)] = None

    def _variable_uses(self, holder: Node, field_name: str | None) -> Iterator[_Use]:
        """Each ``{name}`` of a text that resolves to a field, with what produces it."""
        holder_field = holder.field(field_name) if field_name is not None else None
        extraction = holder_field.extraction if holder_field else holder.extraction
        origin = holder_field.origin if holder_field else holder.origin
        for placeholder in find_placeholders(extraction.text):
            if placeholder.name in self.prompt_names.get(holder.tag, ()):
                continue
            key = self.registry.field_above(holder, placeholder.name)
            if key is None:
                continue
            use = VariableUse(placeholder=placeholder, extraction=extraction, origin=origin)
            producers = self._behind([key])
            below = {
                p: partial
                for p, partial in self._behind(self._below(key)).items()
                if p not in producers
            }
            if producers or below:
                yield _Use(variable=use, field=key, producers=producers, below=below)
