"""Warnings about paths that are valid but unusual (DESIGN D6, the spec's warning list).

Unknown scope prefixes, one-character path components, very deep paths, and several
``value`` sources for one field.
"""

from __future__ import annotations

from collections.abc import Iterator

from langtree.dsl.commands import AllCommand, EachCommand, VariableMapping
from langtree.dsl.paths import SCOPES
from langtree.errors import Diagnostic
from langtree.structure.flows import Flow
from langtree.structure.registry import NodeRegistry, ResolvedPath
from langtree.structure.tree import NodeCommand

__all__ = ["DEEP_PATH_COMPONENTS", "check_scopes"]

DEEP_PATH_COMPONENTS = 7


def check_scopes(registry: NodeRegistry, flows: list[Flow]) -> Iterator[Diagnostic]:
    """Warn about unusual paths in every ``@each``/``@all`` command, and repeated targets."""
    for node in registry:
        for node_command in node.all_commands:
            if isinstance(node_command.command, EachCommand | AllCommand):
                yield from _path_warnings(registry, node_command)
    yield from _repeated_value_targets(flows)


def _paths(command: EachCommand | AllCommand) -> Iterator[tuple[str, VariableMapping | None]]:
    if isinstance(command, EachCommand) and command.inclusion_path:
        yield command.inclusion_path, None
    yield command.destination_path, None
    for mapping in command.mappings:
        yield mapping.target_path, mapping
        if mapping.source_path not in (None, "*"):
            yield mapping.source_path, mapping


def _path_warnings(registry: NodeRegistry, node_command: NodeCommand) -> Iterator[Diagnostic]:
    command = node_command.command
    assert isinstance(command, EachCommand | AllCommand)
    for path, mapping in _paths(command):
        span = mapping.span if mapping else None
        parts = path.split(".")
        short = [part for part in parts if len(part) == 1]
        if short:
            yield node_command.diagnostic(
                f"Path {path!r} has one-character component(s) {', '.join(map(repr, short))}",
                hint="descriptive names make paths easier to follow",
                span=span,
                warning=True,
            )
        if len(parts) >= DEEP_PATH_COMPONENTS:
            yield node_command.diagnostic(
                f"Path {path!r} is {len(parts)} components deep",
                hint="consider sending a whole node instead of a deeply nested field",
                span=span,
                warning=True,
            )
    yield from _unknown_scopes(registry, node_command, command)


def _unknown_scopes(
    registry: NodeRegistry, node_command: NodeCommand, command: EachCommand | AllCommand
) -> Iterator[Diagnostic]:
    node = registry.get(node_command.node_tag)
    assert node is not None
    destination = registry.resolve(command.destination_path, node)
    if not isinstance(destination, ResolvedPath):
        return
    for mapping in command.mappings:
        head, dot, _ = mapping.target_path.partition(".")
        if dot and head not in SCOPES and destination.node.field(head) is None:
            yield node_command.diagnostic(
                f"Unknown scope {head!r} in {mapping.target_path!r}: the whole path is read "
                "as a field path",
                hint="use one of the scopes prompt, value, outputs or task",
                span=mapping.span,
                warning=True,
            )


def _repeated_value_targets(flows: list[Flow]) -> Iterator[Diagnostic]:
    seen: dict[tuple[str, str], Flow] = {}
    for flow in flows:
        for mapping_flow in flow.mappings:
            if mapping_flow.scope != "value" or mapping_flow.target is None:
                continue
            key = (mapping_flow.target.node.tag, mapping_flow.name)
            first = seen.setdefault(key, flow)
            if first is not flow:
                where = first.command.origin.describe(first.command.extracted.line)
                yield flow.command.diagnostic(
                    f"Field {mapping_flow.name!r} of {key[0]!r} already receives a value from "
                    f"{where}",
                    hint="a field holds one value: keep one 'value' mapping into it, or use "
                    "'outputs' to collect several",
                    span=mapping_flow.mapping.span,
                    warning=True,
                )
