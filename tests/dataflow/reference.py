"""A reference scheduler: the simplest run that is obviously right, to check the engine.

It runs one step instance at a time, with no concurrency, in an order worked out here
from what each part of a run reads and writes, independently of the plan's dependencies
(`PlanStep.depends_on`), of its order and of the engine's bookkeeping. It shares with the
engine only what is not scheduling: the plan's steps (which fields each step generates,
its model and samples), the run's state of values, the mapping writes, the prompt
assembly, transforms and resampling's aggregate.

**Units.** A run is made of *units*: each plan step (with all its instances, run one after
another) and each ``@each``/``@all`` command (carried out once, for every instance of its
node: its ``value`` targets, then its ``prompt``/``outputs`` values). A unit reads and
writes *keys*: a node's field (`FieldKey`), the values ``prompt`` mappings send for a
name to a node (`Sent`), and the context entries ``outputs`` mappings send to a node
(`Outputs`).

**What a unit reads** (DESIGN D4: "a step starts when everything its node and its prompt
need is known"):

- every unit reads the fields that lead from its root task to its node (its instances
  exist only once those are known);
- a step reads, *explicitly*, every field or sent value that a ``{name}`` in its prompt's
  texts resolves to (D9), the context entries sent to its node, and nothing else it
  names; and, *through its context*, every known field of its node other than its own,
  with everything below it (D10's ``{COLLECTED_CONTEXT}``);
- a transform reads the fields its expression names, with everything below them;
- a command reads its inclusion path, its sources (with everything below them), and, for
  what it sends or broadcasts to elements, the fields that lead to those elements.

**Order.** A unit comes after every unit that writes what it reads explicitly, and after
the units before it in the declared order (D3: a ``@sequential`` node's steps in field
order; a subtree's steps between its ancestor's steps before and after the field that
leads to it). A step comes after the writers of what its context shows too, unless that
writer already comes after the step through the explicit and declared order (a parent's
later sibling, a subtree that reads the step's own fields): the context then shows the
value as it is when the step starts, which is the same in any run. Units are run in an
order that respects every edge; which one of several ready units goes first does not
matter when the edges are complete, and the reference checks that it does not by
running in two opposite tie-breaking orders.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from langchain_core.utils.function_calling import convert_to_openai_tool

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.dsl._commands import AllCommand
from langtree.prompts._dataflow import apply_flow
from langtree.prompts._preview import PromptSetup
from langtree.prompts._state import Address, RunState, to_plain
from langtree.runtime.calls._schema import output_schema
from langtree.runtime.engine._known_parts import KnownParts
from langtree.runtime.engine._outcome import run_result
from langtree.runtime.engine._resampling import aggregate
from langtree.runtime.engine._transforms import compute
from langtree.structure.commands._flows import Flow
from langtree.structure.commands._placeholders import find_placeholders
from langtree.structure.planning._known import field_holder
from langtree.structure.planning._plan import PlanStep
from langtree.structure.tree._registry import FieldKey, NodeRegistry
from langtree.structure.tree._tree import Node, NodeField
from langtree.testing import FakeChatModel
from langtree.testing._examples import example_value
from langtree.testing._fake_model import FakeRequest

__all__ = ["Call", "ReferenceRun", "answer", "reference_run"]


@dataclass(frozen=True, slots=True)
class Sent:
    """The values ``prompt`` mappings send for ``{name}`` to the node at ``tag``."""

    tag: str
    name: str


@dataclass(frozen=True, slots=True)
class Outputs:
    """The context entries ``outputs`` mappings send to the node at ``tag``."""

    tag: str


Key = FieldKey | Sent | Outputs


@dataclass(frozen=True, slots=True)
class Unit:
    """A plan step (``kind="step"``, by plan position) or a command (by flow index)."""

    kind: str
    index: int


@dataclass(slots=True)
class Access:
    """What a unit reads (explicitly, and through its context) and writes; for a
    command, also what its mappings' sources read and the nodes its data goes to."""

    reads: set[Key] = field(default_factory=set)
    context: set[Key] = field(default_factory=set)
    writes: set[Key] = field(default_factory=set)
    sources: set[Key] = field(default_factory=set)
    destinations: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class Call:
    """One model call: the instance, the step's fields and the prompt's text."""

    node_path: str
    fields: tuple[str, ...]
    text: str


