"""Transform fields: a field computed from values already known, with no model call.

``! transform("expression")`` in a field's description makes the field a *transform*: a
Jinja2 expression (an expression, not a template: no ``{{ }}``) evaluated in Jinja2's
immutable sandbox (it cannot change the values it reads), with undefined values an error,
over the values of the field's node and of the nodes above it. A name in the expression
reads the field of that name on the nearest of these nodes, the way a ``{name}`` in a
prompt does; Jinja2's own globals (``range``, ``dict``, ``namespace``...) stay available.
Node values are plain dicts, and a dict's keys win over its methods, so ``order.items``
is the field ``items``, not ``dict.items``.

Everything that can be told before the run is checked here: the expression compiles
(syntax, unknown filters and tests), every name it reads is a field, the field has no
default that would make it known before the run, and no ``llm()``/``resample()`` stands
beside it. The run evaluates it (`langtree.runtime.engine._transforms`) once what it reads
is known, and converts the value to the field's annotation like a ``value`` mapping.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from jinja2 import StrictUndefined, TemplateError, nodes
from jinja2.environment import TemplateExpression
from jinja2.parser import Parser
from jinja2.sandbox import ImmutableSandboxedEnvironment

from langtree.dsl import suggest
from langtree.errors import Diagnostic
from langtree.structure.tree._registry import FieldKey, NodeRegistry
from langtree.structure.tree._tree import Node, NodeCommand, NodeField
from langtree.structure.tree._tree_node import display_name

__all__ = [
    "ENVIRONMENT",
    "Transform",
    "compiled",
    "field_transform",
]

_EXAMPLE = "transform(\"items | map(attribute='id') | list\")"


class _TransformEnvironment(ImmutableSandboxedEnvironment):
    """The immutable sandbox, reading a dict's key before an attribute of the same name."""

    def getattr(self, obj: object, attribute: str) -> object:
        """``obj.attribute``: for a dict holding ``attribute``, that value."""
        if isinstance(obj, dict) and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)


ENVIRONMENT = _TransformEnvironment(undefined=StrictUndefined)
"""The one environment every transform compiles in."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Transform:
    """A field's ``transform(...)``.

    Attributes:
        expression: The Jinja2 expression, as written (after assembly variables).
        names: The names it reads, in order of first use (fields, or Jinja2 globals).
        location: ``Class.field``, the field it computes.
        command: The command, to point at in diagnostics.
    """

    expression: str
    names: tuple[str, ...]
    location: str
    command: NodeCommand = field(compare=False, repr=False)


@functools.lru_cache(maxsize=1024)
def compiled(expression: str) -> TemplateExpression:
    """The expression compiled once per process (a run evaluates it per instance).

    Raises:
        TemplateError: It does not compile.
    """
    return ENVIRONMENT.compile_expression(expression, undefined_to_none=False)


def field_transform(
    registry: NodeRegistry, node: Node, node_field: NodeField, call: NodeCommand, expression: str
) -> Transform | list[Diagnostic]:
    """The field's transform, or why it cannot be one.

    Args:
        registry: The nodes.
        node: The node holding the field.
        node_field: The field whose description holds ``call``.
        call: The ``transform(...)`` command.
        expression: Its expression, assembly variables resolved.
    """
    location = f"{display_name(node.node_class)}.{node_field.name}"
    problems = _beside(node_field, call, location)
    parsed = _parse(expression, call)
    if isinstance(parsed, Diagnostic):
        return [*problems, parsed]
    # find_all() walks the nodes below the root only: a bare name is the root itself.
    found = [parsed] if isinstance(parsed, nodes.Name) else parsed.find_all(nodes.Name)
    names = tuple(dict.fromkeys(name.name for name in found))
    problems += [
        problem
        for name in names
        if (problem := _name_problem(registry, node, node_field.name, name, call, location))
    ]
    if problems:
        return problems
    return Transform(expression=expression, names=names, location=location, command=call)


def _beside(node_field: NodeField, call: NodeCommand, location: str) -> list[Diagnostic]:
    """What the field's declaration holds that a transform cannot go with (the commands
    beside it are `langtree.structure.call_commands.check_placement()`'s)."""
    problems = []
    if node_field.has_known_default:
        problems.append(
            call.diagnostic(
                f"{location!r} has a default and a transform(): the default makes the field "
                "known before the run, so the transform would never run",
                hint="remove the default (a transform always computes the field), or remove "
                "transform() to keep the default",
            )
        )
    return problems


def _parse(expression: str, call: NodeCommand) -> nodes.Expr | Diagnostic:
    """The expression's syntax tree, once it compiles."""
    if expression.strip().startswith("{{"):
        return call.diagnostic(
            f"transform() takes a Jinja2 expression, not a template: {expression!r}",
            hint="remove the '{{' and '}}', e.g. " + _EXAMPLE,
        )
    try:
        compiled(expression)
        return Parser(ENVIRONMENT, expression, state="variable").parse_expression()
    except TemplateError as error:
        return call.diagnostic(
            f"transform() expression {expression!r} is not a valid Jinja2 expression: "
            f"{error.message}",
            hint="write one Jinja2 expression over the node's fields, e.g. " + _EXAMPLE,
        )


def _name_problem(
    registry: NodeRegistry,
    node: Node,
    field_name: str,
    name: str,
    call: NodeCommand,
    location: str,
) -> Diagnostic | None:
    """Why a name the expression reads is no field it can read, if it is not."""
    found = registry.field_above(node, name)
    if found == FieldKey(node.tag, field_name):
        return call.diagnostic(
            f"transform() of {location!r} reads {name!r}, the field it computes",
            hint="read the fields it is computed from",
        )
    if found is not None or name in ENVIRONMENT.globals:
        return None
    readable = _readable_names(registry, node, field_name)
    close = suggest(name, readable, fallback="")
    return call.diagnostic(
        f"transform() of {location!r} reads {name!r}, which is no field of "
        f"{display_name(node.node_class)!r} or of a node above it",
        hint=f"{close + ' ' if close else ''}it can read "
        + (", ".join(map(repr, readable)) if readable else "no field"),
    )


def _readable_names(registry: NodeRegistry, node: Node, field_name: str) -> list[str]:
    """The field names a transform of ``node`` can read, nearest node first."""
    names = (f.name for holder in reversed(registry.path(node.tag)) for f in holder.fields)
    return [name for name in dict.fromkeys(names) if name != field_name]
