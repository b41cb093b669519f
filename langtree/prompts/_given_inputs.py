"""Fields only the caller gives must have a value before any call.

Assets (`langtree.structure.commands._assets`) and fields whose description says ``! input()`` are
inputs (DESIGN D2): no step generates them, so a required one that the inputs, its
default and the commands leave empty would fail the run only after every call. The
assets' check (`langtree.prompts._attachments`) and the one for ``input()`` fields both
find such fields here (`missing_given()`) and name them the same way (`listed()`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator

from langtree.errors import ExecutionError
from langtree.prompts._state import RunState, instance_text
from langtree.structure import Node, NodeRegistry, display_name, holds_asset, input_only

__all__ = ["check_given_inputs", "listed", "missing_given"]

_LISTED = 10
"""How many missing fields a message names."""


def check_given_inputs(registry: NodeRegistry, state: RunState) -> None:
    """Raise when a required ``input()`` field of a known node instance has no value.

    Raises:
        ExecutionError: Naming every such field, by its instance path.
    """
    missing = missing_given(registry, state, _marked_inputs)
    if missing:
        raise ExecutionError(
            f"Missing input(s): {listed(missing)}; a field marked input() is given by the "
            "caller, never generated, and no input, default or command gives these\n"
            "  hint: pass each in the inputs (langtree run: --input FILE.json), or give the "
            "field a default"
        )


def missing_given(
    registry: NodeRegistry, state: RunState, given: Callable[[Node], Collection[str]]
) -> list[tuple[str, str]]:
    """Each required field among ``given(node)`` that a known instance lacks: its instance
    path and ``Class.field``. Instances not known before the run (``[*]``) are skipped."""
    return list(_missing(registry, state, given))


def listed(missing: list[tuple[str, str]]) -> str:
    """The first missing fields as ``path ('Class.field')``, and how many more there are."""
    shown = [f"{path} ({label!r})" for path, label in missing[:_LISTED]]
    more = f" and {len(missing) - _LISTED} more" if len(missing) > _LISTED else ""
    return ", ".join(shown) + more


def _marked_inputs(node: Node) -> set[str]:
    """The node's ``input()`` fields (assets have their own check and message)."""
    return {f.name for f in node.fields if input_only(f) and not holds_asset(f.annotation)}


def _missing(
    registry: NodeRegistry, state: RunState, given: Callable[[Node], Collection[str]]
) -> Iterator[tuple[str, str]]:
    for node in registry:
        chosen, model_fields = given(node), node.node_class.model_fields
        required = [  # in declaration order
            f.name for f in node.fields if f.name in chosen and model_fields[f.name].is_required()
        ]
        for address in state.instances(node.tag) if required else ():
            values = state.instance(address)
            if values is None or None in address.indices:
                continue
            for name in required:
                if name not in values:
                    path = f"{instance_text(registry, address)}.{name}"
                    yield path, f"{display_name(node.node_class)}.{name}"
