"""Resolve ``@each``/``@all`` commands into data flows, checking their paths and levels.

A flow is one command seen against the tree: the node it stands in, what it iterates,
where it sends data, and for each mapping the source it reads and the target it writes
(DESIGN D5–D8). Problems found on the way become diagnostics; a flow is kept only when
its destination resolves, and a mapping only when its source, its target and its list
levels are right. Every mapping's target is checked, whatever its source, so that one
``validate()`` reports every problem.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

from langtree.dsl import (
    SCOPES,
    AllCommand,
    EachCommand,
    Pluck,
    VariableMapping,
    reserved_runtime_name,
    split_plucks,
    split_scope,
)
from langtree.errors import Diagnostic
from langtree.structure.commands._plucks import pluck_problem, unplucked_list
from langtree.structure.tree._registry import NodeRegistry, PathProblem, ResolvedPath
from langtree.structure.tree._tree import Node, NodeCommand, NodeField
from langtree.structure.tree._tree_node import display_name
from langtree.structure.types._annotations import sequence_kind, strip_optional

__all__ = ["Flow", "MappingFlow", "TargetScope", "resolve_flows"]

TargetScope: TypeAlias = Literal["value", "prompt", "outputs", "external"]
EXTERNAL_DESTINATION = "prompt.external"


@dataclass(frozen=True, slots=True, kw_only=True)
class MappingFlow:
    """One mapping, resolved.

    Attributes:
        mapping: The mapping as written.
        scope: What the target is: a field (``value``), a prompt variable, a context
            entry (``outputs``), or an external prompt variable.
        name: The target without its scope: a field path, or a variable/entry name.
        source: The source path resolved from the command's node (``None`` for ``*``
            and for a literal).
        target: The target field resolved from the destination (``value`` scope only).
        target_levels: List levels from the command's node down to the target field.
        plucks: The source's pluck operators (``items.*.id``); ``source`` is then the
            path without them (``items.id``).
    """

    mapping: VariableMapping
    scope: TargetScope
    name: str
    source: ResolvedPath | None
    target: ResolvedPath | None
    target_levels: int = 0
    plucks: tuple[Pluck, ...] = ()

    @property
    def is_literal(self) -> bool:
        """Whether the mapping sends a literal value (it reads no field)."""
        return self.mapping.is_literal


@dataclass(frozen=True, slots=True, kw_only=True)
class Flow:
    """An ``@each``/``@all`` command resolved against the tree.

    Attributes:
        position: The command's place among every resolved command, in tree order (the
            definition order in which several commands' values reach one place).
    """

    command: NodeCommand
    node: Node
    inclusion: ResolvedPath | None
    destination: ResolvedPath | None
    mappings: tuple[MappingFlow, ...]
    position: int = 0

    @property
    def is_each(self) -> bool:
        """Whether the command iterates (``@each``)."""
        return isinstance(self.command.command, EachCommand)

    @property
    def depth(self) -> int:
        """How many list levels the iteration runs over (0 for ``@all``)."""
        return self.inclusion.list_levels if self.inclusion else 0


@dataclass(frozen=True, slots=True, kw_only=True)
class _Target:
    """A mapping's target, resolved (see `MappingFlow`)."""

    scope: TargetScope
    name: str
    target: ResolvedPath | None = None
    levels: int = 0


def resolve_flows(registry: NodeRegistry) -> tuple[list[Flow], list[Diagnostic]]:
    """Resolve every ``@each``/``@all`` command of every node."""
    flows: list[Flow] = []
    diagnostics: list[Diagnostic] = []
    for node in registry:
        for node_command in node.all_commands:
            if isinstance(node_command.command, EachCommand | AllCommand):
                flow = _Resolver(registry, node, node_command, diagnostics).resolve()
                if flow is not None:
                    flows.append(replace(flow, position=len(flows)))
    return flows, diagnostics


