"""Random trees of `TreeNode` classes whose data flows between steps, for the reference test.

A Hypothesis strategy (`trees()`) writes a small Python module: one to three root tasks,
each with up to two levels of node classes below it, whose fields are generated, given by
the caller, defaulted, computed by a transform or written by a command. Node fields are
generated whole, given (partly, so that their own fields get steps), or filled by an
``@each``. Commands wire the tasks and the nodes together: ``@each`` into the fields of a
destination's list elements, into a list of strings, into a list of nodes next to the one
it iterates; ``@all`` of a field, of a whole node (``*``) or of a pluck (``items.*.title``,
``items.**.title``), and broadcasts to every element of a list (``@all ... *``); with
``value``, ``task`` and unscoped targets, ``prompt`` targets that the destination's texts
show as ``{name}``, and ``outputs`` targets. Texts name fields of their node and of the
nodes above as ``{name}``; nodes are ``@sequential``, ``@parallel`` or ``together``;
classes and fields choose a second model (``llm``) or resample (``resample(2)``).

The trees are meant to validate often, not always: a tree that `validate()` refuses (a
cycle, a field needed before it is generated) is simply not run. The module is shown
when a test fails; it runs on its own.
"""

from __future__ import annotations

import itertools
import sys
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from hypothesis import strategies as st

__all__ = ["ClassSpec", "FieldSpec", "Tree", "load", "trees"]

HEADER = """\
from enum import Enum

from pydantic import Field

from langtree import TreeNode


class Color(str, Enum):
    RED = "red"
    BLUE = "blue"
"""

MODELS = ("default", "other")
_NAMES = (
    "title", "body", "note", "topic", "label", "detail", "summary", "verdict", "score",
    "tags", "parts", "entries", "rows", "lines", "remark", "heading", "points", "count",
)  # fmt: skip
_TASK_WORDS = ("Alpha", "Beta", "Gamma")
_COUNTER = itertools.count()
_T = TypeVar("_T")

LEAVES = ("str", "int", "enum", "strs")
_ANNOTATIONS = {"str": "str", "int": "int", "enum": "Color", "strs": "list[str]"}
_DEFAULTS = {"str": "'preset'", "int": "3", "enum": "Color.BLUE", "strs": "['preset']"}
_GIVEN = {"str": "given", "int": 7, "enum": "red", "strs": ["x", "y"]}


@dataclass(eq=False)
class FieldSpec:
    """One field: its kind (a leaf type, ``node`` or ``nodes``) and how it gets its value.

    ``status``: ``generated`` (by a model), ``given`` (by the caller), ``default``,
    ``transform``, or ``written`` (by a command; a list then defaults to empty).
    """

    name: str
    kind: str
    status: str
    child: ClassSpec | None = None
    prose: str = ""
    commands: list[str] = field(default_factory=list)
    length: int = 2
    """How many elements the caller gives a list of nodes."""

    def annotation(self) -> str:
        if self.child is not None:
            name = self.child.name
            return f"list[{name}]" if self.kind == "nodes" else name
        return _ANNOTATIONS[self.kind]

    def render(self) -> str:
        text = "\n\n".join(part for part in [self.prose, *self.commands] if part)
        arguments = []
        if self.status == "default":
            arguments.append(f"default={_DEFAULTS[self.kind]}")
        elif self.status == "written" and self.kind in ("strs", "nodes"):
            arguments.append("default=[]")
        arguments.append(f"description={text!r}")
        return f"    {self.name}: {self.annotation()} = Field({', '.join(arguments)})"


@dataclass(eq=False)
class ClassSpec:
    """A node class: its modifier, docstring and fields, and where its instances stand."""

    name: str
    fields: list[FieldSpec]
    modifier: str = ""
    prose: str = ""
    commands: list[str] = field(default_factory=list)
    parent: ClassSpec | None = None
    in_list: bool = False
    whole: bool = False
    """Inside a node field that a model generates whole."""

    def lineage(self) -> Iterator[ClassSpec]:
        """This class and the classes above it, nearest first."""
        spec: ClassSpec | None = self
        while spec is not None:
            yield spec
            spec = spec.parent

    def render(self) -> str:
        modifier = [f"! {self.modifier}"] if self.modifier else []
        doc = "\n\n".join(part for part in [self.prose, *modifier, *self.commands] if part)
        lines = [f"class {self.name}(TreeNode):", f"    {doc!r}", ""]
        lines += [spec.render() for spec in self.fields]
        return "\n".join(lines)

    def classes(self) -> Iterator[ClassSpec]:
        """The classes below this one, then this one (the order to define them in)."""
        for spec in self.fields:
            if spec.child is not None:
                yield from spec.child.classes()
        yield self