@dataclass(frozen=True, slots=True)
class ReferenceRun:
    """What the reference sent and produced."""

    calls: tuple[Call, ...]
    dumps: Mapping[str, object]
    order: tuple[Unit, ...]


class CycleError(AssertionError):
    """The reference found no order: the units wait for each other."""


# -- the model's answers -------------------------------------------------------------------


def answer(schema: Mapping[str, object], text: str) -> dict[str, object]:
    """Values valid for ``schema`` whose free strings carry a digest of the prompt, so
    that a prompt that differs shows in every value that depends on its answer."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    members = set(_enum_members(schema))
    value = example_value(schema)
    assert isinstance(value, dict)
    return _marked(value, digest, members)  # type: ignore[return-value]


def _enum_members(schema: object) -> Iterator[object]:
    if isinstance(schema, Mapping):
        for key, value in schema.items():
            if key == "enum" and isinstance(value, list):
                yield from value
            else:
                yield from _enum_members(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _enum_members(item)


def _marked(value: object, digest: str, members: set[object]) -> object:
    if isinstance(value, str) and value not in members:
        return f"{value} {digest}"
    if isinstance(value, dict):
        return {key: _marked(item, digest, members) for key, item in value.items()}
    if isinstance(value, list):
        return [_marked(item, digest, members) for item in value]
    return value


# -- what each unit reads and writes --------------------------------------------------------


class Accesses:
    """The reads and writes of every unit of a run."""

    def __init__(self, setup: PromptSetup) -> None:
        self.registry = setup.registry
        self.steps = setup.plan.steps
        self.flows = list(setup.analysis.flows)
        self.settings = setup.analysis.settings
        self.outline = setup.shape.outline
        # A prompt value that a text of its node names as {name} fills that name; one that
        # no text names is a context entry, as outputs are.
        self.sent_names: dict[str, set[str]] = defaultdict(set)
        for flow in self.flows:
            for mapping in flow.mappings:
                if mapping.scope == "prompt" and flow.destination is not None:
                    tag = flow.destination.node.tag
                    if self._named(tag, mapping.name):
                        self.sent_names[tag].add(mapping.name)
        self.with_steps = {step.node_tag for step in self.steps if step.transform is None}
        self.of: dict[Unit, Access] = {}
        for position, step in enumerate(self.steps):
            self.of[Unit("step", position)] = self._step(step)
        for index, flow in enumerate(self.flows):
            self.of[Unit("command", index)] = self._command(flow)

    def _named(self, tag: str, name: str) -> bool:
        """Whether a text of the node at ``tag`` writes ``{name}`` (or ``{name_2}``...)."""
        node = self.node(tag)
        texts = [node.text, *(f.description for f in node.fields)]
        names = {p.name for text in texts for p in find_placeholders(text)}
        numbered = {n.rpartition("_")[0] for n in names if n.rpartition("_")[2].isdigit()}
        return name in names or name in numbered

    def data_readers(self, command: Access) -> list[Unit]:
        """The model steps that wait for a command's data, as documented (D4): those of
        each node it writes or sends to and of the nodes below, and the step that
        generates such a node whole."""
        tags = [d for d in command.destinations if ":" not in d]
        leaves = [tuple(d.split(":")) for d in command.destinations if ":" in d]
        readers = []
        for position, step in enumerate(self.steps):
            if step.transform is not None:
                continue
            below = any(step.node_tag == t or step.node_tag.startswith(t + ".") for t in tags)
            generates = any(self._generates(step, tag) for tag in tags)
            # A value sent to a leaf field is shown to the step that generates it, or
            # to the step that generates its node whole.
            leaf = any(step.node_tag == t and name in step.fields for t, name in leaves)
            leaf_whole = any(
                self._generates(step, t) and not self._has_step(t, name) for t, name in leaves
            )
            if below or generates or leaf or leaf_whole:
                readers.append(Unit("step", position))
        return readers

    def _has_step(self, tag: str, name: str) -> bool:
        return any(s.node_tag == tag and name in s.fields for s in self.steps)

    def _generates(self, step: PlanStep, tag: str) -> bool:
        """Whether ``step`` generates the node at ``tag`` whole (as a field's value)."""
        return any(
            tag == f"{step.node_tag}.{name}" or tag.startswith(f"{step.node_tag}.{name}.")
            for name in step.fields
        )

    def sibling_family(self, unit: Unit, writer: Unit, after: Mapping[Unit, set[Unit]]) -> bool:
        """Whether ``writer`` is a split step below a field another model step of the
        unit's node generates, a step the unit does not come after."""
        if unit.kind != "step" or writer.kind != "step":
            return False
        position = {step.id: index for index, step in enumerate(self.steps)}
        creator = self.steps[writer.index].creator
        while creator is not None:
            maker = Unit("step", position[creator])
            if self.same_node_models(unit, maker):
                return maker != unit and not _reaches(after, unit, maker)
            creator = self.steps[maker.index].creator
        return False

    def same_node_models(self, one: Unit, other: Unit) -> bool:
        """Whether both units are model steps of one node."""
        if one.kind != "step" or other.kind != "step":
            return False
        first, second = self.steps[one.index], self.steps[other.index]
        both = first.transform is None and second.transform is None
        return both and first.node_tag == second.node_tag

    def unseen(self, unit: Unit, after: Mapping[Unit, set[Unit]]) -> tuple[str, ...]:
        """The fields of a step's node that other model steps generate in no order
        relative to it: its context never shows them (D3: the same initial context)."""
        return tuple(
            name
            for other in self.of
            if other != unit
            and self.same_node_models(unit, other)
            and not _reaches(after, unit, other)
            and not _reaches(after, other, unit)
            for name in self.steps[other.index].fields
        )

    def node(self, tag: str) -> Node:
        node = self.registry.get(tag)
        assert node is not None, tag
        return node

    def _below(self, node: Node, name: str) -> set[Key]:
        """A field, and every field below it when it holds nodes."""
        keys: set[Key] = {FieldKey(node.tag, name)}
        child = self.registry.child(node, name)
        if child is not None:
            keys |= set(self.registry.subtree_fields(child))
        return keys

    def _links(self, tag: str) -> set[Key]:
        """The fields that lead from the root task to the node at ``tag``."""
        return {
            FieldKey(node.parent, node.field_name)
            for node in self.registry.path(tag)[1:]
            if node.parent is not None and node.field_name is not None
        }

    def _along(self, start: Node, fields: Iterable[NodeField], *, whole: bool) -> set[Key]:
        """The fields of a path from ``start``; ``whole``: with what lies below its end."""
        keys: set[Key] = set()
        node: Node | None = start
        last: tuple[Node, str] | None = None
        for node_field in fields:
            assert node is not None
            keys.add(FieldKey(node.tag, node_field.name))
            last = (node, node_field.name)
            node = self.registry.child(node, node_field.name)
        if whole and last is not None:
            keys |= self._below(*last)
        return keys

    # -- steps ---------------------------------------------------------------------------

    def _step(self, step: PlanStep) -> Access:
        node = self.node(step.node_tag)
        access = Access(reads=self._links(node.tag))
        for name in step.fields:
            access.writes |= self._below(node, name)
        if step.transform is not None:
            for name in step.transform.names:
                key = self.registry.field_above(node, name)
                if key is not None:
                    access.reads |= self._below(self.node(key.node_tag), key.field_name)
            return access
        # Entries sent to the context are shown as the context is: when they are there.
        access.context |= self._entries(node, step.fields)
        for holder, chain, text in self._texts(node, step.fields):
            for placeholder in find_placeholders(text):
                named, below = self._resolved(placeholder.name, holder, chain)
                # A nested level inside a node the step generates whole shows its
                # defaults (D9), which nothing writes: only the step's own path is read.
                on_path = len(chain) <= len(self.registry.path(node.tag))
                if not on_path:
                    named = {k for k in named if not _nested(k, node.tag)}
                    below = {k for k in below if not _nested(k, node.tag)}
                if not _inside(named, node.tag):
                    access.reads |= named
                    access.context |= below
        setting = self.settings.get(node.tag)
        declared = setting.context if setting is not None else None
        if declared is None:
            for node_field in node.fields:
                if node_field.name not in step.fields:
                    access.context |= self._below(node, node_field.name)
        else:
            for entry in declared:
                access.context |= self._along(node, entry.fields, whole=True)
        return access

    def _entries(self, node: Node, fields: tuple[str, ...]) -> set[Key]:
        """The context entries commands send that a step shows: its node's, those of the
        nodes above with no steps of their own (they pass theirs down), and those of the
        nodes the step generates whole."""
        keys: set[Key] = {Outputs(node.tag)}
        for upper in self.registry.path(node.tag)[:-1]:
            if upper.tag not in self.with_steps:
                keys.add(Outputs(upper.tag))
        for name in fields:
            child = self.registry.child(node, name)
            keys |= {Outputs(n.tag) for n in self.registry.subtree(child)} if child else set()
        return keys

    def _texts(self, node: Node, fields: tuple[str, ...]) -> Iterator[tuple[Node, list[Node], str]]:
        """Each text a step's prompt shows: the docstrings from the root down, the
        descriptions of the fields that lead to the node and of the step's fields, and
        the texts of the classes inside a node field the step generates whole; with the
        node whose text it is and the levels above it."""
        path = self.registry.path(node.tag)
        shown = {
            "path": range(len(path)),
            "root": sorted({0, len(path) - 1}),
            "node": [len(path) - 1],
        }[self.outline]
        for depth in shown:
            level, chain = path[depth], path[: depth + 1]
            yield level, chain, level.text
            if depth + 1 < len(path) and self.outline == "path":
                link = level.field(path[depth + 1].field_name or "")
                assert link is not None
                yield level, chain, link.description
        for name in fields:
            node_field = node.field(name)
            assert node_field is not None
            yield node, path, node_field.description
            child = self.registry.child(node, name)
            for nested in self.registry.subtree(child) if child is not None else ():
                nested_chain = [*path, *self.registry.path(nested.tag)[len(path) :]]
                yield nested, nested_chain, nested.text
                for nested_field in nested.fields:
                    yield nested, nested_chain, nested_field.description

    def _resolved(self, name: str, holder: Node, chain: list[Node]) -> tuple[set[Key], set[Key]]:
        """What ``{name}`` in ``holder``'s text reads (D9): a value sent to the node, else
        the field of the nearest level that has it; and, apart, the fields below that
        field, which the value shows without naming them."""
        if name in self.sent_names.get(holder.tag, ()):
            return {Sent(holder.tag, name)}, set()
        base, _, number = name.rpartition("_")
        if base and number.isdigit() and base in self.sent_names.get(holder.tag, ()):
            return {Sent(holder.tag, base)}, set()
        for level in reversed(chain):
            if level.field(name) is not None:
                return {FieldKey(level.tag, name)}, self._below(level, name) - {
                    FieldKey(level.tag, name)
                }
        return set(), set()

    # -- commands ------------------------------------------------------------------------

    def _command(self, flow: Flow) -> Access:
        access = Access(reads=self._links(flow.node.tag))
        if flow.inclusion is not None:
            access.reads |= self._along(flow.node, flow.inclusion.fields, whole=False)
        destination = flow.destination
        start = flow.node
        if destination is not None:
            absolute = str(getattr(flow.command.command, "destination_path", ""))
            if absolute.startswith("task."):
                start = self.registry.path(destination.node.tag)[0]
        broadcast = (
            isinstance(flow.command.command, AllCommand) and flow.command.command.has_multiplicity
        )
        for mapping in flow.mappings:
            if mapping.is_literal:
                pass  # a literal reads nothing
            elif mapping.source is None:
                access.sources |= set(self.registry.subtree_fields(flow.node))
            else:
                access.sources |= self._along(flow.node, mapping.source.fields, whole=True)
            access.reads |= access.sources
            if destination is None:
                continue
            if mapping.scope == "value" and mapping.target is not None:
                path = destination.fields + mapping.target.fields
                written = self._along(start, path, whole=True)
                if broadcast:  # it fills the elements that exist, it creates none
                    written -= self._along(start, path[:-1], whole=False)
                access.writes |= written
                access.destinations.add(field_holder(self.registry, mapping.target).tag)
                if broadcast:
                    access.reads |= self._along(start, path[:-1], whole=False)
            elif mapping.scope in ("prompt", "outputs"):
                leaf = destination.field
                if leaf is not None and leaf.shape.node_class is None:
                    access.destinations.add(f"{destination.node.tag}:{leaf.name}")
                else:
                    access.destinations.add(destination.node.tag)
                # The values go to the destination's instances: they must exist.
                access.reads |= self._along(start, destination.fields, whole=False)
                tag = destination.node.tag
                named = mapping.scope == "prompt" and mapping.name in self.sent_names[tag]
                access.writes.add(Sent(tag, mapping.name) if named else Outputs(tag))
        return access


def _nested(key: Key, tag: str) -> bool:
    """Whether ``key`` is a field of a node below the node at ``tag``."""
    return isinstance(key, FieldKey) and key.node_tag.startswith(tag + ".")


def _inside(named: set[Key], tag: str) -> bool:
    """Whether a node field among ``named`` holds the node at ``tag``: a step there is
    part of what produces the value, so it cannot wait for it."""
    for key in named:
        if isinstance(key, FieldKey):
            prefix = f"{key.node_tag}.{key.field_name}"
            if tag == prefix or tag.startswith(prefix + "."):
                return True
    return False


# -- the order ------------------------------------------------------------------------------


def declared_order(setup: PromptSetup) -> set[tuple[Unit, Unit]]:
    """Pairs (earlier, later) of model steps in the declared order (D3)."""
    registry = setup.registry
    steps = setup.plan.steps
    models = [(position, step) for position, step in enumerate(steps) if step.transform is None]
    pairs: set[tuple[Unit, Unit]] = set()
    for position, step in models:
        path = registry.path(step.node_tag)
        for other_position, other in models:
            if other_position == position:
                continue
            if other.node_tag == step.node_tag:
                node = path[-1]
                if step.modifier == "sequential" and _index(node, other) < _index(node, step):
                    pairs.add((Unit("step", other_position), Unit("step", position)))
                continue
            ancestor = next((n for n in path[:-1] if n.tag == other.node_tag), None)
            if ancestor is None or other.modifier != "sequential":
                continue
            link = path[path.index(ancestor) + 1].field_name or ""
            link_index = [f.name for f in ancestor.fields].index(link)
            # The step that generates the field leading down (a split step's creator) goes
            # first, as do the ancestor's steps of fields declared before it.
            earlier = _index(ancestor, other) <= link_index
            first, second = (other_position, position) if earlier else (position, other_position)
            pairs.add((Unit("step", first), Unit("step", second)))
    return pairs


def _index(node: Node, step: PlanStep) -> int:
    return [f.name for f in node.fields].index(step.fields[0])


def edges(accesses: Accesses, declared: set[tuple[Unit, Unit]]) -> dict[Unit, set[Unit]]:
    """For each unit, the units it comes after."""
    writers: dict[Key, set[Unit]] = defaultdict(set)
    for unit, access in accesses.of.items():
        for key in access.writes:
            writers[key].add(unit)
    after: dict[Unit, set[Unit]] = {unit: set() for unit in accesses.of}
    for earlier, later in declared:
        after[later].add(earlier)
    for unit, access in accesses.of.items():
        for key in access.reads:
            for writer in writers.get(key, set()) - {unit}:
                # Commands writing one field go in definition order.
                co_writer = key in access.writes and writer.kind == unit.kind == "command"
                if co_writer and writer.index > unit.index:
                    continue
                after[unit].add(writer)
    for unit, access in accesses.of.items():
        if unit.kind == "command":
            for reader in accesses.data_readers(access):
                if reader not in _steps_behind(accesses, writers, access):
                    after[reader].add(unit)
    strong = {unit: set(units) for unit, units in after.items()}
    for unit, access in accesses.of.items():
        for key in access.context:
            for writer in writers.get(key, set()) - {unit}:
                if accesses.same_node_models(unit, writer):
                    continue  # declared order, or the same initial context (D3)
                if accesses.sibling_family(unit, writer, strong):
                    continue  # part of a sibling's field, unseen to it
                if not _reaches(strong, writer, unit):
                    after[unit].add(writer)
    return after


def _steps_behind(
    accesses: Accesses, writers: Mapping[Key, set[Unit]], command: Access
) -> set[Unit]:
    """The steps whose output a command's sources hold, directly or through the commands
    that wrote them: a step among them is part of what produces the command's data."""
    steps: set[Unit] = set()
    pending = list(command.sources)
    seen = set(pending)
    while pending:
        key = pending.pop()
        for writer in writers.get(key, set()):
            if writer.kind == "step":
                steps.add(writer)
                continue
            fresh = accesses.of[writer].sources - seen
            seen |= fresh
            pending += fresh
    return steps


def _reaches(after: Mapping[Unit, set[Unit]], start: Unit, target: Unit) -> bool:
    """Whether ``start`` comes after ``target``, through any number of edges."""
    seen = {start}
    pending = [start]
    while pending:
        unit = pending.pop()
        if unit == target:
            return True
        for earlier in after[unit] - seen:
            seen.add(earlier)
            pending.append(earlier)
    return False


def linear_order(after: Mapping[Unit, set[Unit]], *, reverse: bool) -> list[Unit]:
    """An order that respects every edge; ties broken by kind and index, or the reverse."""
    done: set[Unit] = set()
    order: list[Unit] = []
    units = sorted(after, key=lambda u: (u.kind, u.index), reverse=reverse)
    while len(order) < len(units):
        ready = next((u for u in units if u not in done and after[u] <= done), None)
        if ready is None:
            left = [u for u in units if u not in done]
            raise CycleError(f"the reference finds no order for {left}")
        done.add(ready)
        order.append(ready)
    return order


# -- running ----------------------------------------------------------------------------


def reference_run(
    structure: RunStructure,
    inputs: Mapping[object, object],
    respond: Callable[[Mapping[str, object], str], dict[str, object]] = answer,
    *,
    reverse: bool = False,
) -> ReferenceRun:
    """Run ``structure`` on ``inputs`` one step instance at a time (see the module)."""
    setup = structure._prompt_setup(structure._checked_inputs(inputs), {})
    accesses = Accesses(setup)
    after = edges(accesses, declared_order(setup))
    order = linear_order(after, reverse=reverse)
    state = RunState.start(setup.registry, setup.inputs, split=setup.split())
    builder = setup.builder(state)
    parts = KnownParts(setup.registry, builder.known, builder.split)
    runner = _Runner(setup, state, builder, parts, respond)
    for unit in order:
        if unit.kind == "command":
            runner.command(accesses.flows[unit.index])
        else:
            step = setup.plan.steps[unit.index]
            runner.step(replace(step, unseen=accesses.unseen(unit, after)))
    tasks: dict[str, type[TreeNode]] = dict(structure.tasks)
    result = run_result(
        tasks=tasks,
        state=state,
        trace=(),
        transforms=(),
        provenance=(),
        errors=(),
        skipped=(),
        resampled_values=runner.resampled,
        stopped=False,
        journal=None,
        cache=None,
    )
    dumps = {tag: result.dump(tag) for tag in tasks}
    return ReferenceRun(calls=tuple(runner.calls), dumps=dumps, order=tuple(order))


class _Runner:
    def __init__(self, setup, state, builder, parts, respond) -> None:  # type: ignore[no-untyped-def]
        self.setup = setup
        self.state = state
        self.builder = builder
        self.parts = parts
        self.respond = respond
        self.calls: list[Call] = []
        self.resampled: dict[tuple[str, str], float] = {}

    def command(self, flow: Flow) -> None:
        config = self.setup.config
        apply_flow(self.state, flow, config, scopes=("value",))
        apply_flow(self.state, flow, config, scopes=("prompt", "outputs", "external"))

    def step(self, step: PlanStep) -> None:
        for address in self.state.instances(step.node_tag):
            if None in address.indices:
                continue
            values = self.state.instance(address)
            if values is None or all(name in values for name in step.fields):
                continue
            if step.transform is not None:
                computed = compute(
                    step.transform,
                    step.fields[0],
                    address,
                    self.state,
                    self.setup.config,
                    self.resampled,
                )
                self.state.write_generated(address, {computed.field_name: computed.value})
            else:
                self._generate(step, address)

    def _generate(self, step: PlanStep, address: Address) -> None:
        registry: NodeRegistry = self.setup.registry
        node = registry.get(step.node_tag)
        assert node is not None
        prompt = self.builder.build(step, address)
        output, schema = output_schema(node, step, self.parts)
        parameters = convert_to_openai_tool(dict(schema))["function"]["parameters"]
        samples = []
        for _ in range(step.resample):
            self.calls.append(Call(prompt.node_path, step.fields, prompt.text))
            samples.append(output.model_validate(self.respond(parameters, prompt.text)))
        parsed = samples[0]
        if step.resample > 1:
            settings = self.setup.analysis.settings.get(step.node_tag)
            aggregations = settings.aggregations if settings else {}
            combined = aggregate(samples, step.fields, aggregations)
            parsed = combined.output
            for name, number in combined.resampled_values.items():
                self.resampled[(prompt.node_path, name)] = number
        values = to_plain(parsed)
        assert isinstance(values, dict)
        current = self.state.instance(address) or {}
        fresh = {name: value for name, value in values.items() if name not in current}
        self.parts.fill(node, fresh)
        self.state.write_generated(address, fresh)


def canonical(dumps: Mapping[str, object]) -> str:
    """The dumps as one JSON text, to compare runs."""
    return json.dumps(dumps, sort_keys=True, default=str)


# -- the engine, for comparison --------------------------------------------------------


def fake_provider(
    models: Iterable[str] = ("default",), yields: Callable[[str], int] = lambda path: 0
) -> tuple[LLMProvider, FakeChatModel]:
    """A provider whose every model is one `FakeChatModel` answering as `answer()` does.

    Each call first yields to the event loop ``yields(node_path)`` times: the calls
    finish in an order that the test chooses, not the machine's clock.
    """
    fake = FakeChatModel(responder=_Responder(yields))
    return LLMProvider(dict.fromkeys(models, fake)), fake


def engine_run(
    structure: RunStructure, inputs: Mapping[object, object], fake: FakeChatModel
) -> tuple[tuple[Call, ...], dict[str, object]]:
    """Run ``structure`` (whose provider's models are ``fake``) on the engine."""
    result = structure.run(inputs)
    calls = tuple(Call(c.node_path or "", c.fields, c.text) for c in fake.calls)
    return calls, {tag: result.dump(tag) for tag in structure.tasks}


class _Responder:
    def __init__(self, yields: Callable[[str], int]) -> None:
        self.yields = yields

    async def __call__(self, request: FakeRequest) -> dict[str, object]:
        for _ in range(self.yields(request.node_path or "")):
            await asyncio.sleep(0)
        assert request.schema is not None
        return answer(request.schema, request.text)
