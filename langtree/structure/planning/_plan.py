"""The execution plan: every step, what it waits for, in a valid order (DESIGN D3, D4).

Dependencies come from three places: the declared order (``@sequential`` fields, and a
known node field's subtree within its parent's sequence), data flows (a command's
destination waits for the data it reads), and runtime variables (a prompt that shows a
generated field waits for it); a split step also waits for the step that creates its
node (`langtree.structure.planning._steps`). A dependency against the declared order, or a cycle,
is a diagnostic; in a ``@parallel`` node, fields that need a sibling move to a follow-up
step.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from langtree._display import code, fenced, table
from langtree.dsl import Modifier
from langtree.errors import Diagnostic
from langtree.structure._config import Outline
from langtree.structure.commands._flows import Flow
from langtree.structure.commands._transforms import Transform
from langtree.structure.planning._needs import (
    Consumer,
    Need,
    find_needs,
)
from langtree.structure.planning._ordering import topological_order
from langtree.structure.planning._steps import StepDraft, element_path, step_id
from langtree.structure.tree._registry import FieldKey, NodeRegistry
from langtree.structure.tree._tree import Node, node_diagnostic
from langtree.structure.tree._tree_node import display_name

__all__ = ["ElementWait", "ExecutionPlan", "PlanStep", "build_plan"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ElementWait:
    """A prerequisite whose instances a step's instances wait for element by element.

    Attributes:
        step_id: The prerequisite step.
        levels: An instance waits only for the prerequisite's instances whose first
            ``levels`` list indices equal its own (an element-wise ``@each``: element *i*
            of the destination needs only what iteration *i* reads).
    """

    step_id: str
    levels: int


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
        element_waits: Those of ``depends_on`` that an instance waits for element by
            element, beyond the elements of its own branch of the tree.
        transform: The transform computing the step's one field, with no model call
            (``None``: a model generates the fields).
        unseen: Fields of the node that its other steps generate and that this step
            does not wait for (the other steps of a ``@parallel`` node): its prompt never
            shows them, whichever finishes first, so that every run sends the same prompt.
        partial_reads: Those of ``depends_on`` whose failed instances the step goes on
            without (``on_error="continue"``): it reads them only through ``.**.``
            pluck paths, which leave out what a failed element never produced.
        creator: For a split step (a field with a step of its own inside a node that
            another step generates whole), that other step: it creates the node's
            instances, so the split step is listed in ``depends_on`` and its instances
            are known once the creator has finished (``None``: any other step).
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
    element_waits: tuple[ElementWait, ...] = ()
    transform: Transform | None = None
    unseen: tuple[str, ...] = ()
    partial_reads: tuple[str, ...] = ()
    creator: str | None = None


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

    def to_dict(self) -> dict[str, object]:
        """The plan as JSON-ready data: ``{"steps": [...]}``, each step with its id,
        node, fields, what makes them (``model``, ``resample``, ``transform``: the
        expression) and the ids it depends on, in plan order."""
        return {"steps": [_step_data(step) for step in self.steps]}

    def to_mermaid(self) -> str:
        """The plan as a Mermaid flowchart, one box per step, arrows from prerequisites.

        A box's label has a line for the node, one for its fields and one for what makes
        them (a transform, a model, samples) when that is not the default model.
        """
        names = {step.id: f"s{index}" for index, step in enumerate(self.steps)}
        lines = ["flowchart TD"]
        for step in self.steps:
            label = [step.element_path, ", ".join(step.fields)]
            extras = [f"transform: {step.transform.expression}"] if step.transform else []
            extras += [f"model: {step.model}"] if step.model else []
            extras += [f"resample: {step.resample}"] if step.resample > 1 else []
            if extras:
                label.append(", ".join(extras))
            # A newline inside the quotes is Mermaid's line break. `<br/>` is not: where
            # the diagram's text passes through HTML before Mermaid reads it (nbconvert's
            # HTML export of a notebook), the tag is taken as HTML and the lines run on.
            text = "\n".join(_mermaid_text(line) for line in label)
            lines.append(f'    {names[step.id]}["{text}"]')
        for step in self.steps:
            lines.extend(f"    {names[dep]} --> {names[step.id]}" for dep in step.depends_on)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"ExecutionPlan(steps={[step.id for step in self.steps]!r})"

    def _repr_markdown_(self) -> str:
        """The notebook display: the step count, `to_mermaid()` in a
        ```` ```mermaid ```` block, and a table of the steps numbered in plan order (the
        table is what frontends that do not draw Mermaid show the plan by)."""
        count = len(self.steps)
        head = f"**Plan**: {count} step{'s' if count != 1 else ''}"
        if not self.steps:
            return f"{head} (every field is known)"
        number = {step.id: str(index) for index, step in enumerate(self.steps, start=1)}
        rows = (
            [
                number[step.id],
                code(step.element_path),
                ", ".join(step.fields),
                _made_by(step),
                ", ".join(number[dep] for dep in step.depends_on) or "—",
            ]
            for step in self.steps
        )
        steps = table(["#", "node", "fields", "made by", "waits for"], rows)
        return f"{head}\n\n{fenced(self.to_mermaid(), 'mermaid')}\n\n{steps}"


def _made_by(step: PlanStep) -> str:
    """What produces a step's fields: a transform, or a model and how many samples."""
    if step.transform is not None:
        return f"transform {code(step.transform.expression)}"
    model = f"model {code(step.model)}" if step.model else "default model"
    return f"{model} ×{step.resample}" if step.resample > 1 else model


# Mermaid (version 11) reads a label's text as Markdown and HTML: `[*].items[*]` would
# be drawn in italics, `<b>` taken as a tag, a `"` would end the label. Such characters
# are written as Mermaid's entity codes (`#42;`), which every version draws as the
# character itself; `#` too, which starts one.
_MERMAID_CODES = str.maketrans(
    {
        char: f"#{name};"
        for char, name in {
            "#": "35",
            "&": "amp",
            '"': "quot",
            "<": "lt",
            ">": "gt",
            "*": "42",
            "`": "96",
            "~": "126",
            "\\": "92",
        }.items()
    }
)
# An underscore inside a word (`key_points`) is never emphasis in Markdown, and stays
# readable; one at either end of a word is coded.
_EDGE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def _mermaid_text(line: str) -> str:
    """A line of a label, with the characters Mermaid would read as markup coded."""
    return _EDGE_UNDERSCORE.sub("#95;", line.translate(_MERMAID_CODES))