@dataclass(eq=False)
class Tree:
    """Root tasks, the run's settings, and (`inputs()`) the caller's values."""

    code: str
    tasks: list[ClassSpec]
    config: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        names = [task.name for task in self.tasks]
        return f"Tree({self.code!r}, tasks={names!r}, config={self.config!r})"

    def tag(self, task: ClassSpec) -> str:
        return "task." + task.name.removeprefix("Task").lower()

    def source(self) -> str:
        classes = [spec for task in self.tasks for spec in task.classes()]
        return HEADER + "\n\n" + "\n\n\n".join(spec.render() for spec in classes) + "\n"

    def inputs(self) -> dict[str, object]:
        """The caller's values by task tag."""
        return {self.tag(task): _values(task) for task in self.tasks}


def _values(spec: ClassSpec) -> dict[str, object]:
    values: dict[str, object] = {}
    for field_spec in spec.fields:
        if field_spec.status != "given":
            continue
        if field_spec.child is None:
            values[field_spec.name] = _GIVEN[field_spec.kind]
        elif field_spec.kind == "node":
            values[field_spec.name] = _values(field_spec.child)
        else:
            values[field_spec.name] = [_values(field_spec.child) for _ in range(field_spec.length)]
    return values


def _links(spec: ClassSpec) -> Iterator[FieldSpec]:
    """The fields that lead from the root task down to ``spec``."""
    for child in spec.lineage():
        parent = child.parent
        if parent is not None:
            yield from (f for f in parent.fields if f.child is child)


def load(tree: Tree) -> types.ModuleType:
    """The tree's classes, defined in a module of their own."""
    module = types.ModuleType(f"langtree_reference_{tree.code}")
    # Pydantic resolves the annotations in the module's namespace, found by its name.
    sys.modules[module.__name__] = module
    exec(compile(tree.source(), f"<tree {tree.code}>", "exec"), module.__dict__)
    return module


# -- drawing a tree ------------------------------------------------------------------------


def unique_code() -> str:
    """Lower-case letters, different on every call (`aa`, `ab`, ...): a new code per
    example, so that no class name, module name or cache entry is shared."""
    number = next(_COUNTER)
    letters = ""
    while True:
        number, digit = divmod(number, 26)
        letters = chr(ord("a") + digit) + letters
        if not number:
            return letters.rjust(2, "a")


class _Drawing:
    """The state of one tree being drawn."""

    def __init__(self, draw: st.DrawFn, code: str) -> None:
        self.draw = draw
        self.code = code
        self.classes = itertools.count(1)

    def choice(self, options: Sequence[_T]) -> _T:
        return self.draw(st.sampled_from(options))

    def chance(self, probability: float) -> bool:
        return self.draw(st.integers(0, 99)) < probability * 100

    def node_class(
        self, *, depth: int, parent: ClassSpec | None, in_list: bool, whole: bool, name: str = ""
    ) -> ClassSpec:
        spec = ClassSpec(
            name=name or f"N{self.code.capitalize()}{next(self.classes)}",
            fields=[],
            parent=parent,
            in_list=in_list,
            whole=whole,
        )
        if not whole:
            spec.modifier = self.choice(["", "", "@sequential", "@parallel", "together"])
        count = self.draw(st.integers(1, 4))
        names = self.draw(st.permutations(_NAMES))[:count]
        for name in names:
            spec.fields.append(self.field(name, spec, depth=depth))
        return spec

    def field(self, name: str, owner: ClassSpec, *, depth: int) -> FieldSpec:
        kinds = list(LEAVES) + (["node", "nodes", "nodes"] if depth > 0 and not owner.whole else [])
        kind = self.choice(kinds)
        if kind in LEAVES:
            statuses = ["generated"] * 5 + ["given"] * 2 + ["default"]
            statuses += ["transform"] * 2 if kind != "enum" and not owner.whole else []
            if owner.whole:
                statuses = ["generated"] * 4 + ["default"]
            return FieldSpec(name=name, kind=kind, status=self.choice(statuses))
        status = self.choice(
            ["generated", "given", "given"] + (["written"] if kind == "nodes" else [])
        )
        in_list = owner.in_list or kind == "nodes"
        child = self.node_class(
            depth=depth - 1,
            parent=owner,
            in_list=in_list,
            whole=status == "generated",
        )
        spec = FieldSpec(name=name, kind=kind, status=status, child=child)
        if kind == "nodes" and status == "given":
            spec.length = self.draw(st.integers(0, 3))
        return spec


