"""Fields only the caller gives (``! input()``) must have a value before any call.

A field whose description says ``! input()`` is an input (DESIGN D2, as an asset is): no
step generates it, so a required one that the inputs, its default and the commands leave
empty would fail the run only after every call, or worse, a model would have been asked
to invent it. Assets have their own check (`langtree.prompts.attachments`).
"""

from __future__ import annotations

from collections.abc import Iterator

from langtree.errors import ExecutionError
from langtree.prompts.state import RunState, instance_text
from langtree.structure.assets import holds_asset
from langtree.structure.known import input_only
from langtree.structure.registry import NodeRegistry
from langtree.structure.tree_node import display_name

__all__ = ["check_given_inputs"]

_LISTED = 5
"""How many missing fields the message names."""


def check_given_inputs(registry: NodeRegistry, state: RunState) -> None:
    """Raise when a required ``input()`` field of a known node instance has no value.

    Raises:
        ExecutionError: Naming every such field, by its instance path.
    """
    missing = list(_missing(registry, state))
    if not missing:
        return
    shown = [f"{path} ({label!r})" for path, label in missing[:_LISTED]]
    more = f" and {len(missing) - _LISTED} more" if len(missing) > _LISTED else ""
    raise ExecutionError(
        f"Missing input(s): {', '.join(shown)}{more}; a field marked input() is given by the "
        "caller, never generated, and no input, default or command gives these\n"
        "  hint: pass each in the inputs (langtree run: --input FILE.json), or give the "
        "field a default"
    )


def _missing(registry: NodeRegistry, state: RunState) -> Iterator[tuple[str, str]]:
    """Each required ``input()`` field without a value: its instance path and
    ``Class.field``."""
    for node in registry:
        model_fields = node.node_class.model_fields
        required = [
            f.name
            for f in node.fields
            if input_only(f)
            and not holds_asset(f.annotation)
            and model_fields[f.name].is_required()
        ]
        for address in state.instances(node.tag) if required else ():
            values = state.instance(address)
            if values is None or None in address.indices:
                continue
            for name in required:
                if name not in values:
                    path = f"{instance_text(registry, address)}.{name}"
                    yield path, f"{display_name(node.node_class)}.{name}"
