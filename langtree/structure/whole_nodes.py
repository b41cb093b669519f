"""Commands that cannot take effect inside a node that is generated whole (DESIGN D3).

A generated node field is produced whole inside its holder's step: the nodes below it get
no steps of their own, so an ``llm(...)`` or ``resample(...)`` on their classes or fields
would be ignored. ``validate()`` warns where one stands, naming the step that generates
the node, and how to make the command count. A ``transform(...)`` there is an error: the
model would generate the field it should compute; so is an ``input()``: no caller gives a
node the model writes, and the field would be missing after the calls.
"""

from __future__ import annotations

from dataclasses import replace

from langtree.dsl.commands import ExecutionCommand
from langtree.errors import Diagnostic
from langtree.structure.registry import NodeRegistry
from langtree.structure.steps import StepDraft
from langtree.structure.tree import Node, NodeCommand
from langtree.structure.tree_node import display_name

__all__ = ["check_whole_nodes"]


def check_whole_nodes(registry: NodeRegistry, drafts: list[StepDraft]) -> list[Diagnostic]:
    """A warning for every ``llm``/``resample`` inside a node one of ``drafts`` generates."""
    diagnostics: list[Diagnostic] = []
    for draft in drafts:
        holder = registry.get(draft.node_tag)
        assert holder is not None, "steps are drafted from the registry's nodes"
        for name in draft.fields:
            child = registry.child(holder, name)
            if child is not None:
                diagnostics += _ignored_below(registry, child, holder, name)
    return diagnostics


def _ignored_below(
    registry: NodeRegistry, top: Node, holder: Node, field_name: str
) -> list[Diagnostic]:
    where = f"{display_name(holder.node_class)}.{field_name}"
    diagnostics: list[Diagnostic] = []
    pending = [top]
    while pending:
        node = pending.pop()
        pending.extend(registry.children(node.tag))
        for node_command in node.all_commands:
            command = node_command.command
            if not isinstance(command, ExecutionCommand):
                continue
            call = replace(command, comment=None).to_text().removeprefix("! ")
            if command.command_name == "transform":
                diagnostics.append(_transform_below(node_command, node, holder, field_name))
                continue
            if command.command_name == "input":
                diagnostics.append(_input_below(node_command, node, holder, field_name))
                continue
            diagnostics.append(
                node_command.diagnostic(
                    f"{call} has no effect: {display_name(node.node_class)!r} is generated whole "
                    f"at {node.tag}, inside the step of {where!r}, with that step's settings",
                    hint=f"put {call} in the description of {where!r} to apply it to that step, "
                    f"or give {field_name!r} a value (a default, or a partial node in the "
                    "inputs) so that the fields below it get steps of their own",
                    warning=True,
                )
            )
    return diagnostics


def _transform_below(
    node_command: NodeCommand, node: Node, holder: Node, field_name: str
) -> Diagnostic:
    where = f"{display_name(holder.node_class)}.{field_name}"
    computed = f"{display_name(node.node_class)}.{node_command.field_name}"
    return node_command.diagnostic(
        f"transform() cannot compute {computed!r}: {display_name(node.node_class)!r} is "
        f"generated whole at {node.tag}, inside the step of {where!r}, whose model generates "
        "every field of it",
        hint=f"give {field_name!r} a value (a default, or a partial node in the inputs) so that "
        "the fields below it get steps of their own, or compute the value in a field that "
        "is not generated whole",
    )


def _input_below(
    node_command: NodeCommand, node: Node, holder: Node, field_name: str
) -> Diagnostic:
    """``input()`` where the model writes the field: the caller cannot give it (the node
    is not in the inputs), and the run would end with it missing."""
    where = f"{display_name(holder.node_class)}.{field_name}"
    given = node_command.field_name
    return node_command.diagnostic(
        f"input() cannot mark '{display_name(node.node_class)}.{given}' as given by the "
        f"caller: {display_name(node.node_class)!r} is generated whole at {node.tag}, inside "
        f"the step of {where!r}, whose model writes every field of it",
        hint=f"give {field_name!r} a value (a default, or a partial node in the inputs) so that "
        f"the fields below it get steps of their own and the inputs give {given!r}, or remove "
        f"input() to have the model write {given!r}",
    )