def configs() -> st.SearchStrategy[dict[str, str]]:
    """Settings that change which texts a prompt shows and how nodes are generated."""
    return st.fixed_dictionaries(
        {},
        optional={
            "outline": st.sampled_from(["path", "root", "node"]),
            "field_descriptions": st.sampled_from(["text", "schema"]),
            "default_modifier": st.sampled_from(["sequential", "parallel"]),
        },
    )


@st.composite
def trees(draw: st.DrawFn) -> Tree:
    """A tree of one to three root tasks with data flowing between their steps."""
    code = unique_code()
    drawing = _Drawing(draw, code)
    count = draw(st.integers(1, 3))
    tasks = [
        drawing.node_class(
            depth=2, parent=None, in_list=False, whole=False, name=f"Task{word}{code}"
        )
        for word in _TASK_WORDS[:count]
    ]
    tree = Tree(code=code, tasks=tasks)
    wiring = _Wiring(drawing, tree)
    for _ in range(draw(st.integers(0, 4))):
        wiring.command()
    wiring.transforms()
    wiring.placeholders()
    wiring.models()
    wiring.contexts()
    tree.config = draw(configs())
    return tree


class _Wiring:
    """Commands, transforms, ``{name}`` references and model choices for a drawn tree."""

    def __init__(self, drawing: _Drawing, tree: Tree) -> None:
        self.drawing = drawing
        self.tree = tree
        self.names = itertools.count(1)

    def specs(self) -> list[ClassSpec]:
        return [spec for task in self.tree.tasks for spec in task.classes()]

    # -- commands ------------------------------------------------------------------------

    def command(self) -> None:
        kind = self.drawing.choice(
            ["each", "each", "each_local", "all", "all_node", "pluck", "broadcast"]
        )
        getattr(self, f"_{kind}")()

    def _lists(self) -> list[tuple[ClassSpec, FieldSpec]]:
        """Lists of nodes an ``@each`` may iterate: fields of nodes in no list."""
        return [
            (spec, f)
            for spec in self.specs()
            if not spec.in_list and not spec.whole
            for f in spec.fields
            if f.kind == "nodes"
        ]

    def _other_task(self, spec: ClassSpec) -> ClassSpec | None:
        root = list(spec.lineage())[-1]
        others = [task for task in self.tree.tasks if task is not root]
        return self.drawing.choice(others) if others else None

    def _target_list(self, task: ClassSpec) -> tuple[FieldSpec, FieldSpec] | None:
        """A list of nodes in a task's root, written by commands, and a str field of its
        elements to write; made when the task has none."""
        lists = [f for f in task.fields if f.kind == "nodes" and f.status == "written"]
        if lists and self.drawing.chance(0.7):
            target = self.drawing.choice(lists)
        else:
            name = self._fresh_name(task, "rows")
            class_name = f"N{self.tree.code.capitalize()}W{next(self.names)}"
            modifier = self.drawing.choice(["", "@parallel"])
            target = self._written_list(task, name, class_name, "detail", modifier)
        assert target.child is not None
        leaves = [
            f
            for f in target.child.fields
            if f.kind == "str" and f.status in ("written", "generated")
        ]
        if not leaves:
            return None
        leaf = self.drawing.choice(leaves)
        leaf.status = "written"
        return target, leaf

    def _written_list(
        self, owner: ClassSpec, name: str, class_name: str, generated: str, modifier: str
    ) -> FieldSpec:
        """A new list field ``name`` of ``owner``, written by commands, at a drawn place
        among its fields: nodes of a new class with a written ``label`` and, drawn, a
        generated str field ``generated``."""
        child = ClassSpec(
            name=class_name,
            fields=[FieldSpec(name="label", kind="str", status="written")],
            parent=owner,
            in_list=True,
            modifier=modifier,
        )
        if self.drawing.chance(0.7):
            child.fields.append(FieldSpec(name=generated, kind="str", status="generated"))
        target = FieldSpec(name=name, kind="nodes", status="written", child=child)
        owner.fields.insert(self.drawing.draw(st.integers(0, len(owner.fields))), target)
        return target

    def _task_path(self, task: ClassSpec) -> str:
        """``task.<name>``: how a command names ``task`` as its destination."""
        return f"task.{self.tree.tag(task).split('.')[1]}"

    def _fresh_name(self, spec: ClassSpec, base: str) -> str:
        taken = {f.name for f in spec.fields}
        name = base
        while name in taken:
            name = f"{base}_{next(self.names)}"
        return name

    def _source_leaf(self, spec: ClassSpec) -> FieldSpec | None:
        leaves = [f for f in spec.fields if f.kind == "str"]
        return self.drawing.choice(leaves) if leaves else None

    def _extras(self, destination: ClassSpec, source: str) -> list[str]:
        """``prompt`` and ``outputs`` mappings of ``source`` to ``destination``, and now and
        then a literal ``prompt`` variable."""
        extras = []
        if self.drawing.chance(0.4):
            name = f"sent{next(self.names)}"
            extras.append(f"prompt.{name}={source}")
            holder: ClassSpec | FieldSpec = self.drawing.choice([destination, *destination.fields])
            holder.prose += f" Mind {{{name}}}."
        if self.drawing.chance(0.4):
            extras.append(f"outputs.extra{next(self.names)}={source}")
        if self.drawing.chance(0.15):
            name = f"tag{next(self.names)}"
            extras.append(f'prompt.{name}="{name} literal"')
            self.drawing.choice([destination, *destination.fields]).prose += f" Tag {{{name}}}."
        return extras

    def _scope(self) -> str:
        return self.drawing.choice(["value.", "value.", "task.", ""])

    def _place(self, owner: ClassSpec, holder: FieldSpec | None, command: str) -> None:
        if holder is None:
            owner.commands.append(command)
        else:
            holder.commands.append(command)

    def _list_leaf(self) -> tuple[ClassSpec, FieldSpec, FieldSpec | None] | None:
        """A list of nodes, the node that holds it, and a text field of its element to send
        (``None`` when the element has none to send)."""
        lists = self._lists()
        if not lists:
            return None
        owner, items = self.drawing.choice(lists)
        assert items.child is not None
        return owner, items, self._source_leaf(items.child)

    def _list_leaf_to_task(self) -> tuple[ClassSpec, FieldSpec, FieldSpec, ClassSpec] | None:
        """As `_list_leaf`, with another task to send the field to. The task is drawn even
        when there is no field, so that a seed draws the same tree as before."""
        found = self._list_leaf()
        if found is None:
            return None
        owner, items, leaf = found
        destination = self._other_task(owner)
        return None if leaf is None or destination is None else (owner, items, leaf, destination)

    def _each(self) -> None:
        found = self._list_leaf_to_task()
        if found is None:
            return
        owner, items, leaf, destination = found
        source = f"{items.name}.{leaf.name}"
        if self.drawing.chance(0.6):
            found = self._target_list(destination)
            if found is None:
                return
            target_list, target_leaf = found
            mappings = [f"{self._scope()}{target_list.name}.{target_leaf.name}={source}"]
            assert target_list.child is not None
            if self.drawing.chance(0.3):
                second = self._source_leaf(items.child)
                others = [
                    f
                    for f in target_list.child.fields
                    if f.kind == "str"
                    and f is not target_leaf
                    and f.status in ("generated", "written")
                ]
                if second is not None and others:
                    other = self.drawing.choice(others)
                    other.status = "written"
                    mappings.append(
                        f"value.{target_list.name}.{other.name}={items.name}.{second.name}"
                    )
            node_target = target_list.child if self.drawing.chance(0.3) else destination
            path = self._task_path(destination)
            if node_target is target_list.child:
                path += f".{target_list.name}"
                mappings = [m.replace(f"{target_list.name}.", "", 1) for m in mappings]
        else:
            strs = self._fresh_name(destination, "notes")
            destination.fields.append(FieldSpec(name=strs, kind="strs", status="written"))
            mappings = [f"value.{strs}={source}"]
            node_target = destination
            path = self._task_path(destination)
        mappings += self._extras(node_target, source)
        self._place_each(owner, items, path, mappings)

    def _place_each(
        self, owner: ClassSpec, items: FieldSpec, path: str, mappings: list[str]
    ) -> None:
        """``@each`` over ``items`` into ``path``, in the description of ``items`` or in the
        docstring of ``owner``."""
        command = f"! @each[{items.name}]->{path}@{{{{{', '.join(mappings)}}}}}*"
        self._place(owner, items if self.drawing.chance(0.6) else None, command)

    def _each_local(self) -> None:
        """An ``@each`` into a list of nodes next to the one it iterates."""
        found = self._list_leaf()
        if found is None or found[2] is None:
            return
        owner, items, leaf = found
        name = self._fresh_name(owner, "notes")
        class_name = f"N{self.tree.code.capitalize()}L{next(self.names)}"
        target = self._written_list(owner, name, class_name, "remark", "")
        child = target.child
        assert child is not None
        source = f"{items.name}.{leaf.name}"
        mappings = [f"value.label={source}", *self._extras(child, source)]
        self._place_each(owner, items, name, mappings)

    def _all(self) -> None:
        """``@all`` of one leaf field into a field of another task."""
        found = self._sender()
        if found is None:
            return
        owner, leaf, destination = found
        targets = [f for f in destination.fields if f.kind == "str" and f.status == "generated"]
        mappings = []
        if targets and self.drawing.chance(0.7):
            target = self.drawing.choice(targets)
            target.status = "written"
            mappings.append(f"{self._scope()}{target.name}={leaf.name}")
        mappings += self._extras(destination, leaf.name)
        if not mappings:
            return
        path = self._task_path(destination)
        self._place(owner, leaf, f"! @all->{path}@{{{{{', '.join(mappings)}}}}}")

    def _sender(self) -> tuple[ClassSpec, FieldSpec, ClassSpec] | None:
        """A text field of a node in no list, and another task to send it to."""
        candidates = [
            (spec, f)
            for spec in self.specs()
            if not spec.in_list and not spec.whole
            for f in spec.fields
            if f.kind == "str"
        ]
        if not candidates:
            return None
        owner, leaf = self.drawing.choice(candidates)
        destination = self._other_task(owner)
        return None if destination is None else (owner, leaf, destination)

    def _all_node(self) -> None:
        """``@all`` of a whole node (``*``) as a context entry or a prompt variable."""
        candidates = [spec for spec in self.specs() if not spec.in_list and not spec.whole]
        owner = self.drawing.choice(candidates)
        destination = self._other_task(owner)
        if destination is None:
            return
        if self.drawing.chance(0.5):
            mapping = f"outputs.whole{next(self.names)}=*"
        else:
            name = f"whole{next(self.names)}"
            mapping = f"prompt.{name}=*"
            destination.prose += f" See {{{name}}}."
        path = self._task_path(destination)
        owner.commands.append(f"! @all->{path}@{{{{{mapping}}}}}")

    def _pluck(self) -> None:
        """``@all`` of a pluck over a list of nodes into a list of strings elsewhere."""
        found = self._list_leaf_to_task()
        if found is None:
            return
        _, items, leaf, destination = found
        star = self.drawing.choice(["*", "**"])
        strs = self._fresh_name(destination, "picked")
        destination.fields.append(FieldSpec(name=strs, kind="strs", status="written"))
        path = self._task_path(destination)
        source = f"{items.name}.{star}.{leaf.name}"
        items.commands.append(f"! @all->{path}@{{{{value.{strs}={source}}}}}")

    def _broadcast(self) -> None:
        """``@all ... *``: one value (a field's, or a literal) to every element of a list of
        another task."""
        found = self._sender()
        if found is None:
            return
        _, leaf, destination = found
        lists = [
            f
            for f in destination.fields
            if f.kind == "nodes" and f.child is not None and f.status != "generated"
        ]
        if not lists:
            return
        target_list = self.drawing.choice(lists)
        assert target_list.child is not None
        name = self._fresh_name(target_list.child, "stamp")
        target_list.child.fields.append(FieldSpec(name=name, kind="str", status="written"))
        path = f"{self._task_path(destination)}.{target_list.name}"
        source = f'"{name} literal"' if self.drawing.chance(0.3) else leaf.name
        leaf.commands.append(f"! @all->{path}@{{{{value.{name}={source}}}}}*")

    # -- transforms, references, models ---------------------------------------------------

    def transforms(self) -> None:
        for spec in self.specs():
            for f in spec.fields:
                if f.status == "transform":
                    expression = self._expression(spec, f)
                    if expression is None:
                        f.status = "generated"
                    else:
                        f.commands.append(f'! transform("{expression}")')

    def _expression(self, spec: ClassSpec, target: FieldSpec) -> str | None:
        # A name reads the nearest field of that name (D9): farther ones are shadowed.
        nearest: dict[str, FieldSpec] = {}
        for holder in spec.lineage():
            for other in holder.fields:
                nearest.setdefault(other.name, other)
        # Not a field that holds this class: the transform would read what it writes.
        holding = set(_links(spec))
        visible = [f for f in nearest.values() if f is not target and f not in holding]
        texts = [f for f in visible if f.kind == "str"]
        lists = [f for f in visible if f.kind == "nodes" and f.child is not None]
        strs = [f for f in visible if f.kind == "strs"]
        # The str fields of the lists' elements, each as `list | map(attribute='field')`.
        plucked = [
            f"{f.name} | map(attribute='{leaf.name}')"
            for f in lists
            for leaf in f.child.fields
            if leaf.kind == "str"
        ]
        options: list[str] = []
        if target.kind == "str":
            options += [f"{f.name} | upper" for f in texts]
            options += [f"{f.name} | join(', ')" for f in strs]
            options += [f"{pluck} | join(', ')" for pluck in plucked]
        elif target.kind == "int":
            options += [f"{f.name} | length" for f in [*lists, *strs]]
        elif target.kind == "strs":
            options += [f"{f.name} | map('upper') | list" for f in strs]
            options += [f"{pluck} | list" for pluck in plucked]
        return self.drawing.choice(options) if options else None

    def placeholders(self) -> None:
        """``{name}`` in docstrings and descriptions, naming a field of the node or above."""
        for spec in self.specs():
            if spec.whole:
                continue
            # Not the fields that hold this class: its steps would show a value they
            # write part of (an error of validate()).
            holding = {f.name for f in _links(spec)}
            visible = [
                f.name for holder in spec.lineage() for f in holder.fields if f.name not in holding
            ]
            holders: list[ClassSpec | FieldSpec] = [spec, *spec.fields]
            for holder in holders:
                # A node field's description is shown to the steps inside it too.
                names = [
                    n
                    for n in visible
                    if not (isinstance(holder, FieldSpec) and n == holder.name and holder.child)
                ]
                if names and self.drawing.chance(0.2):
                    holder.prose += f" Use {{{self.drawing.choice(names)}}}."

    def models(self) -> None:
        """``llm("other")`` and ``resample(2)`` on some classes and fields, inside nodes
        generated whole too (split steps)."""
        for spec in self.specs():
            scale = 0.5 if spec.whole else 1.0
            if self.drawing.chance(0.1 * scale):
                spec.commands.append('! llm("other")')
            if self.drawing.chance(0.08 * scale):
                spec.commands.append("! resample(2)")
            for f in spec.fields:
                if f.status != "generated":
                    continue
                if self.drawing.chance(0.08 * scale):
                    f.commands.append('! llm("other")')
                if self.drawing.chance(0.06 * scale):
                    f.commands.append("! resample(2)")

    def contexts(self) -> None:
        """``@context[...]`` on some classes: a few of their fields, or a pluck."""
        for spec in self.specs():
            if spec.whole or not self.drawing.chance(0.12):
                continue
            names = [f.name for f in spec.fields]
            entries = self.drawing.draw(st.lists(st.sampled_from(names), unique=True, max_size=3))
            plucks = [
                f"{f.name}.*.{leaf.name}"
                for f in spec.fields
                if f.kind == "nodes" and f.child is not None
                for leaf in f.child.fields
                if leaf.kind == "str"
            ]
            if plucks and self.drawing.chance(0.5):
                entries.append(self.drawing.choice(plucks))
            spec.commands.append(f"! @context[{', '.join(entries)}]")
