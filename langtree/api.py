"""``RunStructure``: the object users build a run with.

It gathers the pipeline's stages behind one name: add root tasks, validate them and plan
the run (the structure stage); prompt assembly and execution join as later stages land.
"""

from __future__ import annotations

from typing import Protocol

from langtree.structure.config import ConfigInput
from langtree.structure.structure import TreeStructure

__all__ = ["ModelCatalog", "RunStructure"]


class ModelCatalog(Protocol):
    """Anything that can list the model keys ``llm(...)`` may name (an ``LLMProvider``)."""

    def list_models(self) -> list[str]:
        """The model keys, the default first."""
        ...


class RunStructure(TreeStructure):
    """Root tasks, checked and planned before a single model call.

    Args:
        config: Settings as a dict (e.g. ``{"validation_strategy": "permissive",
            "default_modifier": "parallel"}``), a ``TypeMappingConfig``, or ``None``.
        provider: The models that ``llm(...)`` may name; when given, unknown keys are
            reported by :meth:`validate`.

    >>> from langtree import TreeNode
    >>> class TaskGreet(TreeNode):
    ...     name: str
    ...     greeting: str
    >>> structure = RunStructure()
    >>> structure.add(TaskGreet)
    >>> structure.validate()
    ()
    >>> [step.fields for step in structure.plan({TaskGreet: {"name": "Ada"}}).steps]
    [('greeting',)]
    """

    def __init__(self, config: ConfigInput = None, provider: ModelCatalog | None = None) -> None:
        models = provider.list_models() if provider is not None else None
        super().__init__(config, models=models)
        self.provider = provider
