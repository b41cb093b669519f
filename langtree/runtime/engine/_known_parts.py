"""Fields inside a node generated whole that its step does not ask for (D2, D8, D3).

A generated node field is produced whole inside its step, but some fields of the nested
classes may already be known: a non-``None`` default, or a ``value`` target that an
``@all ... *`` broadcasts into every element. Others are left to *split steps* of their
own (a field with its own ``llm``/``resample``, or a node field whose class declares one;
see `langtree.structure.planning._steps`), which run once the step has created the node. The
step's class then uses a *variant* of each such nested class: a subclass of the user's
class whose left-out fields are out of the JSON schema the model sees
(``SkipJsonSchema``) and are not required (a required field left to a split step does not
fail this step's validation), so that the user's validators still check what the model
writes. Once the step's output is read, `KnownParts.fill()` drops whatever stands in the
left-out fields and sets the known defaults again; the broadcast then writes its value
into every element (its command waits for the step that generates the list, see
``langtree.structure.commands._command_keys.flow_reads``), and the split steps write theirs.
"""

from __future__ import annotations

import types
from collections.abc import Collection, Mapping
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, Field, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import SkipJsonSchema

from langtree.prompts import elements, fill_defaults
from langtree.structure import Node, NodeField, NodeRegistry

__all__ = ["KnownParts"]


class KnownParts:
    """The left-out fields of nodes generated whole, for the classes and values of steps.

    Args:
        registry: The nodes.
        known: The known fields by node tag (``langtree.structure.planning._known.known_fields``).
        split: The fields split steps generate, by node tag
            (``langtree.prompts._preview.PromptSetup.split``).
    """

    def __init__(
        self,
        registry: NodeRegistry,
        known: Mapping[str, set[str]],
        split: Mapping[str, Collection[str]] | None = None,
    ) -> None:
        self.registry = registry
        self.known = known
        self.split = split or {}
        # One variant per node, built once and shared by every step that generates the node
        # whole and every variant that nests it, rather than a class of their own each.
        self._variants: dict[str, type[BaseModel]] = {}
        self._holds_known: dict[str, bool] = {}

    def annotation(self, node: Node, node_field: NodeField) -> object:
        """The field's annotation with its node class replaced by a variant, if needed."""
        child = self.registry.child(node, node_field.name)
        if child is None or not self._has_known(child):
            return node_field.annotation
        return _swapped(node_field.annotation, child.node_class, self._variant(child))

    def fill(self, node: Node, values: dict[str, object]) -> None:
        """Drop what a step wrote into known fields below ``node``'s generated fields
        ``values``, and set their defaults again."""
        for name, value in values.items():
            child = self.registry.child(node, name)
            node_field = node.field(name)
            if child is None or node_field is None or not self._has_known(child):
                continue
            for _, element in elements(value, node_field.shape.list_depth):
                if isinstance(element, dict):
                    self._fill_element(child, element)

    def _fill_element(self, top: Node, values: dict[str, object]) -> None:
        # A stack rather than recursion: the values a model generates may nest deep.
        pending = [(top, values)]
        while pending:
            node, node_values = pending.pop()
            for name in self._left_out(node):
                node_values.pop(name, None)
            for node_field in node.fields:
                child = self.registry.child(node, node_field.name)
                if child is None:
                    continue
                found = elements(node_values.get(node_field.name), node_field.shape.list_depth)
                pending += [(child, item) for _, item in found if isinstance(item, dict)]
        # After the drop: a known default stands again where the model wrote something.
        fill_defaults(self.registry, top, values)

    def _left_out(self, node: Node) -> set[str]:
        """The fields of ``node`` the model is not asked for: those split steps generate,
        and the known ones but a node field whose default leaves fields below it to
        generate (nothing but this step can generate them, so the model produces that
        node whole)."""
        return set(self.split.get(node.tag, ())) | {
            name
            for name in self.known.get(node.tag, ())
            if (child := self.registry.child(node, name)) is None or self._all_known(child)
        }

    def _all_known(self, node: Node) -> bool:
        """Whether every field of ``node`` and of the nodes below it is known, or left to
        a split step: nothing of it is this step's to write."""
        return all(
            set(self.known.get(member.tag, ())) | set(self.split.get(member.tag, ()))
            >= {f.name for f in member.fields}
            for member in self.registry.subtree(node)
        )

    def _has_known(self, node: Node) -> bool:
        """Whether ``node`` or a node below it has a known field, or one a split step
        generates."""
        if node.tag not in self._holds_known:
            self._holds_known[node.tag] = any(
                self.known.get(member.tag) or self.split.get(member.tag)
                for member in self.registry.subtree(node)
            )
        return self._holds_known[node.tag]

    def _variant(self, node: Node) -> type[BaseModel]:
        """The user's class of ``node``, its known fields out of the schema."""
        if node.tag in self._variants:
            return self._variants[node.tag]
        user_class = node.node_class
        known = self._left_out(node)
        overrides: dict[str, Any] = {}
        for node_field in node.fields:
            info = user_class.model_fields[node_field.name]
            if node_field.name in known:
                overrides[node_field.name] = (_OUT_OF_SCHEMA, _placeholder(info, node_field))
            else:
                # Nested classes with left-out fields of their own get their variants too.
                swapped = self.annotation(node, node_field)
                if swapped is not node_field.annotation:
                    overrides[node_field.name] = (swapped, info)
        # A subclass of the user's class, so that its validators check what the model writes;
        # with its name, docstring and module, so that the schema shows the user's class.
        variant = create_model(
            user_class.__name__,
            __base__=user_class,
            __doc__=user_class.__doc__,
            __module__=user_class.__module__,
            **overrides,
        )
        self._variants[node.tag] = variant
        return variant


_OUT_OF_SCHEMA = Annotated[Any, SkipJsonSchema()]


def _placeholder(info: FieldInfo, node_field: NodeField) -> Any:
    """A known field's stand-in: its default when it has one (validators see the real
    value), else ``None`` until the broadcast writes it."""
    # A factory: a default factory is called anew, and a mutable default copied, for each
    # element, as pydantic does for the user's class.
    if node_field.has_known_default:
        return Field(default_factory=lambda: info.get_default(call_default_factory=True))
    return Field(default=None)


def _swapped(annotation: object, old: type, new: type) -> object:
    """``annotation`` with the class ``old`` replaced by ``new`` wherever it stands."""
    if annotation is old:
        return new
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is None or not args:
        return annotation
    # The metadata (constraints, descriptions) stays on the swapped class.
    if origin is Annotated:
        return Annotated[_swapped(args[0], old, new), *annotation.__metadata__]  # type: ignore[attr-defined]
    swapped = tuple(_swapped(arg, old, new) for arg in args)
    if origin in (Union, types.UnionType):
        return Union[swapped]  # noqa: UP007 - built from a tuple of members
    return origin[swapped]
