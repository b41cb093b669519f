"""``! transform("expression")``: a field computed from values already known, with no
model call (`langtree.structure.commands._transforms` compiles and checks the expression).

It stands in a field's description; ``llm()`` and ``resample()`` beside it have no effect;
in a node a step generates whole it is an error, as the model would generate the field it
should compute; and no ``value`` mapping may write its field
(`langtree.structure.call_commands._transform_targets`).
"""

from __future__ import annotations

from langtree.dsl import CommandSignature, Parameter
from langtree.errors import Diagnostic
from langtree.structure.call_commands._kind import (
    CommandKind,
    FieldCall,
    FieldOnly,
    FieldSource,
    WholeSite,
)
from langtree.structure.commands._transforms import Transform, field_transform
from langtree.structure.tree._tree import NodeCommand

__all__ = ["TRANSFORM"]


def _computes(found: FieldCall) -> Transform | list[Diagnostic]:
    expression = found.arguments["expression"]
    assert isinstance(expression, str), "the signature takes a string"
    return field_transform(found.registry, found.node, found.node_field, found.call, expression)


def _inside_whole_node(node_command: NodeCommand, where: WholeSite) -> Diagnostic:
    computed = f"{where.name}.{node_command.field_name}"
    return node_command.diagnostic(
        f"transform() cannot compute {computed!r}: {where.name!r} is generated whole at "
        f"{where.node.tag}, inside the step of {where.outer!r}, whose model generates every "
        "field of it",
        hint=f"give {where.outer_field!r} a value (a default, or a partial node in the inputs) "
        "so that the fields below it get steps of their own, or compute the value in a "
        "field that is not generated whole",
    )


TRANSFORM = CommandKind(
    signature=CommandSignature(
        name="transform",
        parameters=(Parameter(name="expression", kind=str),),
        usage="'transform(\"items | length\")'",
    ),
    field_only=FieldOnly(does="computes a field", the_field="the field it computes"),
    source=FieldSource(
        rank=1,
        described="computed by transform() without a model call",
        instead="have a model generate the field",
        known_before_run=False,
    ),
    inside_whole_node=_inside_whole_node,
    computes=_computes,
)
"""The command ``transform(...)``."""
