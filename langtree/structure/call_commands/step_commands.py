"""``! llm("model-key", override=false)`` and ``! resample(n_times)``: the model and the
number of samples of the step that generates a field, or a node's fields.

Both stand in a class's docstring or a field's description, and shape the model step:
`langtree.structure.commands.settings` settles their values (a model inherited down the tree, an
``override=true`` winning below it), and `langtree.structure.planning.steps` gives a field with
its own, or a node field whose class declares one, a step of its own.
"""

from __future__ import annotations

from langtree.structure.call_commands.kind import CommandKind

__all__ = ["LLM", "RESAMPLE"]

LLM = CommandKind(name="llm", shapes_step=True)
"""The kind of ``llm(...)``."""

RESAMPLE = CommandKind(name="resample", shapes_step=True)
"""The kind of ``resample(...)``."""
