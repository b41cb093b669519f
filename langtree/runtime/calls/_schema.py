"""The structured-output model of a step: a pydantic class holding only its fields.

One class is built per plan step (DESIGN D11), from the node's field annotations and
their descriptions with the DSL commands removed. Nested ``TreeNode`` classes are used as
they are, so a node generated whole arrives as the user's own class, and the class
validates what the model sends; where a nested class has known fields, a subclass that
leaves them out is used instead (see `langtree.runtime.engine._known_parts`).

The model itself is shown the class's JSON schema as `langtree.prompts._schema_text`
writes it: the docstrings and field descriptions of nested node classes lose their
command lines (``! ...``) and ``{placeholders}``, which only LangTree resolves.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, Field, create_model

from langtree.errors import StructureError
from langtree.prompts import PromptSetup, PromptTokens, tool_name, tool_schema
from langtree.runtime.engine._known_parts import KnownParts
from langtree.structure import Node, PlanStep, node_diagnostic

__all__ = ["output_schema", "schema_tokens", "step_model"]


def step_model(node: Node, step: PlanStep, parts: KnownParts | None = None) -> type[BaseModel]:
    """A pydantic class with the step's fields, each required, in the step's order.

    Args:
        node: The node whose fields the step generates.
        step: The plan step.
        parts: The known fields of nodes generated whole; a node field whose nested
            classes have some gets variants of them that leave those out (a run always
            passes them; without, the user's classes are used as they are).

    Returns:
        A class named after the node and the fields (the tool name models see).

    Examples:
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
        annotation = parts.annotation(node, node_field) if parts else node_field.annotation
        # The field's constraints (ge, max_length, ...) come along: the model sees them
        # in the schema, and an answer that breaks them is invalid output, asked again.
        metadata = node.node_class.model_fields[name].metadata
        if metadata:
            annotation = Annotated[(annotation, *metadata)]
        definitions[name] = (annotation, Field(description=description))
    class_name = tool_name(node.node_class, step.fields)
    # No docstring: it would be the tool's description, sent with every call, and the
    # class's name (the tool's) already says which node and fields it fills.
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        class_name, **definitions
    )
    return model


def output_schema(
    node: Node, step: PlanStep, parts: KnownParts
) -> tuple[type[BaseModel], dict[str, Any]]:
    """The step's class (`step_model()`) and the JSON schema the model is shown.

    Raises:
        StructureError: The nodes the step generates whole nest too deep for pydantic to
            build the class or its schema.
    """
    try:
        output = step_model(node, step, parts)
        return output, tool_schema(output)
    except RecursionError:
        fields = ", ".join(repr(name) for name in step.fields)
        message = (
            f"The output of step {step.id!r} nests too deep for pydantic to build its JSON schema"
        )
        hint = (
            f"give {fields} a value (a default, or a partial node in the inputs) so that "
            "the nodes below are generated step by step, or nest the classes less deeply"
        )
        raise StructureError([node_diagnostic(node, message, hint)]) from None


def schema_tokens(setup: PromptSetup) -> dict[str, PromptTokens]:
    """The tokens of each model step's output schema, by step id, as the cost of a run
    counts them: the schema a call sends (`output_schema()`) as compact JSON, uncounted
    until read. Providers wrap a schema in their own way (a tool, a response format, a
    JSON-mode instruction), which adds a few tokens that are not counted.

    A step whose output nests too deep for pydantic to build its schema has none here:
    its prompt can still be previewed, and the run refuses the step (`output_schema()`).
    """
    parts = KnownParts(setup.registry, setup.known(), setup.split())
    counted: dict[str, PromptTokens] = {}
    for step in setup.plan.steps:
        node = setup.registry.get(step.node_tag)
        # A transform sends no schema, and a step's schema is the same for all its instances.
        if step.transform is not None or node is None or step.id in counted:
            continue
        try:
            _, schema = output_schema(node, step, parts)
        except StructureError:  # too deep: the run reports it, the preview still shows
            continue
        text = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
        counted[step.id] = PromptTokens(text, setup.model_names.get(step.model, step.model))
    return counted