class _Resolver:
    """Resolves one command, appending what is wrong to ``diagnostics``."""

    def __init__(
        self,
        registry: NodeRegistry,
        node: Node,
        node_command: NodeCommand,
        diagnostics: list[Diagnostic],
    ) -> None:
        self.registry = registry
        self.node = node
        self.at = node_command
        command = node_command.command
        assert isinstance(command, EachCommand | AllCommand)
        self.command: EachCommand | AllCommand = command
        self.diagnostics = diagnostics

    def error(
        self, message: str, hint: str, mapping: VariableMapping | None = None, *, part: str = ""
    ) -> None:
        span = (
            mapping.span
            if mapping
            else getattr(self.command, f"{part}_span", None)
            if part
            else None
        )
        self.diagnostics.append(self.at.diagnostic(message, hint=hint, span=span))

    def resolve(self) -> Flow | None:
        """The flow, or ``None`` when its iteration or destination does not resolve.

        Either way every part of the command is checked, so that one ``validate()``
        reports all of its problems.
        """
        each = isinstance(self.command, EachCommand)
        inclusion = self._inclusion() if each else None
        destination = self._destination()
        iterated = not each or inclusion is not None
        resolved = list(self._mappings(inclusion, destination, iterated=iterated))
        if not iterated or destination is False:
            return None
        rejected = self._check_levels(inclusion, [flow for flow, _ in resolved])
        return Flow(
            command=self.at,
            node=self.node,
            inclusion=inclusion,
            destination=destination,
            mappings=tuple(f for f, ok in resolved if ok and id(f) not in rejected),
        )

    def _destination(self) -> ResolvedPath | Literal[False] | None:
        """The destination; ``None`` for ``prompt.external``, ``False`` when it is wrong."""
        path = self.command.destination_path
        if path == EXTERNAL_DESTINATION:
            return None
        destination = self._resolve(path, self.node, part="destination")
        return False if destination is None else destination

    # -- inclusion -------------------------------------------------------------------------

    def _inclusion_path(self) -> str | None:
        assert isinstance(self.command, EachCommand)
        return self.command.inclusion_path or self.at.field_name

    def _inclusion(self) -> ResolvedPath | None:
        path = self._inclusion_path()
        field_name = self.at.field_name
        if path is None:
            lists = [f.name for f in self.node.fields if f.shape.is_iterable]
            example = f"'@each[{lists[0]}]->...'" if lists else "'@each[<list field>]->...'"
            self.error(
                "@each in a docstring needs an inclusion path",
                f"name the list to iterate in brackets, e.g. {example}",
            )
            return None
        if field_name is not None and path.split(".")[0] != field_name:
            self.error(
                f"Inclusion path {path!r} must start with the field {field_name!r} that holds "
                "the command",
                _inclusion_hint(path, self.node.field(field_name)),
                part="inclusion",
            )
            return None
        resolved = self._resolve(path, self.node, part="inclusion", relative=True)
        if resolved is not None and resolved.list_levels == 0:
            self.error(*_nothing_to_iterate(path, resolved), part="inclusion")
            return None
        return resolved

    # -- paths ----------------------------------------------------------------------------

    def _resolve(
        self,
        path: str,
        start: Node,
        *,
        part: str = "",
        mapping: VariableMapping | None = None,
        relative: bool = False,
    ) -> ResolvedPath | None:
        """Resolve ``path``; only a destination (``relative=False``) may be ``task.<name>``."""
        resolve = self.registry.resolve_relative if relative else self.registry.resolve
        result = resolve(path, start)
        if isinstance(result, PathProblem) and result.reported:
            return None
        if isinstance(result, PathProblem):
            self.error(
                f"Path {path!r} does not resolve: {result.message}", result.hint, mapping, part=part
            )
            return None
        return result

    # -- mappings --------------------------------------------------------------------------

    def _mappings(
        self,
        inclusion: ResolvedPath | None,
        destination: ResolvedPath | Literal[False] | None,
        *,
        iterated: bool,
    ) -> Iterator[tuple[MappingFlow, bool]]:
        """Each mapping whose target resolves, and whether its source does too.

        When the destination is wrong, only what can be checked without it is: sources,
        and the names of ``prompt``/``outputs`` targets.
        """
        for mapping in self.command.mappings:
            source = self._source(mapping, inclusion, iterated=iterated)
            if destination is False:
                self._target_name(mapping)
                continue
            target = self._target(mapping, destination)
            if target is not None:
                flow = MappingFlow(
                    mapping=mapping,
                    scope=target.scope,
                    name=target.name,
                    source=None if source is False else source,
                    target=target.target,
                    target_levels=target.levels,
                    plucks=() if mapping.is_wildcard or mapping.is_literal else _plucks_of(mapping),
                )
                yield flow, source is not False

    def _source(
        self, mapping: VariableMapping, inclusion: ResolvedPath | None, *, iterated: bool
    ) -> ResolvedPath | Literal[False] | None:
        """The resolved source; sources under an iteration path that was reported as
        wrong are not resolved, as that would report the same problem again."""
        if mapping.is_wildcard or mapping.is_literal:
            return None
        path, plucks = split_plucks(mapping.resolved_source_path)
        consumed = 0
        if isinstance(self.command, EachCommand):
            scope_path = self._inclusion_path()
            if scope_path is not None and not self._within_iteration(path, scope_path, mapping):
                return False
            if not iterated:
                return False
            consumed = len(inclusion.fields) if inclusion else 0
        elif not self._all_source_allowed(_before_plucks(path, plucks), mapping):
            return False
        if plucks and not self._plucks_fit(path, plucks, mapping, consumed):
            return False
        resolved = self._resolve(path, self.node, mapping=mapping, relative=True)
        if resolved is not None and plucks:
            problem = unplucked_list(resolved, plucks, mapping.resolved_source_path, consumed)
            if problem is not None:
                self.error(*problem, mapping)
                return False
        return resolved if resolved is not None else False

    def _plucks_fit(
        self, path: str, plucks: tuple[Pluck, ...], mapping: VariableMapping, consumed: int
    ) -> bool:
        """Whether every pluck reads a list of nodes that has the field plucked."""
        names = path.split(".")
        for pluck in plucks:
            base = self._resolve(
                ".".join(names[: pluck.after]), self.node, mapping=mapping, relative=True
            )
            if base is None:
                return False
            source = mapping.resolved_source_path
            problem = pluck_problem(base, pluck, source, names, consumed)
            if problem is not None:
                self.error(*problem, mapping)
                return False
        return True

    def _within_iteration(self, path: str, scope_path: str, mapping: VariableMapping) -> bool:
        if path == scope_path or path.startswith(scope_path + "."):
            return True
        what = (
            f"The implicit mapping {mapping.target_path!r} reads {path!r}, which"
            if mapping.is_implicit
            else f"Source {path!r}"
        )
        self.error(
            f"{what} is not within the iteration over {scope_path!r}",
            f"every source of this @each must be {scope_path!r} or start with '{scope_path}.'",
            mapping,
        )
        return False

    def _all_source_allowed(self, path: str, mapping: VariableMapping) -> bool:
        field_name = self.at.field_name
        if field_name is not None and path != field_name:
            what = "implicit mapping's name" if mapping.is_implicit else "source"
            target, head = mapping.target_path, path.split(".")[0]
            if head == field_name:
                where = "; @all sends whole fields, not parts of them"
            elif self.node.field(head) is not None:
                where = f", or move the command into the description of {head!r}"
            else:
                where = f"; {display_name(self.node.node_class)!r} has no field {head!r}"
            self.error(
                f"@all sends only the field that holds it: the {what} {path!r} is not "
                f"{field_name!r}",
                f"write '{target}={field_name}' or '{target}=*'{where}",
                mapping,
            )
            return False
        if field_name is None and "." in path:
            self.error(
                f"@all in a docstring sends one field or the whole node, not {path!r}",
                f"write a field of {display_name(self.node.node_class)!r} or '*'",
                mapping,
            )
            return False
        return True

    def _target(self, mapping: VariableMapping, destination: ResolvedPath | None) -> _Target | None:
        scope, name = split_scope(mapping.target_path)
        if destination is None:
            return self._external_target(mapping, scope, name)
        if scope in ("prompt", "outputs"):
            return self._named_target(mapping, scope, name)
        if scope is None and not self._known_head(mapping, destination.node):
            return None
        resolved = self._resolve(name, destination.node, mapping=mapping, relative=True)
        if resolved is None:
            return None
        levels = destination.list_levels + resolved.list_levels
        return _Target(scope="value", name=name, target=resolved, levels=levels)

    def _target_name(self, mapping: VariableMapping) -> None:
        """Check a target's name alone (its destination did not resolve)."""
        scope, name = split_scope(mapping.target_path)
        if scope in ("prompt", "outputs"):
            self._named_target(mapping, scope, name)

    def _known_head(self, mapping: VariableMapping, node: Node) -> bool:
        """Whether an unscoped target starts with a field of ``node`` (else: an error)."""
        head, dot, _ = mapping.target_path.partition(".")
        if not dot or node.field(head) is not None:
            return True
        names = ", ".join(repr(f.name) for f in node.fields) or "none"
        self.error(
            f"Target {mapping.target_path!r} starts with {head!r}, which is neither a scope "
            f"nor a field of {display_name(node.node_class)!r} ({node.tag})",
            f"start it with one of the scopes {', '.join(sorted(SCOPES))}, or with one of the "
            f"fields {names}",
            mapping,
        )
        return False

    def _external_target(
        self, mapping: VariableMapping, scope: str | None, name: str
    ) -> _Target | None:
        if scope in (None, "prompt"):
            return self._named_target(mapping, "external", name)
        self.error(
            f"Target {mapping.target_path!r}: prompt.external takes variable names, not "
            f"{scope!r} targets",
            f"name the external variable alone, e.g. '{name.split('.')[-1]}'",
            mapping,
        )
        return None

    def _named_target(
        self, mapping: VariableMapping, scope: TargetScope, name: str
    ) -> _Target | None:
        prefix = "" if scope == "external" else f"{scope}."
        if "." in name or not name.isidentifier():
            kind = {
                "prompt": "a prompt variable",
                "outputs": "a context entry",
                "external": "an external variable",
            }[scope]
            self.error(
                f"Target {mapping.target_path!r} must name {kind} with a single name",
                f"use one name, e.g. '{prefix}{name.split('.')[-1]}'",
                mapping,
            )
            return None
        # An outputs entry is a title in the context, not a variable a text names.
        reserved = reserved_runtime_name(name) if scope != "outputs" else None
        if reserved is not None:
            self.error(
                f"Target {mapping.target_path!r} {reserved}",
                f"choose another name, e.g. '{prefix}{_unreserved(name)}'",
                mapping,
            )
            return None
        return _Target(scope=scope, name=name)

    # -- levels ----------------------------------------------------------------------------

    def _check_levels(
        self, inclusion: ResolvedPath | None, mappings: list[MappingFlow]
    ) -> set[int]:
        """Report mappings whose list levels do not fit; returns their ``id()``."""
        values = [m for m in mappings if m.scope == "value"]
        if inclusion is not None:
            return self._check_each_levels(inclusion.list_levels, values)
        if self.command.has_multiplicity:
            return set()
        crossing = [m for m in values if _crossed_levels(m)]
        for mapping_flow in crossing:
            self.error(
                f"Target {mapping_flow.mapping.target_path!r} lies inside a list, but "
                "@all without '*' sends one value to one place",
                "add '*' after '}}' to send the value to every element (1:n)",
                mapping_flow.mapping,
            )
        return {id(m) for m in crossing}

    def _check_each_levels(self, depth: int, values: list[MappingFlow]) -> set[int]:
        deeper = [m for m in values if m.target_levels > depth]
        for mapping_flow in deeper:
            self.error(
                f"Target {mapping_flow.mapping.target_path!r} has {mapping_flow.target_levels} "
                f"list level(s), more than the {depth} the iteration provides",
                "map into a field with no more list levels than the inclusion path iterates",
                mapping_flow.mapping,
            )
        if values and all(m.target_levels != depth for m in values):
            self.error(
                f"No target of this @each has exactly {depth} list level(s), the depth of "
                f"the iteration over {self._inclusion_path()!r}",
                "map at least one value into a list field (one element per iteration), "
                "e.g. 'value.items=...' where items is a list",
            )
        return {id(m) for m in deeper}


