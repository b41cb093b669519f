"""The values of a run as plain data: one nested dict per root task.

A node instance is addressed by its tag and one index per list level above and at it;
an index of ``None`` stands for elements not known yet (shown as ``[*]``): what is known
of them lives in the `PendingList` that stands for their
list. Prompt variables and ``outputs`` context entries that commands send to an instance
are kept beside the values. Everything here is plain data that could be serialised.

Values enter the state as they are, never altered: the caller's inputs (and the
defaults) when the run starts, a model's output when its step ends. Text that no prompt
could carry (a lone surrogate) is refused right there, naming where it stands. Nodes
and values are walked with explicit stacks, so depth is never a ``RecursionError``.

A mapping whose source was never produced and whose target has no default is a missing
value: an error at once, or, in a run that continues after failures, a
`MissingValue` kept here.
"""

from __future__ import annotations

import bisect
import copy
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, TypeVar

from pydantic import BaseModel

from langtree.prompts._values import Pending, PendingList, check_unicode, rebuild
from langtree.structure import Asset, Node, NodeField, NodeRegistry, TreeNode, input_only

__all__ = [
    "Address",
    "Indices",
    "MissingValue",
    "OnMissing",
    "Output",
    "RunState",
    "SendOrder",
    "Sent",
    "copied",
    "elements",
    "fill_defaults",
    "in_field_order",
    "instance_text",
    "known_defaults",
    "to_plain",
]


Indices: TypeAlias = tuple[int | None, ...]
"""One index per list level, from the root down (``None``: elements not known yet)."""

Sent: TypeAlias = list[tuple[Indices, object]]
"""The values a command sends, each with the indices of the iteration that sends it."""


@dataclass(frozen=True, slots=True, order=True)
class Address:
    """A node instance: its tag, and its index at each list level from the root down."""

    tag: str
    indices: Indices = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Output:
    """A context entry that a command sent to an instance (an ``outputs`` mapping, or a
    ``prompt`` mapping that no text names).

    Attributes:
        name: The entry's name (its title in the prompt is made from it).
        value: The value sent.
        field: The destination field when the command names one: the entry belongs to
            the step generating that field only (``None``: every step of the instance).
    """

    name: str
    value: object
    field: str | None = None


SendOrder: TypeAlias = tuple[int, ...]
"""Where a sent value stands among those sent to one place: the command's position in
definition order, then the indices of the instance that sent it (``-1`` for ``[*]``)."""

_T = TypeVar("_T")