def build_plan(
    registry: NodeRegistry,
    drafts: list[StepDraft],
    flows: list[Flow],
    prompt_names: Mapping[str, set[str]],
    outline: Outline = "path",
) -> tuple[ExecutionPlan, list[Diagnostic]]:
    """Order the drafted steps by their dependencies.

    Args:
        registry: The nodes.
        drafts: The steps of every node, nodes in tree order.
        flows: The resolved ``@each``/``@all`` commands.
        prompt_names: Names that ``prompt`` mappings make resolvable, by node tag.
        outline: Which levels' texts lead to a step's node in its prompt (their
            ``{name}``s are what the step reads).
    """
    found, inside = find_needs(registry, drafts, flows, prompt_names, outline)
    needs = _distinct([*found, *_creations(drafts)])
    builder = _PlanBuilder(registry, drafts)
    builder.diagnostics += inside
    # In this order: splitting a parallel step changes the steps (their ids and
    # positions), so every edge is drawn after it; the declared order goes in before the
    # needs, which are checked against it (an order conflict) and to which weak needs give
    # way.
    builder.split_parallel(needs)
    builder.add_declared_order()
    builder.add_needs(needs)
    return builder.finish()


def _creations(drafts: list[StepDraft]) -> list[Need]:
    """A split step waits for the step that creates its node."""
    return [
        Need(consumer=Consumer(draft.node_tag, draft.fields[0]), producer=draft.creator)
        for draft in drafts
        if draft.creator is not None
    ]