def _unreserved(name: str) -> str:
    """A name like ``name`` that a runtime variable can have: lower case, no ``__``."""
    return re.sub("_{2,}", "_", name.lower())


def _plucks_of(mapping: VariableMapping) -> tuple[Pluck, ...]:
    return split_plucks(mapping.resolved_source_path)[1]


def _before_plucks(path: str, plucks: tuple[Pluck, ...]) -> str:
    """The path up to its first pluck (the list that ``@all`` sends, plucked)."""
    return ".".join(path.split(".")[: plucks[0].after]) if plucks else path


def _crossed_levels(mapping_flow: MappingFlow) -> int:
    """List levels on the way to the target field (its own are written whole by ``@all``)."""
    target = mapping_flow.target
    own = target.field.shape.list_depth if target and target.field else 0
    return mapping_flow.target_levels - own


def _nothing_to_iterate(path: str, resolved: ResolvedPath) -> tuple[str, str]:
    """The message and hint for an inclusion path that crosses no sequence."""
    sets = [f.name for f in resolved.fields if _is_set(f.annotation)]
    if sets:
        return (
            f"Inclusion path {path!r} has nothing to iterate: {sets[0]!r} is a set, which has "
            "no order",
            f"declare {sets[0]!r} as a list (or a tuple) to iterate it with @each",
        )
    return (
        f"Inclusion path {path!r} has nothing to iterate: no field on it is a list",
        "@each iterates over list fields; use '@all' to send a single value",
    )


def _is_set(annotation: object) -> bool:
    return sequence_kind(strip_optional(annotation)[0]) in ("set", "frozenset")


def _inclusion_hint(path: str, holder: NodeField | None) -> str:
    move = f"move the command into the description of {path.split('.')[0]!r}"
    if holder is None or not (holder.shape.is_iterable or holder.shape.node_class):
        return move
    return f"{move}, or iterate over {holder.name!r}"
