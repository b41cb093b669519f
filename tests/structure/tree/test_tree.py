"""The node tree: tags, ``add()``, nested classes, field kinds and known defaults
(docs/structure.md, "The node tree"; the spec's "Node Naming Conventions" and "Field Type
Detection")."""

from collections import deque
from collections.abc import Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import pytest
from pydantic import BaseModel, Field, create_model

from langtree import CommandParseError, RunStructure, StructureError, TreeNode
from langtree.errors import Diagnostic
from langtree.structure.tree._shapes import FieldShape, ShapeError, field_shape
from langtree.structure.tree._tree import task_tag, title_from_name
from tests.structure.validated import structure_of

SOURCE_LINES = Path(__file__).read_text().splitlines()


def line_of(snippet: str) -> int:
    """The first 1-based line of this file that holds ``snippet``."""
    return next(number for number, line in enumerate(SOURCE_LINES, 1) if snippet in line)


def errors(*tasks: type[TreeNode]) -> tuple[Diagnostic, ...]:
    """The diagnostics of the ``StructureError`` that ``validate()`` raises (none: empty)."""
    try:
        structure_of(*tasks).validate()
    except StructureError as error:
        return error.diagnostics
    return ()


def problems(*tasks: type[TreeNode]) -> list[tuple[str, str]]:
    return [(d.message, d.hint) for d in errors(*tasks)]


def add_error(*tasks: object) -> tuple[str, str]:
    """The (message, hint) of the ``StructureError`` that adding the last task raises."""
    structure = RunStructure()
    *earlier, last = tasks
    for task in earlier:
        structure.add(task)  # type: ignore[arg-type]
    with pytest.raises(StructureError) as caught:
        structure.add(last)  # type: ignore[arg-type]
    (diagnostic,) = caught.value.diagnostics
    return diagnostic.message, diagnostic.hint


def named(name: str, **fields: Any) -> type[TreeNode]:
    """A ``TreeNode`` class made at run time (fields as ``create_model`` takes them)."""
    return create_model(name, __base__=TreeNode, **fields)


# -- tags --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("class_name", "tag"),
    [
        pytest.param("TaskProcessor", "task.processor", id="spec-one-word"),
        pytest.param("TaskDataProcessor", "task.data_processor", id="spec-two-words"),
        pytest.param("TaskOutputAggregator", "task.output_aggregator", id="spec-aggregator"),
        pytest.param("TaskA", "task.a", id="one-letter"),
        pytest.param("TaskV2", "task.v2", id="digit-after-a-letter"),
        pytest.param("TaskGPT4Summary", "task.gpt4_summary", id="acronym-with-digit"),
        pytest.param("TaskHTMLParser", "task.html_parser", id="acronym-then-word"),
        pytest.param("TaskParseHTML", "task.parse_html", id="word-then-acronym"),
        pytest.param("TaskIOError", "task.io_error", id="two-letter-acronym"),
    ],
)
def test_root_task_tag(class_name: str, tag: str) -> None:
    task = named(class_name)
    structure = structure_of(task)

    assert structure.tasks == {tag: task}
    assert task_tag(class_name) == tag


@pytest.mark.parametrize(
    "class_name",
    [
        pytest.param("Task", id="nothing-after-task"),
        pytest.param("Taskforce", id="lower-case-after-task"),
        pytest.param("Task2Go", id="digit-after-task"),
        pytest.param("TaskData_Processor", id="underscore"),
        pytest.param("Processor", id="no-task-prefix"),
        pytest.param("MyTaskProcessor", id="task-inside"),
    ],
)
def test_not_a_root_task_name(class_name: str) -> None:
    assert task_tag(class_name) is None


