"""What a node's steps show in their context: ``@context[...]`` in the node's docstring.

Without the command (or with ``@context[*]``) a step's context holds every known value of
its node. ``@context[heading, paragraphs.*.summary]`` holds these entries only, in the
order written; ``@context[]`` none. Each entry is a path from the node: a field, then node
fields, crossing lists only with the pluck operators of mapping sources
(`langtree.structure.commands._plucks`). The declaration applies to the node's own steps; the
nodes below it declare their own. ``outputs`` entries that commands send are shown
whatever the declaration.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from langtree.dsl import ContextCommand, Pluck, Span, split_plucks, suggest
from langtree.errors import Diagnostic
from langtree.structure.commands._plucks import pluck_problem, unplucked_list
from langtree.structure.tree._registry import FieldKey, NodeRegistry, PathProblem, ResolvedPath
from langtree.structure.tree._tree import Node, NodeCommand, NodeField, title_from_name
from langtree.structure.tree._tree_node import display_name

__all__ = ["ContextPath", "declared_context", "fields_hint"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextPath:
    """One entry that a ``@context[...]`` declares, resolved against its node.

    Attributes:
        path: The path as written, e.g. ``paragraphs.*.summary``.
        title: The entry's heading: the path's names joined (``Paragraphs Summary``).
        fields: The fields the path goes through, from the node.
        plucks: Its pluck operators (none for a plain path).
        known_at: The field whose value must be known for the entry to show: the list
            before the first pluck, or the path's last field.
        command: The ``@context`` command, for errors while its values are read.
        span: Where the path stands in the command.
    """

    path: str
    title: str
    fields: tuple[NodeField, ...]
    plucks: tuple[Pluck, ...]
    known_at: FieldKey
    command: NodeCommand
    span: Span | None = None


def declared_context(
    registry: NodeRegistry, node: Node
) -> tuple[tuple[ContextPath, ...] | None, list[Diagnostic]]:
    """The entries ``node`` declares for its steps' context, and what is wrong with them.

    Returns:
        The entries in the order written (``None``: every known value, as without the
        command), and the diagnostics: a ``@context`` in a field's description, a second
        one in the docstring, ``*`` among other entries, an entry listed twice, and paths
        that name no field, lead nowhere or cross a list without a pluck.
    """
    diagnostics = _misplaced(node)
    commands = [c for c in node.commands if isinstance(c.command, ContextCommand)]
    for extra in commands[1:]:
        diagnostics.append(
            extra.diagnostic(
                f"{display_name(node.node_class)!r} has more than one @context command",
                hint="keep one @context[...] that lists every entry",
            )
        )
    if not commands:
        return None, diagnostics
    checker = _Checker(registry, node, commands[0])
    entries = checker.entries()
    return entries, diagnostics + checker.diagnostics


def fields_hint(name: str, node: Node) -> str:
    """A hint for ``name``, which is not a field of ``node``: the closest field, and all."""
    names = [node_field.name for node_field in node.fields]
    if not names:
        return "the node has no fields; remove the command"
    close = suggest(name, names, fallback="")
    return f"{close + ' ' if close else ''}its fields are {', '.join(map(repr, names))}"


def _misplaced(node: Node) -> list[Diagnostic]:
    return [
        misplaced.diagnostic(
            "A @context command belongs in the class docstring, not in a field's description",
            hint=f"move it to the docstring of {display_name(node.node_class)!r}",
        )
        for node_field in node.fields
        for misplaced in node_field.commands
        if isinstance(misplaced.command, ContextCommand)
    ]


class _Checker:
    """Resolves the entries of one ``@context`` command, collecting what is wrong."""

    def __init__(self, registry: NodeRegistry, node: Node, node_command: NodeCommand) -> None:
        assert isinstance(node_command.command, ContextCommand)
        self.registry = registry
        self.node = node
        self.node_command = node_command
        self.command = node_command.command
        self.diagnostics: list[Diagnostic] = []

    def entries(self) -> tuple[ContextPath, ...] | None:
        """The resolved entries (``None`` for ``*``); wrong ones are left out."""
        paths = self.command.paths
        spans = self.command.path_spans or (None,) * len(paths)
        first = [index for index, path in enumerate(paths) if paths.index(path) == index]
        for index in sorted(set(range(len(paths))) - set(first)):
            twice = paths[index]
            self.error(
                f"@context lists {twice!r} twice", spans[index], f"remove the second {twice!r}"
            )
        if "*" in paths:
            self._star_alone(paths, spans)
            return None
        entries = (self._entry(paths[index], spans[index]) for index in first)
        return tuple(entry for entry in entries if entry is not None)

    def error(self, message: str, span: Span | None, hint: str) -> None:
        self.diagnostics.append(self.node_command.diagnostic(message, hint=hint, span=span))

    def _star_alone(self, paths: tuple[str, ...], spans: tuple[Span | None, ...]) -> None:
        others = [path for path in dict.fromkeys(paths) if path != "*"]
        if others:
            self.error(
                "'*' in @context means every known value: it cannot be listed with other entries",
                spans[paths.index("*")],
                f"write '! @context[*]' for every known value, or "
                f"'! @context[{', '.join(others)}]' for these entries only",
            )

    def _entry(self, path: str, span: Span | None) -> ContextPath | None:
        plain, plucks = split_plucks(path)
        names = plain.split(".")
        if self.node.field(names[0]) is None:
            head = replace(span, length=len(names[0])) if span else None
            self.error(
                f"@context names {names[0]!r}, which is not a field of "
                f"{display_name(self.node.node_class)!r}",
                head,
                fields_hint(names[0], self.node),
            )
            return None
        if not all(self._pluck_fits(path, names, pluck, span) for pluck in plucks):
            return None
        resolved = self._resolve(path, plain, span)
        if resolved is None:
            return None
        unplucked = unplucked_list(resolved, plucks, path, 0)
        if unplucked is not None:
            message = f"@context path {path!r} crosses a list without a pluck operator"
            self.error(message, span, unplucked[1])
            return None
        return ContextPath(
            path=path,
            title=title_from_name("_".join(names)),
            fields=resolved.fields,
            plucks=plucks,
            known_at=self._known_at(resolved, plucks),
            command=self.node_command,
            span=span,
        )

    def _pluck_fits(self, path: str, names: list[str], pluck: Pluck, span: Span | None) -> bool:
        base = self._resolve(path, ".".join(names[: pluck.after]), span)
        if base is None:
            return False
        problem = pluck_problem(base, pluck, path, names, 0)
        if problem is not None:
            self.error(problem[0], span, problem[1])
        return problem is None

    def _resolve(self, path: str, plain: str, span: Span | None) -> ResolvedPath | None:
        result = self.registry.resolve_relative(plain, self.node)
        if isinstance(result, PathProblem):
            if not result.reported:
                self.error(
                    f"@context path {path!r} does not resolve: {result.message}", span, result.hint
                )
            return None
        return result

    def _known_at(self, resolved: ResolvedPath, plucks: tuple[Pluck, ...]) -> FieldKey:
        """The field before the first pluck (or the last), by the node that holds it."""
        count = plucks[0].after if plucks else len(resolved.fields)
        holder = self.node
        for node_field in resolved.fields[: count - 1]:
            child = self.registry.child(holder, node_field.name)
            assert child is not None, "the path goes through node fields"
            holder = child
        return FieldKey(holder.tag, resolved.fields[count - 1].name)
