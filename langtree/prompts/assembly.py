"""Assemble the Markdown of one step for one node instance (DESIGN D9, D10).

The document follows the path from the root task down to the node: each level's
docstring under its title, its ``{PROMPT_SUBTREE}`` replaced by the next level (the field
that leads there, its description, and for a list the element class's title), and at the
node itself by the step's own fields. Headings inside docstrings are shifted to nest where
they are inserted. ``{COLLECTED_CONTEXT}`` is replaced by the known values, or a
``# Context`` section is appended.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from langtree.prompts.markdown import heading, heading_level_before, join_blocks, shift_headings
from langtree.prompts.state import Address, RunState
from langtree.prompts.values import render_value
from langtree.structure.placeholders import TEMPLATE_VARIABLES
from langtree.structure.registry import NodeRegistry
from langtree.structure.tree import Node, title_from_name

__all__ = ["ContextEntry", "StepDocument", "assemble"]

SUBTREE = "{PROMPT_SUBTREE}"
CONTEXT = "{COLLECTED_CONTEXT}"
_VARIABLE = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")
_ESCAPED = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextEntry:
    """One known value shown in a step's context: its title and its value."""

    title: str
    value: object


@dataclass(frozen=True, slots=True, kw_only=True)
class StepDocument:
    """The assembled Markdown of a step, and the runtime variables it used.

    Attributes:
        text: The Markdown (task, fields and context).
        variables: Each runtime variable's value by its internal name
            (``prompt__<path>__<name>``; ``prompt__external__<name>`` at the root).
    """

    text: str
    variables: dict[str, object]
    missing: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True, kw_only=True)
class _Level:
    node: Node
    address: Address
    values: Mapping[str, object]


class _Resolver:
    """Resolves ``{name}`` in one level's texts (D9): prompt mapping, field, ancestors."""

    def __init__(
        self, state: RunState, levels: list[_Level], external: Mapping[str, object]
    ) -> None:
        self.state = state
        self.levels = levels
        self.external = external
        self.used: dict[str, object] = {}
        self.missing: set[str] = set()

    def substitute(self, text: str, depth: int) -> str:
        text = _VARIABLE.sub(lambda match: self._value_text(match.group(1), depth), text)
        return _ESCAPED.sub(lambda match: "{" + match.group(1) + "}", text)

    def _value_text(self, name: str, depth: int) -> str:
        if name in TEMPLATE_VARIABLES:
            return "{" + name + "}"
        key, value = self._lookup(name, depth)
        self.used[key] = value
        return render_value(value)

    def _lookup(self, name: str, depth: int) -> tuple[str, object]:
        level = self.levels[depth]
        key = "prompt__" + level.node.tag.replace(".", "__") + "__" + name
        sent = _prompt_value(self.state, level.address, name)
        if sent is not _MISSING:
            return key, sent
        for ancestor in reversed(self.levels[: depth + 1]):
            if ancestor.node.field(name) is not None and name in ancestor.values:
                return key, ancestor.values[name]
        if name not in self.external:
            self.missing.add(name)
        return "prompt__external__" + name, self.external.get(name, f"{{{name}}}")


_MISSING = object()


def _prompt_value(state: RunState, address: Address, name: str) -> object:
    base, _, number = name.rpartition("_")
    if (address, name) in state.prompt_values:
        sources = state.prompt_values[(address, name)]
        return sources[0] if len(sources) == 1 else sources
    if base and number.isdigit() and (address, base) in state.prompt_values:
        sources = state.prompt_values[(address, base)]
        if 1 <= int(number) <= len(sources):
            return sources[int(number) - 1]
    return _MISSING


def assemble(
    registry: NodeRegistry,
    state: RunState,
    address: Address,
    fields: tuple[str, ...],
    external: Mapping[str, object],
) -> StepDocument:
    """The document of one step: its node instance and the fields it generates."""
    levels = [
        _Level(node=node, address=level_address, values=state.instance(level_address) or {})
        for node, level_address in _path(registry, state, address)
    ]
    resolver = _Resolver(state, levels, external)
    body = _render_level(levels, 0, 1, fields, resolver)
    context = _context(state, levels[-1], fields)
    if CONTEXT in body:
        position = body.index(CONTEXT)
        level = heading_level_before(body, position, 0)
        body = body.replace(CONTEXT, _context_text(context, level + 1), 1)
    elif context:
        body = join_blocks(body, heading(1, "Context"), _context_text(context, 2))
    return StepDocument(
        text=_tidy(body), variables=resolver.used, missing=frozenset(resolver.missing)
    )