@pytest.mark.parametrize(
    ("name", "title"),
    [
        pytest.param("main_analysis", "Main Analysis", id="field"),
        pytest.param("summary", "Summary", id="one-word-field"),
        pytest.param("TaskDataProcessor", "Data Processor", id="task-class"),
        pytest.param("HTMLParser", "HTML Parser", id="acronym-class"),
        pytest.param("Section", "Section", id="class"),
    ],
)
def test_title_from_name(name: str, title: str) -> None:
    assert title_from_name(name) == title


# -- add() -------------------------------------------------------------------------------------


class NotANode(BaseModel):
    text: str = ""


class TaskPlainModel(BaseModel):
    text: str = ""


class TaskTwice(TreeNode):
    text: str = ""


def same_tag_elsewhere() -> type[TreeNode]:
    class TaskTwice(TreeNode):
        other: str = ""

    return TaskTwice


ADD_HINT = "define the task as 'class TaskName(TreeNode): ...' and pass the class itself"


@pytest.mark.parametrize(
    ("tasks", "message", "hint"),
    [
        pytest.param((42,), "add() takes a TreeNode subclass, got 42", ADD_HINT, id="not-a-class"),
        pytest.param(
            (TaskTwice(),),
            "add() takes a TreeNode subclass, got TaskTwice(text='')",
            ADD_HINT,
            id="an-instance",
        ),
        pytest.param(
            (TaskPlainModel,),
            f"add() takes a TreeNode subclass, got {TaskPlainModel!r}",
            ADD_HINT,
            id="a-pydantic-model",
        ),
        pytest.param(
            (NotANode,),
            f"add() takes a TreeNode subclass, got {NotANode!r}",
            ADD_HINT,
            id="not-a-tree-node",
        ),
        pytest.param(
            (named("Processor"),),
            "Root task classes are named 'Task<Name>'; 'Processor' is not",
            "rename it, e.g. 'TaskProcessor', or add the task that holds it",
            id="not-named-task",
        ),
        pytest.param(
            (TaskTwice, TaskTwice),
            "'TaskTwice' was already added",
            "add each task once",
            id="added-twice",
        ),
        pytest.param(
            (TaskTwice, same_tag_elsewhere()),
            "Another task was already added as 'task.twice'",
            "give the task classes different names",
            id="two-classes-one-tag",
        ),
    ],
)
def test_add_refuses(tasks: tuple[object, ...], message: str, hint: str) -> None:
    assert add_error(*tasks) == (message, hint)


@pytest.mark.parametrize(
    "class_name",
    [
        pytest.param("Task2Go", id="digit-after-task"),
        pytest.param("Taskforce", id="lower-case-after-task"),
        pytest.param("TaskData_Processor", id="underscore"),
    ],
)
def test_add_refuses_names_that_are_not_task_camel_case(class_name: str) -> None:
    message, _ = add_error(named(class_name))

    assert message == f"Root task classes are named 'Task<Name>'; {class_name!r} is not"


def test_add_suggests_a_valid_task_name() -> None:
    assert add_error(named("TaskData_Processor"))[1] == (
        "rename it, e.g. 'TaskDataProcessor', or add the task that holds it"
    )


def test_a_refused_task_adds_nothing() -> None:
    structure = RunStructure()
    with pytest.raises(StructureError):
        structure.add(named("Processor", text=(str, "")))

    assert structure.tasks == {}
    assert list(structure.nodes) == []


class TaskBrokenCommand(TreeNode):
    """Summarise."""

    items: list[str] = Field(default=[], description="! @each [items]->task.x@{{value.a=items}}*")


def test_a_syntax_error_raises_from_add_naming_class_field_and_file_line() -> None:
    structure = RunStructure()

    with pytest.raises(CommandParseError) as caught:
        structure.add(TaskBrokenCommand)

    line = line_of("! @each [items]->task.x")
    assert str(caught.value) == (
        "Space before '[' not allowed - use '@each[items]' not '@each [items]'\n"
        "    ! @each [items]->task.x@{{value.a=items}}*\n"
        "           ^\n"
        f"  at TaskBrokenCommand.items ({__file__}:{line}), line 1, column 8\n"
        "  hint: write '@each[' with no space"
    )
    assert structure.tasks == {}
    assert structure.get_node("task.broken_command") is None


