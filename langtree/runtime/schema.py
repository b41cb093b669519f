"""The structured-output model of a step: a pydantic class holding only its fields.

One class is built per plan step (DESIGN D11), from the node's field annotations and
their descriptions with the DSL commands removed. Nested ``TreeNode`` classes are used as
they are, so a node generated whole arrives as the user's own class.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field, create_model

from langtree.structure.plan import PlanStep
from langtree.structure.tree import Node
from langtree.structure.tree_node import display_name

__all__ = ["step_model"]

_NOT_A_NAME = re.compile(r"[^A-Za-z0-9_]+")


def step_model(node: Node, step: PlanStep) -> type[BaseModel]:
    """A pydantic class with the step's fields, each required, in the step's order.

    Args:
        node: The node whose fields the step generates.
        step: The plan step.

    Returns:
        A class named after the node and the fields (the tool name models see).

    >>> from langtree import RunStructure, TreeNode
    >>> class TaskGreet(TreeNode):
    ...     name: str
    ...     greeting: str
    >>> structure = RunStructure()
    >>> structure.add(TaskGreet)
    >>> step = structure.plan({TaskGreet: {"name": "Ada"}}).steps[0]
    >>> model = step_model(structure.get_node(step.node_tag), step)
    >>> model.__name__, list(model.model_fields)
    ('TaskGreet_greeting', ['greeting'])
    """
    definitions: dict[str, object] = {}
    for name in step.fields:
        node_field = node.field(name)
        assert node_field is not None, f"{node.tag} has no field {name!r}"
        description = node_field.description.strip() or None
        definitions[name] = (node_field.annotation, Field(description=description))
    class_name = _NOT_A_NAME.sub("_", f"{display_name(node.node_class)}_{'_'.join(step.fields)}")
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        class_name,
        __doc__=f"The fields {', '.join(step.fields)} of {step.element_path}.",
        **definitions,
    )
    return model
