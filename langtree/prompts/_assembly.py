"""Assemble the Markdown of one step for one node instance (DESIGN D9, D10).

The document follows the path from the root task down to the node: each level's
docstring under its title, its ``{PROMPT_SUBTREE}`` replaced by the next level (the field
that leads there, its description, and for a list the element class's title), and at the
node itself by the step's own fields. A field whose type is a node (or a list of nodes)
also shows the nested classes' docstrings and fields. Without ``{PROMPT_SUBTREE}`` what
lies below comes after the docstring, one level under the title. A `PromptShape` can
leave out the levels between the root task and the node (``outline``), or the root task
too, and the fields that the output schema describes (``field_descriptions``). Headings
inside texts are shifted to nest where they are inserted; values put in by ``{name}``
are left as they are. ``{COLLECTED_CONTEXT}`` is replaced by the known values (at the
level nearest the node that places it), or a ``# Context`` section is appended.

Where the parts go is decided on the texts of the classes alone: values are put in by the
one pass that resolves the placeholders and are never read again, so a value that looks
like a placeholder (or holds any other text) stays data. The levels are walked with an
explicit stack, never by recursion, so classes may nest hundreds of levels deep.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from langtree.errors import ExecutionError
from langtree.prompts._attachments import AssetCollector, with_assets
from langtree.prompts._markdown import heading, heading_level_before, join_blocks, shift_headings
from langtree.prompts._plucking import pluck_values
from langtree.prompts._state import Address, RunState, known_defaults
from langtree.prompts._values import render_value
from langtree.structure import (
    PLACEHOLDER,
    Asset,
    ContextPath,
    EntryReaders,
    FieldKey,
    Node,
    NodeField,
    NodeRegistry,
    Outline,
    PromptShape,
    title_from_name,
)

__all__ = ["ContextEntry", "StepDocument", "assemble"]

_SUBTREE = "PROMPT_SUBTREE"
_CONTEXT = "COLLECTED_CONTEXT"
_UNKNOWN = object()
_PATH = PromptShape()
_NO_READERS = EntryReaders()


@functools.lru_cache(maxsize=4096)
def _names(text: str) -> frozenset[str]:
    """The names of the ``{name}`` variables in ``text``."""
    return frozenset(match["name"] for match in PLACEHOLDER.finditer(text) if match["name"])


@functools.lru_cache(maxsize=4096)
def _level_at(text: str, name: str, default: int) -> int:
    """The heading level of the section where the template variable ``name`` stands
    (cached, as `shift_headings()` is)."""
    for match in PLACEHOLDER.finditer(text):
        if match["name"] == name:
            return heading_level_before(text, match.start(), default)
    return default


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextEntry:
    """One known value shown in a step's context: its title and its value."""

    title: str
    value: object