# -- nodes -------------------------------------------------------------------------------------


class Outside(TreeNode):
    """Defined outside the task."""

    text: str = ""


class TaskNested(TreeNode):
    """The root."""

    class Inside(TreeNode):
        """Defined inside the task."""

        text: str = ""

    inside: Inside = Inside()
    outside: list[Outside] = Field(default=[])


def test_nested_classes_defined_inside_the_task_or_elsewhere() -> None:
    structure = structure_of(TaskNested)

    assert [(n.tag, n.node_class, n.parent, n.field_name) for n in structure.nodes] == [
        ("task.nested", TaskNested, None, None),
        ("task.nested.inside", TaskNested.Inside, "task.nested", "inside"),
        ("task.nested.outside", Outside, "task.nested", "outside"),
    ]


class Shared(TreeNode):
    """Used twice."""

    text: str = ""


class TaskShared(TreeNode):
    first: Shared = Shared()
    rest: list[Shared] = Field(default=[])
    grid: list[list[Shared]] = Field(default=[])


def test_a_class_used_in_several_fields_is_several_nodes() -> None:
    structure = structure_of(TaskShared)

    assert [(n.tag, n.node_class, n.list_depth) for n in structure.nodes] == [
        ("task.shared", TaskShared, 0),
        ("task.shared.first", Shared, 0),
        ("task.shared.rest", Shared, 1),
        ("task.shared.grid", Shared, 2),
    ]


def test_get_node() -> None:
    structure = structure_of(TaskNested)
    node = structure.get_node("task.nested.inside")

    assert node is not None
    assert node.node_class is TaskNested.Inside
    assert node.text == "Defined inside the task."
    assert node.field("text") is not None
    assert node.field("missing") is None
    assert structure.get_node("task.nested.missing") is None
    assert structure.get_node("task.other") is None


class Loop(TreeNode):
    kids: list["Loop"] = Field(default=[])


class Ping(TreeNode):
    pong: "Pong | None" = None


class Pong(TreeNode):
    ping: Ping | None = None


Ping.model_rebuild()


class TaskLoop(TreeNode):
    loop: Loop = Loop()


class TaskPingPong(TreeNode):
    ping: Ping | None = None


class TaskItself(TreeNode):
    me: "TaskItself | None" = None


@pytest.mark.parametrize(
    ("task", "tag", "field_name", "shape", "cycle"),
    [
        pytest.param(
            TaskLoop,
            "task.loop.loop",
            "kids",
            FieldShape(kind="leaf", list_depth=1),
            "Loop.kids → Loop",
            id="self",
        ),
        pytest.param(
            TaskPingPong,
            "task.ping_pong.ping.pong",
            "ping",
            FieldShape(kind="leaf", optional=True),
            "Ping.pong → Pong.ping → Ping",
            id="pair",
        ),
        pytest.param(
            TaskItself,
            "task.itself",
            "me",
            FieldShape(kind="leaf", optional=True),
            "TaskItself.me → TaskItself",
            id="root-task",
        ),
    ],
)
def test_a_field_whose_type_holds_a_class_above_it_is_a_leaf(
    task: type[TreeNode], tag: str, field_name: str, shape: FieldShape, cycle: str
) -> None:
    structure = structure_of(task)
    node = structure.get_node(tag)
    assert node is not None
    recursive = node.field(field_name)
    assert recursive is not None

    assert structure.validate() == ()
    assert (recursive.shape, recursive.recursion) == (shape, cycle)
    assert structure.get_node(f"{tag}.{field_name}") is None


def test_the_subtree_below_a_recursive_field_is_left_out() -> None:
    structure = structure_of(TaskPingPong)

    assert [n.tag for n in structure.nodes] == [
        "task.ping_pong",
        "task.ping_pong.ping",
        "task.ping_pong.ping.pong",
    ]


