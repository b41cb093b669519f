"""The values of a run as plain data: one nested dict per root task.

A node instance is addressed by its tag and one index per list level above and at it;
an index of ``None`` stands for elements not known yet (shown as ``[*]``). Prompt
variables and ``outputs`` context entries that commands send to an instance are kept
beside the values. Everything here is plain data that could be serialised.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel

from langtree.structure.registry import NodeRegistry
from langtree.structure.tree import Node

__all__ = ["Address", "RunState", "elements", "instance_text"]


@dataclass(frozen=True, slots=True, order=True)
class Address:
    """A node instance: its tag, and its index at each list level from the root down."""

    tag: str
    indices: tuple[int | None, ...] = ()


@dataclass(slots=True)
class RunState:
    """The known values of every root task, and what commands sent to instances.

    Attributes:
        roots: Each root task's values by tag: dicts for nodes, lists for node lists.
        prompt_values: Values for ``{name}`` in an instance's texts, one per source.
        outputs: Context entries (title, value) sent to an instance, in arrival order.
    """

    registry: NodeRegistry
    roots: dict[str, dict[str, object]]
    prompt_values: dict[tuple[Address, str], list[object]] = field(default_factory=dict)
    outputs: dict[Address, list[tuple[str, object]]] = field(default_factory=dict)

    @classmethod
    def start(cls, registry: NodeRegistry, inputs: Mapping[str, object]) -> RunState:
        """The state before any step: the caller's inputs, with defaults filled in."""
        roots = {}
        for root in registry.roots():
            values = _plain(inputs.get(root.tag, {}))
            roots[root.tag] = values if isinstance(values, dict) else {}
            _fill_defaults(registry, root, roots[root.tag])
        return cls(registry=registry, roots=roots)

    def instance(self, address: Address) -> dict[str, object] | None:
        """The values of a node instance, or ``None`` when they are not known yet."""
        path = self.registry.path(address.tag)
        value: object = self.roots.get(path[0].tag)
        indices = iter(address.indices)
        for node in path[1:]:
            value = value.get(node.field_name or "") if isinstance(value, dict) else None
            for _ in range(node.list_depth):
                index = next(indices, None)
                if not isinstance(value, list) or index is None or index >= len(value):
                    return None
                value = value[index]
        return value if isinstance(value, dict) else None

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


def _expand(value: object, path: list[Node]) -> Iterator[tuple[int | None, ...]]:
    if not path:
        yield ()
        return
    node, rest = path[0], path[1:]
    child = value.get(node.field_name or "") if isinstance(value, dict) else None
    for indices, element in elements(child, node.list_depth):
        for tail in _expand(element, rest):
            yield indices + tail


def elements(value: object, depth: int) -> Iterator[tuple[tuple[int | None, ...], object]]:
    """The elements ``depth`` list levels down, with their indices (``None``: unknown)."""
    if depth == 0:
        yield (), value
        return
    if not isinstance(value, list):
        yield (None,) * depth, None
        return
    for index, element in enumerate(value):
        for indices, inner in elements(element, depth - 1):
            yield (index, *indices), inner


def _plain(value: object) -> object:
    """Inputs as plain data: models become dicts of the fields that were set."""
    if isinstance(value, BaseModel):
        return {name: _plain(getattr(value, name)) for name in value.model_fields_set}
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _fill_defaults(registry: NodeRegistry, node: Node, values: dict[str, object]) -> None:
    """Set each known default that the values lack, in this node and the nodes below."""
    for node_field in node.fields:
        info = node.node_class.model_fields[node_field.name]
        if node_field.name not in values and node_field.has_known_default:
            values[node_field.name] = copy.deepcopy(info.get_default(call_default_factory=True))
        child = registry.child(node, node_field.name)
        if child is not None:
            for _, element in elements(values.get(node_field.name), node_field.shape.list_depth):
                if isinstance(element, dict):
                    _fill_defaults(registry, child, element)