def _distinct(needs: list[Need]) -> list[Need]:
    """The first need of each (consumer, producer) pair, element by element only when
    every need of the pair is (a weak need counts: when the pair waits, it waits for
    what the weak need shows too), weak only when every need of the pair is, partial only
    when every need of the pair is alike, through commands as the comment says."""
    first: dict[tuple[Consumer, FieldKey], Need] = {}
    for need in needs:
        key = (need.consumer, need.producer)
        kept = first.setdefault(key, need)
        if kept.weak and not need.weak:
            # The strong need decides whether to wait; what both show, how much of it.
            levels = min(need.element_levels, _shows(kept))
            partial = need.partial_below if need.partial_below == kept.partial_below else None
            first[key] = replace(need, element_levels=levels, partial_below=partial)
            continue
        if _shows(need) < kept.element_levels:
            kept = first[key] = replace(kept, element_levels=need.element_levels)
        if need.partial_below != kept.partial_below:
            kept = first[key] = replace(kept, partial_below=None)
        # What a consumer shows through commands, it shows (weak needs: either one);
        # it reads a value only through commands when every need of the pair does.
        through = (
            kept.through_commands or need.through_commands
            if kept.weak and need.weak
            else kept.through_commands and (need.weak or need.through_commands)
        )
        if through != kept.through_commands:
            first[key] = replace(kept, through_commands=through)
    return list(first.values())


def _shows(need: Need) -> int:
    """On how many list levels the consumer's instances need only the producer's with the
    same indices, for what the need shows. A context shows the consumer's own instance,
    so it asks no more than the commands that write there: it never narrows them."""
    context = need.weak and need.variable is None
    return _ANY_LEVELS if context else need.element_levels


# More list levels than any tree has: ``min()`` with it keeps the other need's.
_ANY_LEVELS = 1 << 16