def _path(registry: NodeRegistry, state: RunState, address: Address) -> list[tuple[Node, Address]]:
    path: list[tuple[Node, Address]] = []
    current: Address | None = address
    while current is not None:
        node = registry.get(current.tag)
        assert node is not None
        path.append((node, current))
        current = state.parent(current)
    return list(reversed(path))


def _render_level(
    levels: list[_Level],
    depth: int,
    title_level: int,
    fields: tuple[str, ...],
    resolver: _Resolver,
    *,
    titled: bool = True,
) -> str:
    """A level's title and docstring, its ``{PROMPT_SUBTREE}`` filled by what lies below."""
    level = levels[depth]
    title = heading(title_level, title_from_name(level.node.node_class.__name__)) if titled else ""
    text = shift_headings(resolver.substitute(level.node.text, depth), title_level)
    if SUBTREE not in text:
        text = join_blocks(text, SUBTREE)
    inner = heading_level_before(text, text.index(SUBTREE), title_level) + 1
    if depth == len(levels) - 1:
        blocks = [_field_block(resolver, level.node, name, inner, depth) for name in fields]
        below = join_blocks(*blocks)
    else:
        below = _child_block(levels, depth + 1, inner, fields, resolver)
    return join_blocks(title, text.replace(SUBTREE, below, 1))


def _child_block(
    levels: list[_Level],
    depth: int,
    level_number: int,
    fields: tuple[str, ...],
    resolver: _Resolver,
) -> str:
    """The field leading to the next level, then that level (a list's under its class title)."""
    child = levels[depth]
    node_field = levels[depth - 1].node.field(child.node.field_name or "")
    assert node_field is not None
    head = _titled(
        node_field.name, resolver.substitute(node_field.description, depth - 1), level_number
    )
    if node_field.shape.list_depth:
        return join_blocks(head, _render_level(levels, depth, level_number + 1, fields, resolver))
    below = _render_level(levels, depth, level_number, fields, resolver, titled=False)
    return join_blocks(head, below)


def _field_block(resolver: _Resolver, node: Node, name: str, level_number: int, depth: int) -> str:
    """A generated field: its title and description (runtime variables resolved)."""
    node_field = node.field(name)
    assert node_field is not None
    description = resolver.substitute(node_field.description, depth)
    return _field_with_node(resolver.state.registry, node, name, description, level_number)


def _field_with_node(
    registry: NodeRegistry, node: Node, name: str, description: str, level_number: int
) -> str:
    """A field's title and description; a node field also its node's docstring and fields."""
    block = _titled(name, description, level_number)
    node_field = node.field(name)
    child = registry.child(node, name)
    if child is None or node_field is None:
        return block
    listed = bool(node_field.shape.list_depth)
    inner = level_number + 1 if listed else level_number
    title = heading(inner, title_from_name(child.node_class.__name__)) if listed else ""
    parts = [title, shift_headings(child.text, inner)]
    parts += [
        _field_with_node(registry, child, f.name, f.description, inner + 1) for f in child.fields
    ]
    return join_blocks(block, *parts)


def _titled(name: str, text: str, level_number: int) -> str:
    return join_blocks(
        heading(level_number, title_from_name(name)), shift_headings(text, level_number)
    )


def _context(state: RunState, level: _Level, fields: tuple[str, ...]) -> list[ContextEntry]:
    """Known values in the specification's order: forwarded entries, then known fields."""
    entries = [
        ContextEntry(title=title_from_name(name), value=value)
        for name, value in state.outputs.get(level.address, [])
    ]
    entries += [
        ContextEntry(title=title_from_name(f.name), value=level.values[f.name])
        for f in level.node.fields
        if f.name in level.values and f.name not in fields
    ]
    return entries


def _context_text(entries: list[ContextEntry], level_number: int) -> str:
    return join_blocks(
        *(
            join_blocks(heading(level_number, entry.title), render_value(entry.value))
            for entry in entries
        )
    )


def _tidy(text: str) -> str:
    """The text with one newline at the end."""
    return text.strip("\n") + "\n"