OnMissing: TypeAlias = Literal["raise", "continue"]
"""What a missing value does: raise an ``ExecutionError`` at once, or be kept in
`RunState.missing` while the run goes on (a run with ``on_error="continue"``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MissingValue:
    """A mapping's target that got no value: its source was never produced and the
    target has no default.

    Attributes:
        task: The tag of the root task that holds the target.
        source: Where the source was read, e.g. ``task.research.documents[1].summary``.
        target: The target, e.g. ``'TaskAnswer.findings[1]'`` or ``{topic} in 'task.answer'``.
        message: What is wrong, in one line.
        hint: How to fix it.
    """

    task: str
    source: str
    target: str
    message: str
    hint: str


@dataclass(slots=True)
class RunState:
    """The known values of every root task, and what commands sent to instances.

    Attributes:
        roots: Each root task's values by tag: dicts for nodes, lists for node lists.
        prompt_values: Values for ``{name}`` in an instance's texts, one per source, in the
            order of what sent them.
        prompt_names: The names in ``prompt_values`` of each instance, in arrival order
            (so that one instance's values are found without a scan of every instance's).
        outputs: Context entries sent to an instance, in the order of what sent them.
        sent_order: The `SendOrder` of each value in ``prompt_values`` and ``outputs``.
        generated: The fields of each instance that steps have written.
        on_missing: What a missing value does (see `OnMissing`).
        missing: The missing values kept so far (with ``on_missing="continue"``).
        split: The fields split steps generate, with the id of the step, by node tag:
            inside a node another step generates whole, they stay unset (not even
            ``None``) until their own steps, which run where the field is missing, write
            them.
    """

    registry: NodeRegistry
    roots: dict[str, dict[str, object]]
    prompt_values: dict[tuple[Address, str], list[object]] = field(default_factory=dict)
    prompt_names: dict[Address, list[str]] = field(default_factory=dict)
    outputs: dict[Address, list[Output]] = field(default_factory=dict)
    sent_order: dict[object, list[SendOrder]] = field(default_factory=dict)
    generated: dict[Address, set[str]] = field(default_factory=dict)
    on_missing: OnMissing = "raise"
    missing: list[MissingValue] = field(default_factory=list)
    split: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    @classmethod
    def start(
        cls,
        registry: NodeRegistry,
        inputs: Mapping[str, object],
        *,
        on_missing: OnMissing = "raise",
        split: Mapping[str, Mapping[str, str]] | None = None,
    ) -> RunState:
        """The state before any step: the caller's inputs, with defaults filled in.

        Args:
            registry: The nodes.
            inputs: The caller's values by root task tag.
            on_missing: What a missing value does (see `OnMissing`).
            split: The fields split steps generate, with the id of the step, by node
                tag.

        Raises:
            ExecutionError: A value holds a lone surrogate, which no prompt can carry
                (see `check_unicode()`).
        """
        roots = {}
        for root in registry.roots():
            values = to_plain(inputs.get(root.tag, {}))
            roots[root.tag] = values if isinstance(values, dict) else {}
            fill_defaults(registry, root, roots[root.tag])
            check_unicode(roots[root.tag], root.tag)
        return cls(registry=registry, roots=roots, on_missing=on_missing, split=split or {})

    def send_prompt_value(
        self, address: Address, name: str, value: object, order: SendOrder = ()
    ) -> None:
        """Add one source's value for ``{name}`` in an instance's texts, at its place in
        the ``order`` of what sent them (the same whichever source finished first)."""
        sources = self.prompt_values.get((address, name))
        if sources is None:
            sources = self.prompt_values[(address, name)] = []
            self.prompt_names.setdefault(address, []).append(name)
        self._insert(("prompt", address, name), sources, value, order)

    def send_output(self, address: Address, entry: Output, order: SendOrder = ()) -> None:
        """Add a context entry for an instance, at its place in the ``order`` of what
        sent them."""
        self._insert(("outputs", address), self.outputs.setdefault(address, []), entry, order)

    def _insert(self, key: object, items: list[_T], item: _T, order: SendOrder) -> None:
        orders = self.sent_order.setdefault(key, [])
        at = bisect.bisect_right(orders, order)
        orders.insert(at, order)
        items.insert(at, item)

    def prompt_values_of(self, address: Address) -> dict[str, list[object]]:
        """The values sent for each ``{name}`` in an instance's texts, by name."""
        return {
            name: self.prompt_values[(address, name)] for name in self.prompt_names.get(address, ())
        }

    def instance(self, address: Address) -> dict[str, object] | None:
        """The values of a node instance, or ``None`` when they are not known yet.

        An instance at ``[*]`` of a `PendingList` has the values every element
        of that list will have.
        """
        path = self.registry.path(address.tag)
        value: object = self.roots.get(path[0].tag)
        indices = iter(address.indices)
        for node in path[1:]:
            value = value.get(node.field_name or "") if isinstance(value, dict) else None
            for _ in range(node.list_depth):
                value = _element(value, next(indices, None))
        return value if isinstance(value, dict) else None

    def view(self, address: Address) -> dict[str, object] | None:
        """The values of an instance as far as they can be told before the run.

        An instance inside a value that a step will produce (a node generated whole)
        sees every field as `Pending` on that step, or on the split step that generates
        the field (or a node field on the way to it); one whose values are simply absent
        gives ``None``.
        """
        values = self.instance(address)
        if values is not None:
            return values
        marker = self._pending_above(address)
        node = self.registry.get(address.tag)
        if marker is None or node is None:
            return None
        producer = self._split_above(address.tag) or marker.step_id
        split = self.split.get(node.tag, {})
        # A split field shows once its step has passed (`write_generated()`), as in a run.
        passed = self.generated.get(address, set())
        return {
            f.name: Pending(split.get(f.name, producer))
            for f in node.fields
            if f.name not in split or f.name in passed
        }

    def _split_above(self, tag: str) -> str | None:
        """The split step of the deepest node field on the way to ``tag`` that one
        generates: it makes the node, inside the node its creator made."""
        found = None
        for node in self.registry.path(tag)[1:]:
            found = self.split.get(node.parent or "", {}).get(node.field_name or "", found)
        return found

    def _pending_above(self, address: Address) -> Pending | None:
        """The `Pending` value that holds ``address``, if there is one."""
        path = self.registry.path(address.tag)
        value: object = self.roots.get(path[0].tag)
        indices = iter(address.indices)
        for node in path[1:]:
            if isinstance(value, Pending):
                return value
            value = value.get(node.field_name or "") if isinstance(value, dict) else None
            for _ in range(node.list_depth):
                if isinstance(value, Pending) and not isinstance(value, PendingList):
                    return value
                value = _element(value, next(indices, None))
        return value if isinstance(value, Pending) else None

    def instances(self, tag: str) -> list[Address]:
        """Every instance of the node at ``tag``; unknown lists give one ``[*]`` instance."""
        path = self.registry.path(tag)
        return [Address(tag, indices) for indices in _expand(self.roots.get(path[0].tag), path[1:])]

    def parent(self, address: Address) -> Address | None:
        """The instance that holds ``address``, or ``None`` for a root."""
        node = self.registry.get(address.tag)
        if node is None or node.parent is None:
            return None
        return Address(node.parent, address.indices[: len(address.indices) - node.list_depth])

    def write_generated(self, address: Address, values: Mapping[str, object]) -> None:
        """Store what a step produced for an instance; its fields count as generated.

        A node the step produced whole holds what its validated output holds: a field
        the model left out has its default (``None`` too), so that a command reading it
        finds that value, not a field never produced; a field a split step generates
        stays unset for that step, and the fields of the nodes split steps visit count
        as generated there (their context orders them as the dry run does).

        Raises:
            ExecutionError: A value holds a lone surrogate, which no later prompt could
                carry; nothing is stored.
        """
        target = self.instance(address)
        node = self.registry.get(address.tag)
        if target is None and node is not None and node.tag in self.split:
            self._passed_split(node, address, values)
            return
        if target is None or node is None:
            return
        path = instance_text(self.registry, address)
        check_unicode(dict(values), path, subject="The value generated for", generated=True)
        for name, value in values.items():
            child, node_field = self.registry.child(node, name), node.field(name)
            if child is not None and node_field is not None:
                for _, element in elements(value, node_field.shape.list_depth):
                    if isinstance(element, dict):
                        fill_defaults(self.registry, child, element, every=True, later=self.split)
        target.update(values)
        in_field_order(target, node)
        self.generated.setdefault(address, set()).update(values)
        if self.split:
            self._generated_below(node, address, values)

    def _passed_split(self, node: Node, address: Address, values: Mapping[str, object]) -> None:
        """Record, for an instance inside a value a step will produce (the dry run), that
        a split step has passed: its fields show from now on, and they and the fields
        the creator writes count as generated there, as they do in a run."""
        split = self.split[node.tag]
        creators = {f.name for f in node.fields if f.name not in split}
        self.generated.setdefault(address, creators).update(values)

    def _generated_below(self, node: Node, address: Address, values: Mapping[str, object]) -> None:
        """Record the fields a step wrote into the nodes below ``address`` that split
        steps visit as generated at those instances."""
        pending = [(node, address.indices, values)]
        while pending:
            current, indices, current_values = pending.pop()
            for name, value in current_values.items():
                child, node_field = self.registry.child(current, name), current.field(name)
                if child is None or node_field is None:
                    continue
                for inner, element in elements(value, node_field.shape.list_depth):
                    if not isinstance(element, dict):
                        continue
                    if child.tag in self.split:
                        at = Address(child.tag, indices + inner)
                        self.generated.setdefault(at, set()).update(element)
                    pending.append((child, indices + inner, element))