class _PlanBuilder:
    def __init__(self, registry: NodeRegistry, drafts: list[StepDraft]) -> None:
        self.registry = registry
        self.drafts = drafts
        # consumer id -> producer id -> the need behind the edge: the consumer's instances
        # start only once the producer's have finished. ``None``: an edge of the declared
        # order (D1, D3), which no command or ``{name}`` asked for and which no instance
        # waits for element by element.
        self.edges: dict[str, dict[str, Need | None]] = defaultdict(dict)
        # Per edge (consumer id, producer id): the list levels its instances align on.
        self.element_levels: dict[tuple[str, str], int] = {}
        # Per edge: whether the consumer reads the producer's instances only partially.
        self.partial: dict[tuple[str, str], bool] = {}
        self.diagnostics: list[Diagnostic] = []
        self._index()

    def _index(self) -> None:
        self.by_node: dict[str, list[StepDraft]] = defaultdict(list)
        self.producer: dict[FieldKey, StepDraft] = {}
        for draft in self.drafts:
            self.by_node[draft.node_tag].append(draft)
        # Deeper steps claim first: a split step produces its field, not the step that
        # generates the node around it whole.
        for draft in sorted(self.drafts, key=lambda d: d.node_tag.count("."), reverse=True):
            for name in draft.fields:
                self._claim(draft.node_tag, name, draft)

    def _claim(self, tag: str, name: str, draft: StepDraft) -> None:
        """``draft`` produces the field, and everything under it when it is a node field."""
        # The first claim stands: deeper steps claim first (`_index`).
        self.producer.setdefault(FieldKey(tag, name), draft)
        node = self.registry.get(tag)
        child = self.registry.child(node, name) if node else None
        for key in self.registry.subtree_fields(child) if child is not None else ():
            self.producer.setdefault(key, draft)

    def _node(self, tag: str) -> Node:
        node = self.registry.get(tag)
        assert node is not None
        return node

    # -- parallel follow-ups -----------------------------------------------------------

    def split_parallel(self, needs: list[Need]) -> None:
        """Move fields of a parallel step that need a sibling into follow-up steps."""
        sibling_needs: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for need in needs:
            # Only a need the prompt names splits a node (D4): a weak one (the context)
            # gives way to the same initial context the node's fields share.
            if need.weak:
                continue
            producer_tag, producer_name = need.producer
            for draft in self._consumer_steps(need.consumer):
                if draft.modifier != "parallel" or producer_tag != draft.node_tag:
                    continue
                if producer_name not in draft.fields:
                    continue
                field_name = need.consumer.field_name
                # A need of the whole node is one of each field the step generates.
                names = draft.fields if field_name is None else (field_name,)
                for name in names:
                    if name != producer_name:
                        sibling_needs[draft.id][name].add(producer_name)
        if sibling_needs:
            self.drafts = [
                layer
                for draft in self.drafts
                for layer in _layers(draft, sibling_needs.get(draft.id), self._node(draft.node_tag))
            ]
            self._index()

    # -- edges ---------------------------------------------------------------------------

    def add_declared_order(self) -> None:
        """Chain a sequential node's steps, and order subtrees within sequential ancestors.

        Transforms stand outside the declared order: they wait only for what they read.
        """
        for tag, all_drafts in self.by_node.items():
            drafts = [draft for draft in all_drafts if draft.transform is None]
            if not drafts:
                continue
            # D1, D3: one step per field in declaration order, each after the one before
            # (``drafts`` are in field order, see `draft_steps`).
            if drafts[0].modifier == "sequential":
                for earlier, later in itertools.pairwise(drafts):
                    self.edges[later.id].setdefault(earlier.id, None)
            self._order_against_ancestors(tag, drafts)

    def _order_against_ancestors(self, tag: str, drafts: list[StepDraft]) -> None:
        node = self._node(tag)
        while node.parent is not None:
            parent = self._node(node.parent)
            ancestor_drafts = [d for d in self.by_node.get(parent.tag, []) if d.transform is None]
            if ancestor_drafts and ancestor_drafts[0].modifier == "sequential":
                position = _field_index(parent, node.field_name or "")
                for ancestor_draft in ancestor_drafts:
                    for draft in drafts:
                        # At the same position: the step that creates the node.
                        if ancestor_draft.position <= position:
                            self.edges[draft.id].setdefault(ancestor_draft.id, None)
                        else:
                            self.edges[ancestor_draft.id].setdefault(draft.id, None)
            node = parent

    def add_needs(self, needs: list[Need]) -> None:
        """Make each consumer step wait for its producer, unless that defies the order;
        then add the weak needs that neither the order nor those needs contradict."""
        self._add_strong([need for need in needs if not need.weak])
        # The edges as they stand before any weak need: each weak need is judged against
        # the declared order and the strong needs alone, so the order the weak needs come in
        # decides nothing.
        strong = {ident: set(prerequisites) for ident, prerequisites in self.edges.items()}
        for need in needs:
            if need.weak:
                self._add_weak(need, strong)
        self._drop_implied(strong)

    def _drop_implied(self, strong: Mapping[str, set[str]]) -> None:
        """Drop each weak edge that the step's other edges already imply, so that the
        plan shows what a step waits for once."""
        for consumer, prerequisites in self.edges.items():
            # Sorted: which of two weak edges that imply each other stays must not depend on
            # the order they were added in.
            for producer in sorted(set(prerequisites) - strong.get(consumer, set())):
                need = prerequisites.pop(producer)
                if not _waits_for(self.edges, consumer, producer):
                    prerequisites[producer] = need

    def _add_weak(self, need: Need, strong: Mapping[str, set[str]]) -> None:
        """Make the consumer steps wait for the producer, except a step of the same node
        (their order is declared, or their context the same) and where the declared
        order or the strong needs put the producer after the consumer: the consumer then
        shows the value as it is before the producer runs."""
        producer = self.producer.get(need.producer)
        if producer is None:
            return
        for consumer in self._consumer_steps(need.consumer):
            if consumer.id == producer.id or producer.id in self.edges[consumer.id]:
                continue
            # Steps of one node show each other's fields by the declared order or not at
            # all (the same initial context), but what commands make of a sibling's
            # fields is a value of its own, waited for.
            same_node = consumer.node_tag == producer.node_tag and producer.transform is None
            if same_node and not need.through_commands:
                continue
            if self._sibling_family(consumer, producer, strong):
                continue
            if self._order_conflict(consumer, producer) is not None:
                continue
            # The producer already waits for the consumer: this edge would close a cycle. A
            # weak need gives way, and the consumer shows the value as it is when it starts.
            if _waits_for(strong, producer.id, consumer.id):
                continue
            self.edges[consumer.id][producer.id] = need
            self._read_partially(consumer, producer, need)
            self._align(consumer, producer, need)

    def _sibling_family(
        self, consumer: StepDraft, producer: StepDraft, strong: Mapping[str, set[str]]
    ) -> bool:
        """Whether ``producer`` is a split step below a field that another step of the
        consumer's node generates, a step the consumer does not wait for: what the split
        step fills is part of that field, unseen to the consumer (the same initial
        context of a ``@parallel`` node)."""
        creator_id = producer.creator
        while creator_id is not None:
            creator = self.producer[creator_id]
            if creator.node_tag == consumer.node_tag:
                return creator.id != consumer.id and not _waits_for(strong, consumer.id, creator.id)
            creator_id = creator.creator
        return False

    def _add_strong(self, needs: list[Need]) -> None:
        for need in needs:
            producer = self.producer.get(need.producer)
            if producer is None:
                continue
            for consumer in self._consumer_steps(need.consumer):
                if consumer.id == producer.id:
                    if need.through_commands:
                        self.diagnostics.append(self._self_cycle(consumer, need))
                    continue
                if self._shown_unresolved(need, consumer, producer):
                    continue
                if producer.id in self.edges[consumer.id]:
                    self._align(consumer, producer, need)
                    self._read_partially(consumer, producer, need)
                    continue
                conflict = self._order_conflict(consumer, producer)
                if conflict is not None:
                    self.diagnostics.append(_order_diagnostic(need, *conflict))
                else:
                    self.edges[consumer.id][producer.id] = need
                    self._align(consumer, producer, need)
                    self._read_partially(consumer, producer, need)

    def _shown_unresolved(self, need: Need, consumer: StepDraft, producer: StepDraft) -> bool:
        """Whether ``{name}`` in a nested class's text names a field that a split step
        inside the nodes ``consumer`` generates whole fills: the prompt shows it as it
        shows the step's own fields, as the step cannot wait for what comes after it."""
        if need.variable is None:
            return False
        current = producer
        while current.creator is not None:
            current = self.producer[current.creator]
            if current.id == consumer.id:
                return True
        return False

    def _align(self, consumer: StepDraft, producer: StepDraft, need: Need) -> None:
        """Keep the list levels an edge's instances align on: the fewest any of its needs
        allows; an edge of the declared order has none (every instance waits for all)."""
        if self.edges[consumer.id].get(producer.id) is None:
            return
        levels = min(
            need.element_levels,
            self.registry.list_levels(consumer.node_tag),
            self.registry.list_levels(producer.node_tag),
        )
        key = (consumer.id, producer.id)
        # The fewest over every need of the edge: an instance waits for all that any one of
        # them asks for.
        self.element_levels[key] = min(self.element_levels.get(key, levels), levels)

    def _read_partially(self, consumer: StepDraft, producer: StepDraft, need: Need) -> None:
        """Keep whether an edge is read partially: every need of it reads the producer's
        instances through a ``.**.`` pluck whose elements hold the producer's node (not
        an edge of the declared order, nor a step that generates the plucked list)."""
        below = need.partial_below
        partial = (
            self.edges[consumer.id].get(producer.id) is not None
            and below is not None
            and (producer.node_tag == below or _is_below(producer.node_tag, below))
        )
        key = (consumer.id, producer.id)
        # Partial only when every need of the edge is: one that needs every instance makes
        # a failed one stop the consumer.
        self.partial[key] = self.partial.get(key, True) and partial

    def _consumer_steps(self, consumer: Consumer) -> list[StepDraft]:
        drafts = self.by_node.get(consumer.node_tag, [])
        if consumer.field_name is None:
            # What a node's steps wait for is for those that show it to a model.
            return [draft for draft in drafts if draft.transform is None]
        return [draft for draft in drafts if consumer.field_name in draft.fields]

    def _order_conflict(
        self, consumer: StepDraft, producer: StepDraft
    ) -> tuple[Node, str, str] | None:
        """The @sequential node and the two fields, when ``consumer`` needs a later one
        (a transform is in no declared order: a cycle through one is reported as such)."""
        if consumer.transform is not None or producer.transform is not None:
            return None
        if consumer.node_tag == producer.node_tag:
            later = consumer.modifier == "sequential" and producer.position > consumer.position
            if later:
                return self._node(consumer.node_tag), consumer.fields[0], producer.fields[0]
            return None
        if producer.modifier == "sequential" and _is_below(consumer.node_tag, producer.node_tag):
            node = self._node(producer.node_tag)
            link = _link(producer.node_tag, consumer.node_tag)
            if producer.position > _field_index(node, link):
                return node, link, producer.fields[0]
        if consumer.modifier == "sequential" and _is_below(producer.node_tag, consumer.node_tag):
            node = self._node(consumer.node_tag)
            link = _link(consumer.node_tag, producer.node_tag)
            if _field_index(node, link) > consumer.position:
                return node, consumer.fields[0], link
        return None

    # -- ordering ------------------------------------------------------------------------

    def finish(self) -> tuple[ExecutionPlan, list[Diagnostic]]:
        # Ties broken in draft order (nodes in tree order, steps in field order): the same
        # classes always give the same plan.
        order, cycles = topological_order([d.id for d in self.drafts], self.edges)
        for cycle in cycles:
            self.diagnostics.append(self._cycle_diagnostic(cycle))
        by_id = {draft.id: draft for draft in self.drafts}
        steps = tuple(self._step(by_id[ident]) for ident in order)
        return ExecutionPlan(steps=steps), self.diagnostics

    def _unseen(self, draft: StepDraft) -> tuple[str, ...]:
        """The fields of ``draft``'s node that other model steps generate in no order
        relative to it (neither waits for the other, directly or through other steps)."""
        if draft.transform is not None:
            return ()
        return tuple(
            name
            for other in self.by_node[draft.node_tag]
            if other.id != draft.id
            and other.transform is None
            and not _waits_for(self.edges, draft.id, other.id)
            and not _waits_for(self.edges, other.id, draft.id)
            for name in other.fields
        )

    def _step(self, draft: StepDraft) -> PlanStep:
        return PlanStep(
            id=draft.id,
            node_tag=draft.node_tag,
            element_path=element_path(self.registry, draft.node_tag),
            fields=draft.fields,
            modifier=draft.modifier,
            model=draft.model,
            resample=draft.resample,
            transform=draft.transform,
            unseen=self._unseen(draft),
            creator=self.producer[draft.creator].id if draft.creator else None,
            list_levels=self.registry.list_levels(draft.node_tag),
            depends_on=tuple(sorted(self.edges.get(draft.id, {}))),
            element_waits=tuple(
                ElementWait(step_id=producer, levels=levels)
                for producer in sorted(self.edges.get(draft.id, {}))
                if (levels := self.element_levels.get((draft.id, producer), 0)) > 0
            ),
            partial_reads=tuple(
                producer
                for producer in sorted(self.edges.get(draft.id, {}))
                if self.partial.get((draft.id, producer), False)
            ),
        )

    def _self_cycle(self, step: StepDraft, need: Need) -> Diagnostic:
        """A step (or transform) that reads a value commands make from its own output (a
        ``{name}`` in its own text naming a field the step merely generates is not one:
        the caller may supply that field)."""
        message = f"Dependency cycle: {step.id} -> {step.id}"
        hint = (
            f"{step.id!r} reads a value that commands make from its own output: remove "
            "the name it reads, or one of the commands that link them"
        )
        return need.diagnostic(self._node(step.node_tag), message, hint)

    def _cycle_diagnostic(self, cycle: list[str]) -> Diagnostic:
        by_id = {draft.id: draft for draft in self.drafts}
        tags = list(dict.fromkeys(by_id[ident].node_tag for ident in cycle))
        need = next(
            (
                self.edges[ident][prerequisite]
                for ident, prerequisite in zip(cycle, [*cycle[1:], cycle[0]], strict=True)
                if self.edges[ident].get(prerequisite) is not None
            ),
            None,
        )
        message = "Dependency cycle: " + " -> ".join([*cycle, cycle[0]])
        hint = "each step on the cycle waits for the next: remove one of the commands or " + (
            "runtime variables that link " + ", ".join(repr(tag) for tag in tags)
        )
        node = self._node(tags[0])
        if need is None:
            return node_diagnostic(node, message, hint)
        return need.diagnostic(node, message, hint)


