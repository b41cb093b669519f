"""The structured-output model of a step: a pydantic class holding only its fields.

One class is built per plan step (DESIGN D11), from the node's field annotations and
their descriptions with the DSL commands removed. Nested ``TreeNode`` classes are used as
they are, so a node generated whole arrives as the user's own class, and the class
validates what the model sends; where a nested class has known fields, a subclass that
leaves them out is used instead (see `langtree.runtime.engine.known_parts`).

The model itself is shown `tool_schema()`, the class's JSON schema with every
description cleaned: the docstrings and field descriptions of nested node classes lose
their command lines (``! ...``) and ``{placeholders}``, which only LangTree resolves.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from pydantic import BaseModel, Field, create_model

from langtree.dsl.extraction import extract_commands
from langtree.errors import CommandParseError, StructureError
from langtree.prompts.preview import PromptSetup
from langtree.prompts.tokens import PromptTokens
from langtree.runtime.engine.known_parts import KnownParts
from langtree.structure.planning.plan import PlanStep
from langtree.structure.tree.tree import Node, node_diagnostic
from langtree.structure.tree.tree_node import display_name

__all__ = ["clean_description", "output_schema", "schema_tokens", "step_model", "tool_schema"]

_NOT_A_NAME = re.compile(r"[^A-Za-z0-9_]+")


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
    class_name = _NOT_A_NAME.sub("_", f"{display_name(node.node_class)}_{'_'.join(step.fields)}")
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
        if step.transform is not None or node is None or step.id in counted:
            continue
        try:
            _, schema = output_schema(node, step, parts)
        except StructureError:  # too deep: the run reports it, the preview still shows
            continue
        text = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
        counted[step.id] = PromptTokens(text, setup.model_names.get(step.model, step.model))
    return counted


_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_.]*)\}")
_LAYOUT_PLACEHOLDERS = frozenset({"PROMPT_SUBTREE", "COLLECTED_CONTEXT"})
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
_NOT_SCHEMAS = frozenset({"default", "enum", "const", "examples"})


def tool_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a model is shown for ``model``: every description cleaned, and no
    titles but the schema's own (the tool's name).

    Examples:
        >>> from langtree import TreeNode
        >>> class Part(TreeNode):
        ...     \"\"\"
        ...     ! @sequential
        ...     One part of {topic}.
        ...     \"\"\"
        ...     text: str = Field(description="! resample(2)\\nThe text.")
        >>> schema = tool_schema(Part)
        >>> schema["properties"]["text"]["description"]
        'The text.'
        >>> schema["description"]
        'One part of topic.'
    """
    schema = model.model_json_schema()
    cleaned = _cleaned(schema)
    assert isinstance(cleaned, dict)
    # The top-level title names the tool; pydantic's other titles repeat each field's
    # name in every call's input tokens (LangChain drops them the same way for classes).
    cleaned["title"] = schema["title"]
    return cleaned


def clean_description(text: str) -> str:
    """A docstring or description without command lines and placeholders.

    Command lines go (``extract_commands(text).text``); a line holding only a
    placeholder goes; ``{PROMPT_SUBTREE}``/``{COLLECTED_CONTEXT}`` go; any other
    ``{name}`` becomes ``name``; ``{{``/``}}`` become ``{``/``}``.

    Examples:
        >>> clean_description("! resample(3)\\nRate {item}.\\n{COLLECTED_CONTEXT}")
        'Rate item.'
    """
    try:
        text = extract_commands(text).text
    except CommandParseError:
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("!"))
    lines = []
    for line in text.splitlines():
        if _PLACEHOLDER.fullmatch(line.strip()) and line.strip() not in ("{{", "}}"):
            continue
        lines.append(_PLACEHOLDER.sub(_replacement, line).rstrip())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _replacement(match: re.Match[str]) -> str:
    name = match.group(1)
    if name is None:
        return match.group(0)[0]
    return "" if name in _LAYOUT_PLACEHOLDERS else name


def _cleaned(schema: object) -> object:
    if isinstance(schema, list):
        return [_cleaned(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result: dict[str, object] = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            result[key] = {name: _cleaned(item) for name, item in value.items()}
        elif key == "description" and isinstance(value, str):
            text = clean_description(value)
            if text:
                result[key] = text
        elif key in _NOT_SCHEMAS:
            result[key] = value
        elif key == "title" and isinstance(value, str):
            continue
        else:
            result[key] = _cleaned(value)
    return result