def in_field_order(values: dict[str, object], node: Node) -> None:
    """Put a node's values in its fields' declared order, in place (any other key last).

    Steps and commands that run in no set order relative to each other (a `@parallel`
    node's steps, two broadcasts into one element) write a node's fields in any order:
    kept in declared order, the values show the same in every prompt.
    """
    ordered = {f.name: values.pop(f.name) for f in node.fields if f.name in values}
    ordered.update(values)
    values.clear()
    values.update(ordered)


def instance_text(registry: NodeRegistry, address: Address) -> str:
    """A readable instance path: ``task.report.sections[0].paragraphs[*]``."""
    indices = iter(address.indices)
    parts = []
    for node in registry.path(address.tag):
        part = node.field_name or node.tag
        for _ in range(node.list_depth):
            index = next(indices, None)
            part += "[*]" if index is None else f"[{index}]"
        parts.append(part)
    return ".".join(parts)


def _element(value: object, index: int | None) -> object:
    """Element ``index`` of a list; ``None`` picks a `PendingList`'s element."""
    if isinstance(value, PendingList):
        return value.element if index is None else None
    if isinstance(value, list) and index is not None and index < len(value):
        return value[index]
    return None


def _expand(value: object, path: list[Node]) -> Iterator[tuple[int | None, ...]]:
    """The indices of every instance at the end of ``path``, one level at a time."""
    found: list[tuple[tuple[int | None, ...], object]] = [((), value)]
    for node in path:
        name = node.field_name or ""
        found = [
            (indices + inner, element)
            for indices, current in found
            if not (isinstance(current, dict) and name in current and current[name] is None)
            for inner, element in elements(
                current.get(name) if isinstance(current, dict) else current, node.list_depth
            )
        ]
    return (indices for indices, _ in found)