# -- field kinds -------------------------------------------------------------------------------


class Item(TreeNode):
    text: str = ""


class Other(TreeNode):
    text: str = ""


class Color(Enum):
    RED = "red"
    BLUE = "blue"


def leaf(depth: int = 0, *, optional: bool = False, enum: type[Enum] | None = None) -> FieldShape:
    return FieldShape(kind="leaf", list_depth=depth, optional=optional, enum=enum)


def node(depth: int = 0, *, optional: bool = False) -> FieldShape:
    kind = "node_list" if depth else "node"
    return FieldShape(kind=kind, node_class=Item, list_depth=depth, optional=optional)


@pytest.mark.parametrize(
    ("annotation", "shape"),
    [
        pytest.param(str, leaf(), id="str"),
        pytest.param(int | None, leaf(optional=True), id="optional-int"),
        pytest.param(list[str], leaf(1), id="list-of-str"),
        pytest.param(list[list[int]], leaf(2), id="list-of-lists"),
        pytest.param(tuple[str, ...], leaf(1), id="tuple-of-str"),
        pytest.param(Color, leaf(enum=Color), id="enum"),
        pytest.param(Optional[Color], leaf(optional=True, enum=Color), id="optional-enum"),  # noqa: UP045
        pytest.param(list[Color], leaf(1, enum=Color), id="list-of-enum"),
        pytest.param(dict[str, int], leaf(), id="dict"),
        pytest.param(dict[str, Item], leaf(), id="dict-of-nodes"),
        pytest.param(Mapping[str, Item], leaf(), id="mapping-of-nodes"),
        pytest.param(list[dict[str, Item]], leaf(1), id="list-of-dicts-of-nodes"),
        pytest.param(list, leaf(1), id="bare-list"),
        pytest.param(tuple, leaf(1), id="bare-tuple"),
        pytest.param(Sequence, leaf(1), id="bare-sequence"),
        pytest.param(list[list], leaf(2), id="list-of-bare-lists"),
        pytest.param(set[str], leaf(), id="set-of-str"),
        pytest.param(frozenset[int], leaf(), id="frozenset-of-int"),
        pytest.param(set[tuple[int, str]], leaf(), id="set-of-tuples"),
        pytest.param(dict[tuple[str, int], Item], leaf(), id="dict-with-tuple-keys"),
        pytest.param(deque[Item], leaf(), id="deque-of-nodes"),
        pytest.param(Item, node(), id="node"),
        pytest.param(Item | None, node(optional=True), id="optional-node"),
        pytest.param(list[Item], node(1), id="list"),
        pytest.param(tuple[Item, ...], node(1), id="tuple"),
        pytest.param(tuple[Item, Item], node(1), id="fixed-tuple-of-one-class"),
        pytest.param(Sequence[Item], node(1), id="sequence"),
        pytest.param(list[Item] | None, node(1, optional=True), id="optional-list"),
        pytest.param(list[Item | None], node(1), id="list-of-optionals"),
        pytest.param(list[list[Item]], node(2), id="nested-lists"),
        pytest.param(Annotated[list[Item], "meta"], node(1), id="annotated"),
    ],
)
def test_field_shape(annotation: object, shape: FieldShape) -> None:
    assert field_shape(annotation) == shape


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        pytest.param(
            Item | int,
            "the type 'Item | int' mixes node classes (Item) with other types in a union or tuple",
            id="node-or-value",
        ),
        pytest.param(
            Item | Other,
            "the type 'Item | Other' mixes node classes (Item, Other) with other types in a union "
            "or tuple",
            id="two-node-classes",
        ),
        pytest.param(
            list[Item] | int,
            "the type 'list[Item] | int' mixes node classes (Item) with other types in a union "
            "or tuple",
            id="node-list-or-value",
        ),
        pytest.param(
            list[Item | int],
            "the type 'list[Item | int]' mixes node classes (Item) with other types in a union "
            "or tuple",
            id="list-of-a-union",
        ),
        pytest.param(
            tuple[Item, Other],
            "the type 'tuple[Item, Other]' mixes node classes (Item, Other) with other types in "
            "a union or tuple",
            id="fixed-tuple-of-two-classes",
        ),
    ],
)
def test_field_shape_refuses_node_unions(annotation: object, message: str) -> None:
    with pytest.raises(ShapeError) as caught:
        field_shape(annotation)

    assert (str(caught.value), caught.value.verdict, caught.value.hint) == (
        message,
        "cannot be part of the tree",
        "give the field a single node class, or a list of one node class",
    )


