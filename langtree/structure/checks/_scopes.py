"""Warnings about paths that are valid but unusual (the spec's warning list).

One-character path components, very deep paths, and several ``value`` sources for one
field. (An unknown scope prefix never resolves in the destination, so flows reports it as
an error.)
"""

from __future__ import annotations

from collections.abc import Iterator

from langtree.dsl import PLUCK_OPERATORS, AllCommand, EachCommand, Span
from langtree.errors import Diagnostic
from langtree.structure.commands._flows import Flow, MappingFlow
from langtree.structure.tree._registry import FieldKey, NodeRegistry
from langtree.structure.tree._tree import NodeCommand

__all__ = ["DEEP_PATH_COMPONENTS", "check_scopes"]

DEEP_PATH_COMPONENTS = 7


def check_scopes(registry: NodeRegistry, flows: list[Flow]) -> Iterator[Diagnostic]:
    """Warn about unusual paths in every ``@each``/``@all`` command, and repeated targets."""
    for node in registry:
        for node_command in node.all_commands:
            if isinstance(node_command.command, EachCommand | AllCommand):
                yield from _path_warnings(node_command, node_command.command)
    yield from _repeated_value_targets(flows)


def _paths(command: EachCommand | AllCommand) -> Iterator[tuple[str, Span | None]]:
    if isinstance(command, EachCommand) and command.inclusion_path:
        yield command.inclusion_path, command.inclusion_span
    yield command.destination_path, command.destination_span
    for mapping in command.mappings:
        yield mapping.target_path, mapping.span
        if mapping.source_path not in (None, "*"):
            yield mapping.source_path, mapping.span


def _path_warnings(
    node_command: NodeCommand, command: EachCommand | AllCommand
) -> Iterator[Diagnostic]:
    for path, span in _paths(command):
        parts = [part for part in path.split(".") if part not in PLUCK_OPERATORS]
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


def _repeated_value_targets(flows: list[Flow]) -> Iterator[Diagnostic]:
    """A warning for every ``value`` mapping into a field that an earlier one writes."""
    seen: dict[FieldKey, tuple[Flow, MappingFlow]] = {}
    for flow in flows:
        for mapping_flow in flow.mappings:
            key = mapping_flow.target.field_key if mapping_flow.target else None
            if mapping_flow.scope != "value" or key is None:
                continue
            first = seen.setdefault(key, (flow, mapping_flow))
            if first[1] is not mapping_flow:
                yield _repeated_target(key, flow, mapping_flow, *first)


def _repeated_target(
    key: FieldKey, flow: Flow, mapping_flow: MappingFlow, first: Flow, earlier: MappingFlow
) -> Diagnostic:
    command = first.command
    where = "this command" if first is flow else command.origin.describe(command.extracted.line)
    return flow.command.diagnostic(
        f"Field {key.field_name!r} of {key.node_tag!r} already receives a value from "
        f"{earlier.mapping.to_text()!r} in {where}",
        hint="a field holds one value: keep one 'value' mapping into it, or use "
        "'outputs' to collect several",
        span=mapping_flow.mapping.span,
        warning=True,
    )