def elements(value: object, depth: int) -> Iterator[tuple[tuple[int | None, ...], object]]:
    """The elements ``depth`` list levels down, with their indices.

    A value that is not a list yet (absent, or a `Pending` marker) stands for
    elements not known: one element at index ``None``, the value itself. A
    `PendingList` gives its element at index ``None``.
    """
    if depth == 0:
        yield (), value
        return
    if isinstance(value, PendingList):
        for indices, inner in elements(value.element, depth - 1):
            yield (None, *indices), inner
        return
    if not isinstance(value, list):
        yield (None,) * depth, value
        return
    for index, element in enumerate(value):
        for indices, inner in elements(element, depth - 1):
            yield (index, *indices), inner


def to_plain(value: object) -> object:
    """A value as plain data: nodes become dicts of the fields that were set (the
    others are generated or take their defaults), other models dicts of every field;
    tuples become lists.

    Raises:
        ExecutionError: The value nests deeper than 10,000 levels (it contains itself).

    Examples:
        >>> from langtree import TreeNode
        >>> class Note(TreeNode):
        ...     text: str
        ...     mood: str = "calm"
        >>> to_plain([Note(text="hi")])
        [{'text': 'hi'}]
    """
    return rebuild(value, _plain_level)


def copied(value: object) -> object:
    """``value`` as plain data (see `to_plain()`) that shares nothing with it: what
    is not a container is deep-copied too.

    Raises:
        ExecutionError: The value nests deeper than 10,000 levels (it contains itself).
    """
    return rebuild(value, _copied_level)


def _copied_level(value: object) -> object:
    shape = _plain_level(value)
    return copy.deepcopy(shape) if shape is value else shape


def _plain_level(value: object) -> object:
    """One level of ``value`` as plain data (see `rebuild()`);
    an asset stays one (a frozen value, shown in prompts as a placeholder)."""
    if isinstance(value, Asset):
        return value
    if isinstance(value, BaseModel):
        names = value.model_fields_set if isinstance(value, TreeNode) else type(value).model_fields
        return {name: getattr(value, name) for name in names}
    if isinstance(value, Mapping):
        return {str(key): item for key, item in value.items()}
    if isinstance(value, list | tuple):
        return list(value)
    return value


def known_defaults(node: Node) -> dict[str, object]:
    """The node's fields whose defaults make them known (D2), with those defaults."""
    return {f.name: _default(node, f) for f in node.fields if _known_by_default(node, f)}


def _known_by_default(node: Node, node_field: NodeField) -> bool:
    """Whether the field's default is its value when nothing else gives one: a default
    that makes it known (D2), or any default of a field only the caller gives (an
    ``input()`` or asset field left out takes its default, ``None`` too, as pydantic
    would: no step will ever write it)."""
    if node_field.has_known_default:
        return True
    info = node.node_class.model_fields[node_field.name]
    return input_only(node_field) and not info.is_required()


def _fills(node: Node, node_field: NodeField, *, every: bool) -> bool:
    """Whether the field's default is set where the values lack it (see `fill_defaults()`)."""
    if _known_by_default(node, node_field) or not every:
        return _known_by_default(node, node_field)
    info = node.node_class.model_fields[node_field.name]
    return not info.is_required() and not info.default_factory_takes_validated_data


def _default(node: Node, node_field: NodeField) -> object:
    info = node.node_class.model_fields[node_field.name]
    return copied(info.get_default(call_default_factory=True))


def fill_defaults(
    registry: NodeRegistry,
    root: Node,
    values: dict[str, object],
    *,
    every: bool = False,
    later: Mapping[str, Collection[str]] | None = None,
) -> None:
    """Set each known default that the values lack, in this node and the nodes below.

    Args:
        registry: The nodes.
        root: The node that ``values`` are of.
        values: The values; changed in place.
        every: Set every default, ``None`` too (the values are a model's validated
            output), not only those that make a field known (D2).
        later: Fields left unset, by node tag: split steps write them later.
    """
    pending = [(root, values)]
    while pending:
        node, node_values = pending.pop()
        unset = later.get(node.tag, ()) if later else ()
        for node_field in node.fields:
            if (
                node_field.name not in node_values
                and node_field.name not in unset
                and _fills(node, node_field, every=every)
            ):
                node_values[node_field.name] = _default(node, node_field)
            child = registry.child(node, node_field.name)
            if child is None:
                continue
            found = elements(node_values.get(node_field.name), node_field.shape.list_depth)
            pending.extend((child, element) for _, element in found if isinstance(element, dict))