SET_OF_NODES = "holds nodes in a set, which has no order and needs hashable elements"
NODE_KEYS_HINT = "key the dict by a str (or another hashable type), or use a list of nodes"
IN_SET_HINT = "use a list instead of the set, or a hashable type (str, a tuple, a frozen model)"
AS_KEY_HINT = "use a hashable type (str, a tuple, a frozen model)"


@pytest.mark.parametrize(
    ("annotation", "message", "verdict", "hint"),
    [
        pytest.param(
            set[Item],
            f"the type 'set[Item]' {SET_OF_NODES}",
            "cannot be part of the tree",
            "declare the field as a list, e.g. list[Item]",
            id="set-of-nodes",
        ),
        pytest.param(
            frozenset[Item] | None,
            f"the type 'frozenset[Item] | None' {SET_OF_NODES}",
            "cannot be part of the tree",
            "declare the field as a list, e.g. list[Item]",
            id="optional-frozenset-of-nodes",
        ),
        pytest.param(
            list[set[Item]],
            f"the type 'list[set[Item]]' {SET_OF_NODES}",
            "cannot be part of the tree",
            "declare the field as a list, e.g. list[Item]",
            id="list-of-sets-of-nodes",
        ),
        pytest.param(
            dict[Item, str],
            "the type 'dict[Item, str]' uses nodes as dict keys, which must be hashable",
            "cannot be part of the tree",
            NODE_KEYS_HINT,
            id="nodes-as-keys",
        ),
        pytest.param(
            set[list[str]],
            "the type 'set[list[str]]' puts 'list[str]' in a set, whose elements must be hashable",
            "can never hold a value",
            IN_SET_HINT,
            id="set-of-lists",
        ),
        pytest.param(
            set[NotANode],
            "the type 'set[NotANode]' puts 'NotANode' in a set, whose elements must be hashable",
            "can never hold a value",
            IN_SET_HINT,
            id="set-of-models",
        ),
        pytest.param(
            dict[dict[str, int], int],
            "the type 'dict[dict[str, int], int]' puts 'dict[str, int]' in dict keys, which "
            "must be hashable",
            "can never hold a value",
            AS_KEY_HINT,
            id="dicts-as-keys",
        ),
    ],
)
def test_field_shape_refuses_types_no_value_fits(
    annotation: object, message: str, verdict: str, hint: str
) -> None:
    with pytest.raises(ShapeError) as caught:
        field_shape(annotation)

    assert (str(caught.value), caught.value.verdict, caught.value.hint) == (message, verdict, hint)


class TaskSets(TreeNode):
    items: set[Item] = Field(default=set())
    keyed: dict[Item, str] = Field(default={})
    groups: set[list[str]] = Field(default=set())


