"""``! llm("model-key", override=false)``: the model of the step that generates a field, or
a node's fields.

It stands in a class's docstring or a field's description, and shapes the model step:
`langtree.structure.commands._settings` settles its value (a model inherited down the tree,
an ``override=true`` winning below it), and `langtree.structure.planning._steps` gives a
field with its own, or a node field whose class declares one, a step of its own.
"""

from __future__ import annotations

from langtree.dsl import CommandSignature, Parameter
from langtree.structure.call_commands._kind import CommandKind

__all__ = ["LLM"]

LLM = CommandKind(
    signature=CommandSignature(
        name="llm",
        parameters=(
            Parameter(name="model_key", kind=str),
            Parameter(name="override", kind=bool, default=False),
        ),
        usage="'llm(\"model-key\")' or 'llm(\"model-key\", override=true)'",
    ),
    shapes_step=True,
)
"""The command ``llm(...)``."""
