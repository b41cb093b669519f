"""``! resample(n_times)``: the number of samples of the step that generates a field, or a
node's fields.

It stands in a class's docstring or a field's description, and shapes the model step:
`langtree.structure.commands._settings` settles its value, and
`langtree.structure.planning._steps` gives a field with its own, or a node field whose
class declares one, a step of its own.
"""

from __future__ import annotations

from langtree.dsl import CommandSignature, Parameter
from langtree.structure.call_commands._kind import CommandKind

__all__ = ["RESAMPLE"]

RESAMPLE = CommandKind(
    signature=CommandSignature(
        name="resample",
        parameters=(Parameter(name="n_times", kind=int, minimum=1),),
        usage="'resample(5)' or 'resample(count)'",
    ),
    shapes_step=True,
)
"""The command ``resample(...)``."""
