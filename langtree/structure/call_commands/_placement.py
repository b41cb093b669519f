"""Where call-style commands may stand, checked from their kinds: a field-only command in
a docstring, a command twice in one text, and a command beside one that gives its field
its value another way (whose effect it then lacks)."""

from __future__ import annotations

from langtree.errors import Diagnostic
from langtree.structure.call_commands._kind import CommandKind, FieldSource
from langtree.structure.call_commands._table import calls, command_kinds
from langtree.structure.tree._tree import Node, NodeCommand, NodeField
from langtree.structure.tree._tree_node import display_name

__all__ = ["check_placement", "without_effect"]


def check_placement(node: Node) -> list[Diagnostic]:
    """The placement errors of the call-style commands in the texts of ``node``."""
    problems: list[Diagnostic] = []
    for kind in command_kinds().values():
        found = calls(node.commands, kind)
        if kind.field_only is not None:
            problems += [kind.field_only.misplaced(kind, call, node) for call in found]
        else:
            problems += _repeated(kind, found)
        for node_field in node.fields:
            problems += _repeated(kind, calls(node_field.commands, kind))
            problems += without_effect(kind, node, node_field)
    return problems


def _repeated(kind: CommandKind, found: list[NodeCommand]) -> list[Diagnostic]:
    return [
        extra.diagnostic(
            f"More than one {kind.call} in the same text", hint=f"keep one {kind.call}"
        )
        for extra in found[1:]
    ]


def without_effect(kind: CommandKind, node: Node, node_field: NodeField) -> list[Diagnostic]:
    """The commands beside ``kind`` in the field's text that its source leaves with no
    effect."""
    source = kind.source
    if source is None or not calls(node_field.commands, kind):
        return []
    location = f"{display_name(node.node_class)}.{node_field.name}"
    return [
        call.diagnostic(
            f"{location!r} is {source.described}, so {other.call} has no effect on it",
            hint=f"remove {other.name}(...), or remove {kind.call} to {source.instead}",
        )
        for other in command_kinds().values()
        if _silenced(other, source)
        for call in calls(node_field.commands, other)
    ]


def _silenced(other: CommandKind, source: FieldSource) -> bool:
    """Whether ``other`` has no effect beside a command of ``source``: it shapes the
    model step, or says the value comes from a source that ranks after."""
    return other.shapes_step or (other.source is not None and other.source.rank > source.rank)