@dataclass(frozen=True, slots=True, kw_only=True)
class StepDocument:
    """The assembled Markdown of a step, and what went into it.

    Attributes:
        text: The Markdown: ``instructions``, then ``context_section``.
        instructions: The texts of the classes down to the step's fields (with the
            context where a docstring places ``{COLLECTED_CONTEXT}``).
        context_section: The ``# Context`` section appended after the instructions
            (``""``: nothing is known, or a docstring places the context).
        variables: Each runtime variable's value by its internal name
            (``prompt__<path>__<name>``; ``prompt__external__<name>`` at the root).
        missing: External variables that the root task's texts use and nothing supplies.
        context: The entries of the context, in the order shown.
        assets: The assets the text shows as placeholders, in the order of their
            numbers (see `langtree.prompts._attachments`).
    """

    text: str
    instructions: str
    context_section: str
    variables: dict[str, object]
    missing: frozenset[str] = frozenset()
    context: tuple[ContextEntry, ...] = ()
    assets: tuple[Asset, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class _Level:
    node: Node
    address: Address
    values: Mapping[str, object]


_Chain = tuple[_Level, ...]


class _Resolver:
    """Resolves ``{name}`` in a text (D9): prompt mapping, field of the node, ancestors.

    ``{{name}}`` becomes the literal ``{name}``; other braces stay as written. Template
    variables are placed or removed in the same pass; a value is never scanned again.
    """

    def __init__(
        self,
        state: RunState,
        external: Mapping[str, object],
        prompt_names: Mapping[str, Collection[str]],
    ) -> None:
        self.state = state
        self.external = external
        self.prompt_names = prompt_names
        self.used: dict[str, object] = {}
        self.missing: set[str] = set()
        self.assets = AssetCollector()

    def substitute(self, text: str, chain: _Chain, *, context: str = "") -> list[str]:
        """``text`` of the node ``chain[-1]`` with its variables resolved: one part, or the
        parts before and after its first ``{PROMPT_SUBTREE}``.

        The first ``{COLLECTED_CONTEXT}`` becomes ``context``. Other template variables,
        and an empty context, are removed with the blank line after them.
        """
        parts: list[str] = []
        pieces: list[str] = []
        position = 0
        for match in PLACEHOLDER.finditer(text):
            pieces.append(text[position : match.start()])
            position = match.end()
            escaped, name = match["escaped"], match["name"]
            if escaped is not None:
                pieces.append("{" + escaped + "}")
                continue
            # The blank line after a placeholder goes with it when it is removed.
            gap = "\n\n" if text.startswith("\n\n", position) else ""
            position += len(gap)
            if name == _SUBTREE and not parts:
                parts.append("".join(pieces))
                pieces = [gap]
            elif name == _CONTEXT and context:
                pieces += [context, gap]
                context = ""
            elif name not in (_SUBTREE, _CONTEXT):
                pieces += [self._value_text(name, chain), gap]
        pieces.append(text[position:])
        return [*parts, "".join(pieces)]

    def _value_text(self, name: str, chain: _Chain) -> str:
        key, value = self._lookup(name, chain)
        if value is _UNKNOWN:
            return "{" + name + "}"
        self.used[key] = value
        return render_value(self.assets.swap(value))

    def _lookup(self, name: str, chain: _Chain) -> tuple[str, object]:
        level = chain[-1]
        key = "prompt__" + level.node.tag.replace(".", "__") + "__" + name
        sent = _prompt_value(self.state, level.address, name)
        if sent is not _UNKNOWN:
            return key, sent
        for ancestor in reversed(chain):
            if ancestor.node.field(name) is not None:
                return key, ancestor.values.get(name, _UNKNOWN)
        if len(chain) > 1 or name in self.prompt_names.get(level.node.tag, ()):
            return key, _UNKNOWN
        if name not in self.external:
            self.missing.add(name)
            return key, _UNKNOWN
        return "prompt__external__" + name, self.external[name]


def _prompt_value(state: RunState, address: Address, name: str) -> object:
    """What ``prompt`` mappings sent for ``{name}`` (``{name_2}``: the second source)."""
    if (address, name) in state.prompt_values:
        sources = state.prompt_values[(address, name)]
        return sources[0] if len(sources) == 1 else sources
    base, _, number = name.rpartition("_")
    if base and number.isdigit() and (address, base) in state.prompt_values:
        sources = state.prompt_values[(address, base)]
        if 1 <= int(number) <= len(sources):
            return sources[int(number) - 1]
    return _UNKNOWN


def assemble(
    registry: NodeRegistry,
    state: RunState,
    address: Address,
    fields: tuple[str, ...],
    external: Mapping[str, object],
    *,
    prompt_names: Mapping[str, Collection[str]] | None = None,
    known: Mapping[str, Collection[str]] | None = None,
    contexts: Mapping[str, tuple[ContextPath, ...]] | None = None,
    readers: EntryReaders = _NO_READERS,
    shape: PromptShape = _PATH,
    unseen: Collection[str] = (),
) -> StepDocument:
    """The document of one step: its node instance and the fields it generates.

    Args:
        registry: The nodes.
        state: The run's values.
        address: The node instance.
        fields: The fields the step generates.
        external: Values for external variables (``{name}`` in root task texts).
        prompt_names: The names ``prompt`` mappings make resolvable, by node tag: such a
            name is never an external variable.
        known: The fields a step that generates their node whole does not ask for, by
            node tag: the known ones (DESIGN D2), and those split steps generate (see
            `langtree.structure.planning._steps`); such a node lists only its other fields as
            things to write.
        contexts: The entries nodes declare with ``@context[...]``, by node tag; a node
            not listed shows every known value.
        readers: Which steps show the entries sent to nodes without steps of their own
            (none but their own by default).
        shape: Which levels' texts lead to the node, and whether the step's fields are
            described in the text or left to the output schema.
        unseen: Fields of the node that the context leaves out whatever their values
            (generated by steps in no order relative to this one, see
            `PlanStep.unseen`).

    Raises:
        ExecutionError: A declared ``.***.`` pluck finds a missing value or mixed types.
    """
    levels = tuple(
        _Level(
            node=node,
            address=level_address,
            values=with_assets(node, state.view(level_address) or {}),
        )
        for node, level_address in _path(registry, state, address)
    )
    resolver = _Resolver(state, external, prompt_names or {})
    sent = _sent_entries(state, levels, fields, readers)
    declared = (contexts or {}).get(address.tag)
    context = sent + _context(state, levels[-1], fields, declared, frozenset(unseen))
    renderer = _Renderer(registry, resolver, levels, fields, known or {}, context, shape)
    body = join_blocks(*_blocks(renderer.level(renderer.shown[0], 1, titled=True)))
    section = ""
    if renderer.context_depth is None and context:
        section = join_blocks(heading(1, "Context"), _context_text(context, 2, resolver.assets))
    return StepDocument(
        text=_tidy(join_blocks(body, section)),
        instructions=_tidy(body),
        context_section=_tidy(section) if section else "",
        variables=resolver.used,
        missing=frozenset(resolver.missing),
        context=tuple(context),
        assets=tuple(resolver.assets.assets),
    )


_Part = str | Callable[[], "Sequence[_Part]"]
"""A block of the document, or a part still to expand into blocks and parts."""


def _blocks(parts: Sequence[_Part]) -> list[str]:
    """The blocks of ``parts`` in order, each part expanded where it stands (with an
    explicit stack: a level's parts hold the next level's)."""
    blocks: list[str] = []
    stack = list(reversed(parts))
    while stack:
        part = stack.pop()
        if isinstance(part, str):
            blocks.append(part)
        else:
            stack.extend(reversed(part()))
    return blocks


def _path(registry: NodeRegistry, state: RunState, address: Address) -> list[tuple[Node, Address]]:
    path: list[tuple[Node, Address]] = []
    current: Address | None = address
    while current is not None:
        node = registry.get(current.tag)
        assert node is not None
        path.append((node, current))
        current = state.parent(current)
    return list(reversed(path))


@dataclass(slots=True)
class _Renderer:
    """Renders the levels from the root down, and the step's fields at the last one.

    Each method returns the blocks of its part of the document, with the parts below it
    left to expand (see `_blocks()`); ``join_blocks`` of them all is the document.
    """

    registry: NodeRegistry
    resolver: _Resolver
    levels: _Chain
    fields: tuple[str, ...]
    known: Mapping[str, Collection[str]]
    context: list[ContextEntry]
    shape: PromptShape
    shown: tuple[int, ...] = field(init=False)
    """The depths of the levels whose texts the document shows, from the top."""
    context_depth: int | None = field(init=False)
    """The level whose ``{COLLECTED_CONTEXT}`` gets the context: the one nearest the node."""

    def __post_init__(self) -> None:
        self.shown = _shown_levels(len(self.levels), self.shape.outline)
        self.context_depth = max(
            (depth for depth in self.shown if _CONTEXT in _names(self.levels[depth].node.text)),
            default=None,
        )

    def level(self, depth: int, title_level: int, *, titled: bool) -> list[_Part]:
        """A level's title and docstring, what lies below placed at its subtree."""
        chain = self.levels[: depth + 1]
        class_name = chain[-1].node.node_class.__name__
        title = heading(title_level, title_from_name(class_name)) if titled else ""

        def below(inner: int) -> list[_Part]:
            if depth == len(self.levels) - 1:
                node = chain[-1].node
                return [
                    functools.partial(self.field_block, chain, node_field, inner)
                    for node_field in (_field(node, name) for name in self.fields)
                    if not self.left_to_schema(node, node_field)
                ]
            if self.shape.outline != "path":  # the levels between are left out
                return [functools.partial(self.level, len(self.levels) - 1, inner, titled=True)]
            return [functools.partial(self.child_block, depth + 1, inner)]

        return [title, *self.docstring(chain, title_level, below, depth=depth)]

    def docstring(
        self,
        chain: _Chain,
        title_level: int,
        below: Callable[[int], list[_Part]],
        *,
        depth: int | None,
    ) -> list[_Part]:
        """A node's docstring under a title at ``title_level``, ``below`` at its subtree.

        Heading levels come from the docstring itself, never from the values put in.

        Args:
            depth: The level on the path that the docstring belongs to; ``None`` for a
                nested node, whose ``{COLLECTED_CONTEXT}`` is dropped.
        """
        shifted = shift_headings(chain[-1].node.text, title_level)
        context = ""
        if depth is not None and depth == self.context_depth:
            level = _level_at(shifted, _CONTEXT, title_level) + 1
            context = _context_text(self.context, level, self.resolver.assets)
        parts = self.resolver.substitute(shifted, chain, context=context)
        if len(parts) == 1:
            return [parts[0], *below(title_level + 1)]
        before, after = parts
        return [before, *below(_level_at(shifted, _SUBTREE, title_level) + 1), after]

    def child_block(self, depth: int, level_number: int) -> list[_Part]:
        """The field leading to level ``depth``, then that level (a list's under its
        class title, a single node's without one)."""
        parent_chain = self.levels[:depth]
        node_field = _field(parent_chain[-1].node, self.levels[depth].node.field_name or "")
        head = self.titled(parent_chain, node_field, level_number)
        if node_field.shape.list_depth:
            return [head, *self.level(depth, level_number + 1, titled=True)]
        return [head, *self.level(depth, level_number, titled=False)]

    def field_block(self, chain: _Chain, node_field: NodeField, level_number: int) -> list[_Part]:
        """A field to generate: title, description, and a node field's nested node with
        the fields that are not known."""
        block = self.titled(chain, node_field, level_number)
        child = self.registry.child(chain[-1].node, node_field.name)
        if child is None:
            return [block]
        listed = bool(node_field.shape.list_depth)
        inner = level_number + 1 if listed else level_number
        title = heading(inner, title_from_name(child.node_class.__name__)) if listed else ""
        indices = chain[-1].address.indices + (None,) * child.list_depth
        # A nested level's values are not known before the step, except its defaults (D9).
        level = _Level(
            node=child, address=Address(child.tag, indices), values=known_defaults(child)
        )
        nested = (*chain, level)

        def below(level: int) -> list[_Part]:
            known = self.known.get(child.tag, ())
            return [
                functools.partial(self.field_block, nested, f, level)
                for f in child.fields
                if f.name not in known
            ]

        return [block, title, *self.docstring(nested, inner, below, depth=None)]

    def left_to_schema(self, node: Node, node_field: NodeField) -> bool:
        """Whether a step's field is described by the output schema alone: asked for,
        and the schema carries its description as the prompt would show it (no
        ``{variable}`` in it, no nodes in the field, whose texts are instructions)."""
        return (
            self.shape.field_descriptions == "schema"
            and not _names(node_field.description)
            and self.registry.child(node, node_field.name) is None
        )

    def titled(self, chain: _Chain, node_field: NodeField, level_number: int) -> str:
        """A field's heading and its description (runtime variables resolved)."""
        description = shift_headings(node_field.description, level_number)
        text = "".join(self.resolver.substitute(description, chain))
        return join_blocks(heading(level_number, title_from_name(node_field.name)), text)


def _shown_levels(count: int, outline: Outline) -> tuple[int, ...]:
    """The depths of the ``count`` levels on the path that the ``outline`` shows."""
    last = count - 1
    if outline == "node":
        return (last,)
    if outline == "root":
        return tuple(sorted({0, last}))
    return tuple(range(count))


def _field(node: Node, name: str) -> NodeField:
    node_field = node.field(name)
    assert node_field is not None, f"{node.tag} has no field {name!r}"
    return node_field


def _sent_entries(
    state: RunState, levels: _Chain, fields: tuple[str, ...], readers: EntryReaders
) -> list[ContextEntry]:
    """The entries commands sent for the step, whatever its node declares: those of the
    levels above that pass theirs down (from the top), the node's own (those sent to a
    leaf field only in that field's step), then those of the nodes the step generates
    whole, in the order of its fields."""
    *above, level = levels
    outputs = [
        output
        for upper in above
        if upper.node.tag in readers.passing
        for output in state.outputs.get(upper.address, [])
        if output.field is None
    ]
    outputs += [
        output
        for output in state.outputs.get(level.address, [])
        if output.field is None or output.field in fields
    ]
    for name in fields:
        for tag in readers.whole.get(FieldKey(level.node.tag, name), ()):
            outputs += state.outputs.get(_inside(state, level, tag), [])
    return [
        ContextEntry(title=title_from_name(output.name), value=output.value) for output in outputs
    ]


def _inside(state: RunState, level: _Level, tag: str) -> Address:
    """The instance of the node at ``tag`` inside a node field that the step at ``level``
    generates whole: its lists are not known yet, so their indices are ``None``."""
    between = state.registry.path(tag)[len(state.registry.path(level.node.tag)) :]
    unknown = sum(node.list_depth for node in between)
    return Address(tag, level.address.indices + (None,) * unknown)


def _context(
    state: RunState,
    level: _Level,
    fields: tuple[str, ...],
    declared: tuple[ContextPath, ...] | None,
    unseen: frozenset[str],
) -> list[ContextEntry]:
    """The node's known values: the entries ``declared`` by ``@context[...]`` in their
    order, or (``None``) every known value in the specification's order: fields known
    before the run, fields generated before the step's fields, then fields generated by
    earlier steps but declared after them. The step's own fields and the ``unseen`` ones
    are never shown."""
    if declared is not None:
        return _declared_entries(state, level, (*fields, *unseen), declared)
    names = [f.name for f in level.node.fields]
    first = min((names.index(name) for name in fields if name in names), default=len(names))
    generated = state.generated.get(level.address, set())
    left_out = unseen.union(fields)
    known = [name for name in names if name in level.values and name not in left_out]
    ordered = [name for name in known if name not in generated]
    ordered += [name for name in known if name in generated and names.index(name) < first]
    ordered += [name for name in known if name in generated and names.index(name) > first]
    return [ContextEntry(title=title_from_name(n), value=level.values[n]) for n in ordered]


def _declared_entries(
    state: RunState, level: _Level, fields: tuple[str, ...], declared: tuple[ContextPath, ...]
) -> list[ContextEntry]:
    """The declared entries whose values are known, never the step's own fields."""
    entries = []
    for entry in declared:
        value = _UNKNOWN if entry.fields[0].name in fields else _declared_value(state, level, entry)
        if value is not _UNKNOWN:
            entries.append(ContextEntry(title=entry.title, value=value))
    return entries


def _declared_value(state: RunState, level: _Level, entry: ContextPath) -> object:
    """What ``entry`` reads from the instance: ``_UNKNOWN`` while the field it starts
    from (the list it plucks, or the field it names) is not known."""
    tag, name = entry.known_at
    holder = level.values
    if tag != level.node.tag:
        node = state.registry.get(tag)
        view = state.view(Address(tag, level.address.indices))
        holder = with_assets(node, view) if node is not None and view is not None else {}
    if name not in holder:
        return _UNKNOWN
    if not entry.plucks:
        return holder[name]
    fail = functools.partial(_pluck_error, entry)
    return pluck_values(
        level.values, entry.fields, entry.plucks, where="", fail=fail, absent=_not_known
    )


def _not_known(path: str) -> None:
    """A context entry shows a value no step has produced (yet) as ``None``, as it shows
    a ``None``."""
    return None


def _pluck_error(entry: ContextPath, message: str, hint: str) -> ExecutionError:
    diagnostic = entry.command.diagnostic(
        f"Pluck {entry.path!r} {message}", hint=hint, span=entry.span
    )
    return ExecutionError(diagnostic.render().removeprefix("error: "))


def _context_text(entries: list[ContextEntry], level_number: int, assets: AssetCollector) -> str:
    return join_blocks(
        *(
            join_blocks(heading(level_number, entry.title), render_value(assets.swap(entry.value)))
            for entry in entries
        )
    )


def _tidy(text: str) -> str:
    """The text with one newline at the end."""
    return text.strip("\n") + "\n"