def test_a_set_of_nodes_is_an_error_at_its_field() -> None:
    structure = structure_of(TaskSets)

    assert [(d.field_name, d.message, d.hint, d.line) for d in errors(TaskSets)] == [
        (
            "items",
            f"Field 'items' of 'TaskSets' cannot be part of the tree: the type 'set[Item]' "
            f"{SET_OF_NODES}",
            "declare the field as a list, e.g. list[Item]",
            line_of("items: set[Item]"),
        ),
        (
            "keyed",
            "Field 'keyed' of 'TaskSets' cannot be part of the tree: the type 'dict[Item, str]' "
            "uses nodes as dict keys, which must be hashable",
            NODE_KEYS_HINT,
            line_of("keyed: dict[Item, str]"),
        ),
        (
            "groups",
            "Field 'groups' of 'TaskSets' can never hold a value: the type 'set[list[str]]' "
            "puts 'list[str]' in a set, whose elements must be hashable",
            IN_SET_HINT,
            line_of("groups: set[list[str]]"),
        ),
    ]
    assert [n.tag for n in structure.nodes] == ["task.sets"]


class TaskUnion(TreeNode):
    either: Item | int = 0
    plain: str = ""


def test_a_node_union_field_is_an_error_and_has_no_node() -> None:
    structure = structure_of(TaskUnion)

    assert errors(TaskUnion) == (
        Diagnostic(
            severity="error",
            message="Field 'either' of 'TaskUnion' cannot be part of the tree: the type "
            "'Item | int' mixes node classes (Item) with other types in a union or tuple",
            hint="give the field a single node class, or a list of one node class",
            class_name="TaskUnion",
            field_name="either",
            file=__file__,
            line=line_of("either: Item | int"),
        ),
    )
    assert [n.tag for n in structure.nodes] == ["task.union"]


class Hidden(TreeNode):
    """! @all->task.nowhere@{{prompt.context=*}}"""

    text: str = ""


class TaskHoldsDict(TreeNode):
    by_name: dict[str, Hidden] = Field(default={})


def test_a_dict_of_nodes_is_a_leaf_whose_commands_are_not_read() -> None:
    structure = structure_of(TaskHoldsDict)

    assert structure.validate() == ()
    assert [n.tag for n in structure.nodes] == ["task.holds_dict"]


# -- known defaults ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("definition", "known"),
    [
        pytest.param((str, ...), False, id="required"),
        pytest.param((str | None, None), False, id="default-none"),
        pytest.param((Item | None, None), False, id="node-default-none"),
        pytest.param((str, "draft"), True, id="default-value"),
        pytest.param((str, ""), True, id="empty-string"),
        pytest.param((int, 0), True, id="zero"),
        pytest.param((bool, False), True, id="false"),
        pytest.param((list[str], []), True, id="empty-list"),
        pytest.param((list[str], Field(default_factory=list)), True, id="default-factory"),
        pytest.param((str | None, Field(default_factory=lambda: None)), True, id="factory-none"),
    ],
)
def test_known_default(definition: tuple[object, object], known: bool) -> None:
    structure = structure_of(named("TaskDefaults", value=definition))
    task = structure.get_node("task.defaults")
    assert task is not None
    value = task.field("value")
    assert value is not None

    assert value.has_known_default is known


# -- order -------------------------------------------------------------------------------------


class TaskFirst(TreeNode):
    text: str = Field(default="", description="! @all->task.second.missing@{{prompt.text=*}}")


class TaskSecond(TreeNode):
    notes: str = Field(default="", description="! @all->task.first@{{value.nothing=notes}}")


def test_validation_does_not_depend_on_the_order_tasks_are_added() -> None:
    forward = errors(TaskFirst, TaskSecond)

    assert forward == errors(TaskSecond, TaskFirst)
    assert [(d.class_name, d.message) for d in forward] == [
        (
            "TaskFirst",
            "Path 'task.second.missing' does not resolve: 'TaskSecond' (task.second) has no "
            "field 'missing'",
        ),
        (
            "TaskSecond",
            "Path 'nothing' does not resolve: 'TaskFirst' (task.first) has no field 'nothing'",
        ),
    ]


def test_nodes_are_listed_by_task_tag_whatever_the_order_added() -> None:
    assert [n.tag for n in structure_of(TaskSecond, TaskFirst).nodes] == [
        "task.first",
        "task.second",
    ]
