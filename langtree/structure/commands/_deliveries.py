"""Which steps show what ``prompt`` and ``outputs`` mappings send (DESIGN D6).

A ``prompt.x`` value shows where a text of its destination writes ``{x}`` (``{x_1}``,
``{x_2}`` ... for several sources). Where no text does, it is a context entry titled
*X*, as ``outputs.x`` is: the specification's "External Forwarding Override" and
"Cross-Node Dependencies" examples give such values to the destination's context.

A context entry shows in the steps of its destination node (only in its field's step
when the destination is a leaf field). A node with no steps of its own (its fields are
known, or it is only the way to nodes below) passes its entries to every step below it;
a node that a step generates whole, inside a node field, shows them in that step. These
are the steps that the plan makes wait for the entry's sources, so an entry is always
sent before they start. What reaches no step at all is a `validate()` warning that
names the command, the target and why: nothing a command sends vanishes silently.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

from langtree.errors import Diagnostic
from langtree.structure.commands._flows import Flow, MappingFlow
from langtree.structure.commands._placeholders import find_placeholders
from langtree.structure.planning._plan import PlanStep
from langtree.structure.planning._steps import StepDraft
from langtree.structure.tree._registry import FieldKey, NodeRegistry
from langtree.structure.tree._tree import Node
from langtree.structure.tree._tree_node import display_name

__all__ = [
    "EntryReaders",
    "check_deliveries",
    "entry_readers",
    "in_context",
    "leaf_destination",
    "prompted_fields",
]

Generated = Mapping[str, Collection[str]]
"""The fields that models generate, by node tag (transforms send no prompt)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryReaders:
    """Where the context entries sent to nodes without steps of their own are shown.

    Attributes:
        passing: The tags of the nodes that pass their entries to every step below them.
        whole: For a field that a step generates whole (its node's tag and its name), the
            tags of the nodes inside it whose entries that step shows.
    """

    passing: frozenset[str] = frozenset()
    whole: Mapping[FieldKey, tuple[str, ...]] = field(default_factory=dict)


def prompted_fields(steps: Iterable[StepDraft] | Iterable[PlanStep]) -> dict[str, set[str]]:
    """The fields the steps' models generate, by node tag (a transform's step sends no
    prompt)."""
    generated: dict[str, set[str]] = {}
    for step in steps:
        if step.transform is None:
            generated.setdefault(step.node_tag, set()).update(step.fields)
    return generated


def in_context(flow: Flow, mapping_flow: MappingFlow) -> bool:
    """Whether a mapping's value is a context entry of its destination: an ``outputs``
    target, or a ``prompt`` target that no text of the destination writes as ``{name}``."""
    if mapping_flow.scope == "outputs":
        return True
    if mapping_flow.scope != "prompt" or flow.destination is None:
        return False
    node = flow.destination.node
    texts = (node.text, *(node_field.extraction.text for node_field in node.fields))
    return not any(_names_variable(text, mapping_flow.name) for text in texts)


@functools.lru_cache(maxsize=4096)
def _names_variable(text: str, name: str) -> bool:
    """Whether ``text`` holds ``{name}`` or a numbered ``{name_1}``, ``{name_2}`` ..."""
    numbered = re.compile(re.escape(name) + r"(_[0-9]+)?")
    return any(numbered.fullmatch(placeholder.name) for placeholder in find_placeholders(text))


def entry_readers(
    registry: NodeRegistry, flows: Iterable[Flow], generated: Generated
) -> EntryReaders:
    """Where the entries that ``flows`` send to nodes without steps of their own show.

    Args:
        registry: The nodes.
        flows: The resolved commands.
        generated: The fields models generate, by node tag (see `prompted_fields()`).
    """
    passing: set[str] = set()
    whole: dict[FieldKey, list[str]] = {}
    for flow, _ in _entries(flows):
        assert flow.destination is not None
        node = flow.destination.node
        route = _route(registry, generated, node, leaf_destination(flow))
        if route == "below":
            passing.add(node.tag)
        elif isinstance(route, FieldKey) and node.tag not in whole.setdefault(route, []):
            whole[route].append(node.tag)
    return EntryReaders(
        passing=frozenset(passing), whole={key: tuple(tags) for key, tags in whole.items()}
    )


def check_deliveries(
    registry: NodeRegistry, flows: Iterable[Flow], generated: Generated
) -> Iterator[Diagnostic]:
    """A warning for every ``prompt``/``outputs`` mapping whose value no step shows."""
    for flow in flows:
        if flow.destination is None:
            continue
        node, leaf = flow.destination.node, leaf_destination(flow)
        sent = [m for m in flow.mappings if m.scope in ("prompt", "outputs")]
        if sent and _route(registry, generated, node, leaf) is None:
            for mapping_flow in sent:
                yield _unshown(flow, mapping_flow, node, leaf)


def _entries(flows: Iterable[Flow]) -> Iterator[tuple[Flow, MappingFlow]]:
    for flow in flows:
        for mapping_flow in flow.mappings:
            if in_context(flow, mapping_flow):
                yield flow, mapping_flow


def leaf_destination(flow: Flow) -> str | None:
    """The destination's field when it is a leaf (its step alone shows the entries)."""
    destination = flow.destination
    if destination is None or destination.field is None:
        return None
    return destination.field.name if destination.field.shape.node_class is None else None


def _route(
    registry: NodeRegistry, generated: Generated, node: Node, leaf: str | None
) -> Literal["own", "below"] | FieldKey | None:
    """Which steps show what is sent to ``node`` (its field ``leaf``): ``"own"`` (its own
    steps), ``"below"`` (every step below it), the field a step generates it whole in,
    or ``None`` (no step)."""
    own = generated.get(node.tag, ())
    if leaf in own or (leaf is None and own):
        return "own"
    if leaf is None and any(generated.get(n.tag) for n in registry.subtree(node)):
        return "below"
    return _whole_holder(registry, generated, node)


def _whole_holder(registry: NodeRegistry, generated: Generated, node: Node) -> FieldKey | None:
    """The field that a step generates ``node`` whole in, if one does."""
    current = node
    while current.parent is not None and current.field_name is not None:
        if current.field_name in generated.get(current.parent, ()):
            return FieldKey(current.parent, current.field_name)
        parent = registry.get(current.parent)
        assert parent is not None
        current = parent
    return None


def _unshown(flow: Flow, mapping_flow: MappingFlow, node: Node, leaf: str | None) -> Diagnostic:
    target = mapping_flow.mapping.target_path
    name = display_name(node.node_class)
    if leaf is not None:
        why = f"no step generates '{name}.{leaf}' ({node.tag})"
        hint = (
            "send it to a field a model generates, or to its node, whose steps all show it; "
            "or remove the mapping"
        )
    else:
        why = f"no step generates a field of {name!r} ({node.tag}) or of a node below it"
        hint = "send it to a node whose fields a model generates, or remove the mapping"
    return flow.command.diagnostic(
        f"No prompt shows {target!r}: {why}",
        hint=hint,
        span=mapping_flow.mapping.span,
        warning=True,
    )
