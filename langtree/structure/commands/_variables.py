"""Assembly variables (``! name=value``): defined on a node, visible in its subtree.

A name may be defined once along any path from a root (no redefinition below a node that
defines it), and may not equal a field name of the defining node's subtree. Arguments of
execution commands that name a variable resolve to the nearest definition above them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from langtree.dsl import Value, VariableAssignmentCommand, VariableReference
from langtree.errors import Diagnostic
from langtree.structure.tree._registry import NodeRegistry
from langtree.structure.tree._tree import Node, NodeCommand
from langtree.structure.tree._tree_node import display_name

__all__ = ["AssemblyVariables", "Definition"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Definition:
    """An assembly variable's value and the command that defines it."""

    name: str
    value: str | int | float | bool
    command: NodeCommand


class AssemblyVariables:
    """Every assembly variable of the added tasks, by defining node."""

    def __init__(self, registry: NodeRegistry) -> None:
        self._registry = registry
        self._by_node: dict[str, dict[str, Definition]] = {}
        self.diagnostics: list[Diagnostic] = []
        for node in registry:
            self._collect(node)
        for node in registry:
            self._check_field_conflicts(node)

    def lookup(self, node_tag: str, name: str) -> Definition | None:
        """The nearest definition of ``name`` at ``node_tag`` or above it."""
        tag: str | None = node_tag
        while tag is not None:
            definition = self._by_node.get(tag, {}).get(name)
            if definition is not None:
                return definition
            node = self._registry.get(tag)
            tag = node.parent if node else None
        return None

    def resolve(self, node_tag: str, value: Value) -> Value | Definition | None:
        """A literal as it is; a variable reference as its definition (``None`` if unknown)."""
        if isinstance(value, VariableReference):
            return self.lookup(node_tag, value.name)
        return value

    def _collect(self, node: Node) -> None:
        for node_command in node.all_commands:
            command = node_command.command
            if not isinstance(command, VariableAssignmentCommand):
                continue
            existing = self.lookup(node.tag, command.variable_name)
            if existing is not None:
                self.diagnostics.append(_redefinition(node_command, existing))
                continue
            self._by_node.setdefault(node.tag, {})[command.variable_name] = Definition(
                name=command.variable_name, value=command.value, command=node_command
            )

    def _check_field_conflicts(self, node: Node) -> None:
        for name, definition in self._by_node.get(node.tag, {}).items():
            clash = next(self._fields_named(node, name), None)
            if clash is not None:
                self.diagnostics.append(
                    definition.command.diagnostic(
                        f"Assembly variable {name!r} has the name of the field {clash!r}",
                        hint="rename the variable: variables and fields of a subtree share "
                        "one namespace",
                    )
                )

    def _fields_named(self, node: Node, name: str) -> Iterator[str]:
        for field in node.fields:
            if field.name == name:
                yield f"{display_name(node.node_class)}.{name}"
        for child in self._registry.children(node.tag):
            yield from self._fields_named(child, name)


def _redefinition(node_command: NodeCommand, existing: Definition) -> Diagnostic:
    command = node_command.command
    assert isinstance(command, VariableAssignmentCommand)
    where = existing.command.origin.describe(existing.command.extracted.line)
    return node_command.diagnostic(
        f"Assembly variable {command.variable_name!r} is already defined in {where}",
        hint="variables cannot be reassigned; choose another name",
    )