def _layers(draft: StepDraft, needs: dict[str, set[str]] | None, node: Node) -> list[StepDraft]:
    """A parallel step split so that no field shares a step with a sibling it needs.

    Fields whose needs cannot be met (they need each other) get a step each, so that the
    cycle between them is reported.
    """
    if not needs:
        return [draft]
    layers: list[list[str]] = []
    placed: set[str] = set()
    remaining = list(draft.fields)
    while remaining:
        # Each layer holds the fields whose needed siblings are all in earlier layers: a
        # step each, and the needs then make each follow-up wait for what it reads.
        layer = [name for name in remaining if needs.get(name, set()) <= placed]
        if not layer:
            layers.extend([name] for name in remaining)
            break
        layers.append(layer)
        placed.update(layer)
        remaining = [name for name in remaining if name not in placed]
    return [
        replace(
            draft,
            id=step_id(draft.node_tag, tuple(layer)),
            fields=tuple(layer),
            position=_field_index(node, layer[0]),
        )
        for layer in layers
    ]


def _order_diagnostic(need: Need, node: Node, consumer: str, producer: str) -> Diagnostic:
    message = (
        f"In @sequential {display_name(node.node_class)!r}, {consumer!r} needs "
        f"{producer!r}, which is generated after it"
    )
    hint = (
        f"declare {producer!r} before {consumer!r}, make the node @parallel, give the field "
        "a value, or supply it in the inputs (validate(inputs) checks with them)"
    )
    return need.diagnostic(node, message, hint)


def _waits_for(edges: Mapping[str, Iterable[str]], step: str, prerequisite: str) -> bool:
    """Whether ``step`` waits for ``prerequisite``, directly or through other steps."""
    seen = {step}
    pending = [step]
    while pending:
        current = pending.pop()
        for earlier in edges.get(current, ()):
            if earlier == prerequisite:
                return True
            if earlier not in seen:
                seen.add(earlier)
                pending.append(earlier)
    return False


def _is_below(tag: str, ancestor: str) -> bool:
    return tag.startswith(ancestor + ".")


def _link(ancestor: str, tag: str) -> str:
    """The field of the node at ``ancestor`` that leads to the node at ``tag``."""
    return tag[len(ancestor) + 1 :].split(".", 1)[0]


def _field_index(node: Node, name: str) -> int:
    return [f.name for f in node.fields].index(name)


def _step_data(step: PlanStep) -> dict[str, object]:
    return {
        "id": step.id,
        "node_tag": step.node_tag,
        "element_path": step.element_path,
        "fields": list(step.fields),
        "modifier": step.modifier,
        "model": step.model,
        "resample": step.resample,
        "list_levels": step.list_levels,
        "transform": step.transform.expression if step.transform else None,
        "depends_on": list(step.depends_on),
    }
