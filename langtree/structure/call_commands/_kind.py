"""What a call-style command is: one `CommandKind` per command, its signature and kind.

The parser knows a command by its signature (`langtree.dsl._signatures`), which the kind
holds; the structure stage knows it by the rest of its kind: where it may stand, where
it says the field's value comes from, whether it shapes the model step, what it does
inside a node generated whole and what it computes. Every module of the structure stage,
and the stages after it, ask the kind, so that none matches on a command's name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from langtree.dsl import CommandSignature, Value
from langtree.errors import Diagnostic
from langtree.structure.commands._transforms import Transform
from langtree.structure.tree._registry import NodeRegistry
from langtree.structure.tree._tree import Node, NodeCommand, NodeField
from langtree.structure.tree._tree_node import display_name

__all__ = ["CommandKind", "FieldCall", "FieldOnly", "FieldSource", "WholeSite"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldOnly:
    """A command that stands only in a field's description; the error where a class's
    docstring holds it says what it does and moves it to the field.

    Attributes:
        does: What it does, after its call: ``computes a field``.
        the_field: The field it belongs to: ``the field it computes``.
    """

    does: str
    the_field: str

    def misplaced(self, kind: CommandKind, call: NodeCommand, node: Node) -> Diagnostic:
        """The error for ``call``, which stands in the docstring of ``node``."""
        return call.diagnostic(
            f"{kind.call} {self.does}: it belongs in a field's description, not in the "
            f"docstring of {display_name(node.node_class)!r}",
            hint=f"move it to the description of {self.the_field}",
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldSource:
    """Where a command says a field's value comes from, other than the model's step: the
    commands that shape that step, and those of a source that ranks after it, have no
    effect beside it.

    Attributes:
        rank: Which source wins where two stand together (the lower; the caller's is 0).
        described: The field as the source makes it, after ``'Class.field' is``.
        instead: What removing the command does, after ``remove it to``.
        known_before_run: Whether the field is known before any call (only the caller
            gives it), so that no step ever generates it.
    """

    rank: int
    described: str
    instead: str
    known_before_run: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class WholeSite:
    """A node generated whole, the field whose step generates it, and the outermost
    field generated whole around it (the same one unless split steps nest).

    Attributes:
        node: The node generated whole.
        holder: The class name of the step's node.
        step: The step's field as ``'Holder.field'``.
        field_name: The step's field.
        outer: The outermost field as ``'Holder.field'``.
        outer_field: The outermost field.
    """

    node: Node
    holder: str
    step: str
    field_name: str
    outer: str
    outer_field: str

    @property
    def name(self) -> str:
        """The node's class name."""
        return display_name(self.node.node_class)


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldCall:
    """A command in a field's description, with its arguments resolved.

    Attributes:
        registry: The nodes.
        node: The node holding the field.
        node_field: The field whose description holds the command.
        call: The command.
        arguments: Its arguments by parameter, assembly variables resolved.
    """

    registry: NodeRegistry
    node: Node
    node_field: NodeField
    call: NodeCommand
    arguments: dict[str, Value]


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandKind:
    """One call-style command: its signature, which the parser checks calls against, and
    everything the stages after the parser know of it.

    Every kind stands at most once in one text ("More than one ...").

    Attributes:
        signature: Its name and parameters, as the parser checks them.
        field_only: Set when it stands only in a field's description (the docstring of a
            class is refused); unset, it stands in either.
        source: Set when it says where the field's value comes from.
        shapes_step: Whether it shapes the model step that generates its field or node
            (model, samples): such a command gives a field a step of its own, and a
            class's docstring declares it for the node fields of the class.
        inside_whole_node: The error where it stands in a node a step generates whole;
            unset, it takes effect in the field's split step (a warning where none is).
        computes: How it computes its field (a transform), or why it cannot.
    """

    signature: CommandSignature
    field_only: FieldOnly | None = None
    source: FieldSource | None = None
    shapes_step: bool = False
    inside_whole_node: Callable[[NodeCommand, WholeSite], Diagnostic] | None = None
    computes: Callable[[FieldCall], Transform | list[Diagnostic]] | None = None

    @property
    def name(self) -> str:
        """The command's name, its key in the table."""
        return self.signature.name

    @property
    def call(self) -> str:
        """``name()``, as messages name it."""
        return f"{self.name}()"
