"""Fuzzing the structure stage: random trees of `TreeNode` classes never crash LangTree.

A Hypothesis strategy writes a small Python module: one or two root tasks (`Task<Name>`),
each with 1-4 levels of node classes made by `pydantic.create_model(..., __base__=TreeNode)`
and 1-5 fields per class. The field types mix scalars, `Optional`, `list`, `tuple`, dicts,
sets, `Literal`, enums, nested nodes, lists of nodes, bare `list`/`tuple`, types the tree
refuses (`set[Node]`, `Node | int`), and forward references (resolvable, recursive and
missing), with defaults of the right and the wrong type and `default_factory`. Docstrings
and descriptions mix prose, `{field}` placeholders (valid and not), literal braces, and DSL
commands built from the tree's real field names and paths (`@each`, `@all`, modifiers,
`llm(...)`, `resample(...)`, `@resampled`, assembly variables). How much of it is wrong
(garbage commands, bad arguments, wrong defaults, refused types) depends on a per-example
"chaos" level, so that many trees get through `validate()` to a run.

Each tree goes through `RunStructure()`, `add()`, `validate()`, `plan()`, `prompts()` and,
when it validates, `run()` on `FakeChatModel`. Any stage may refuse the tree with a
`LangTreeError` (`StructureError`, `CommandParseError`, `ExecutionError`, `StepFailedError`
...); any other exception is a bug in LangTree and fails the test. The failure shows the
generated module (it runs on its own) and the calls made on it.

The default run is small and deterministic (`derandomize=True`). To hunt for bugs, run
many more examples with random seeds:

```bash
LANGTREE_FUZZ_EXAMPLES=5000 LANGTREE_FUZZ_SEED=1 \\
    .venv/bin/python -m pytest tests/structure/test_fuzz_trees.py -x
```

- `LANGTREE_FUZZ_EXAMPLES`: how many trees to try (default 250).
- `LANGTREE_FUZZ_SEED`: turns derandomization off and seeds Hypothesis with this integer
  (a different seed, different trees).

`--hypothesis-show-statistics` shows how far the trees get (each stage's outcome is an
event).
"""

from __future__ import annotations

import itertools
import os
import re
import sys
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from hypothesis import HealthCheck, event, given, note, seed, settings
from hypothesis import strategies as st
from pydantic import PydanticUserError, ValidationError

from langtree import LLMProvider, ModelConfig, RunStructure
from langtree.errors import LangTreeError
from langtree.testing import FakeChatModel
from tests.dataflow.trees import unique_code

EXAMPLES = int(os.environ.get("LANGTREE_FUZZ_EXAMPLES", "250"))
SEED = os.environ.get("LANGTREE_FUZZ_SEED")

# ---------------------------------------------------------------------------------------
# The generated module's header: imports and the enums that fields may use
# ---------------------------------------------------------------------------------------

HEADER = """\
from datetime import date
from enum import Enum
from typing import Annotated, Any, Literal, Optional

from pydantic import Field, create_model

from langtree import TreeNode


class Color(str, Enum):
    RED = "red"
    BLUE = "blue"


class Rating(Enum):
    LOW = 1
    MID = 2
    HIGH = 3
"""

# ---------------------------------------------------------------------------------------
# The plan of a tree: classes, fields, types, defaults, texts
# ---------------------------------------------------------------------------------------


@dataclass
class Shape:
    """A field type as source text, with what it means for the tree.

    Attributes:
        src: The annotation as Python source.
        kind: `leaf`, `node`, `nodes` (a sequence of nodes) or `refused` (an error).
        child: The node class that paths go through, for `node` and `nodes`.
        defaults: Candidate `Field(...)` arguments that fit the type.
        wrong: Candidate `Field(...)` arguments that do not (or may not) fit.
        enum: Whether the leaf is an enum.
        defines: The node class the annotation names, reached or not (`dict[str, Node]`,
            `set[Node]` name one the tree does not reach): it is defined before.
    """

    src: str
    kind: str = "leaf"
    child: ClassPlan | None = None
    defaults: tuple[str, ...] = ()
    wrong: tuple[str, ...] = ()
    enum: bool = False
    defines: ClassPlan | None = None

    @property
    def iterable(self) -> bool:
        """Whether `@each` may iterate the field (a list of nodes, or a list leaf)."""
        if self.kind == "nodes":
            return True
        sequence = re.fullmatch(r"(Optional\[)?(list|tuple)\b.*", self.src) is not None
        return self.kind == "leaf" and self.defines is None and sequence


@dataclass
class FieldPlan:
    name: str
    shape: Shape
    default: str | None = None
    description: str | None = None


@dataclass
class ClassPlan:
    name: str
    path: str
    parent: ClassPlan | None
    fields: list[FieldPlan] = field(default_factory=list)
    doc: str | None = None

    def field_names(self) -> list[str]:
        return [plan.name for plan in self.fields]


@dataclass
class Context:
    """What drawing one example shares.

    Attributes:
        code: The example's unique code (in every class name).
        chaos: 0 (nothing wrong on purpose), 1 (one thing at most) or 2 (more): how
            often a bad choice is drawn.
        roots: The root tasks' plans, once drawn.
        placeholders: The `{name}` placeholders written so far.
        serial: Numbers the node classes.
        bad_made: Whether a bad choice was drawn.
        made: The node classes drawn so far (a field may use one again).
    """

    code: str
    chaos: int
    roots: list[ClassPlan] = field(default_factory=list)
    placeholders: set[str] = field(default_factory=set)
    serial: Iterator[int] = field(default_factory=itertools.count)
    bad_made: bool = False
    made: list[ClassPlan] = field(default_factory=list)

    def class_name(self, word: str) -> str:
        return f"{word}{self.code.capitalize()}{next(self.serial)}"


@st.composite
def bad_choices(draw: st.DrawFn, context: Context) -> bool:
    """Whether to make a bad choice: never at chaos 0; at chaos 1, one choice at most (at
    2% of the choices until then); at chaos 2, 15% of the choices."""
    if context.chaos == 0 or (context.chaos == 1 and context.bad_made):
        return False
    bad = draw(st.integers(0, 99)) < (0, 2, 15)[context.chaos]
    context.bad_made = context.bad_made or bad
    return bad


@st.composite
def pick(draw: st.DrawFn, context: Context, good: Sequence[str], bad: Sequence[str] = ()) -> str:
    """One of `good`, or (at the chaos level's rate) one of `bad`."""
    if len(bad) > 0 and draw(bad_choices(context)):
        return draw(st.sampled_from(bad))
    return draw(st.sampled_from(good))


LEAVES = (
    Shape("str", defaults=('default="text"', 'default=""'), wrong=("default=5",)),
    Shape("int", defaults=("default=3", "default=0"), wrong=('default="three"', "default=2.5")),
    Shape("float", defaults=("default=0.5", "default=2"), wrong=('default="x"',)),
    Shape("bool", defaults=("default=True",), wrong=('default="maybe"', "default=[]")),
    Shape('Literal["low", "high"]', defaults=('default="low"',), wrong=('default="mid"',)),
    Shape("Literal[1, 2, 3]", defaults=("default=2",), wrong=("default=7",)),
    Shape(
        "Color",
        defaults=("default=Color.RED", 'default="blue"'),
        wrong=('default="purple"',),
        enum=True,
    ),
    Shape("Rating", defaults=("default=Rating.HIGH",), wrong=("default=9",), enum=True),
    Shape(
        "dict[str, str]",
        defaults=('default={"a": "b"}', "default_factory=dict"),
        wrong=('default={"a": 1}', "default=[]"),
    ),
    Shape("set[str]", defaults=('default={"a"}', "default_factory=set"), wrong=("default=5",)),
    Shape(
        "list[str]",
        defaults=('default=["a", "b"]', "default=[]", "default_factory=list"),
        wrong=('default="a"', "default=[1]"),
    ),
    Shape("list[int]", defaults=("default=[1, 2]",), wrong=('default=["x"]',)),
    Shape("tuple[int, ...]", defaults=("default=(1, 2)", "default=()"), wrong=("default=1",)),
    Shape("list", defaults=("default=[]", 'default=[1, "a"]'), wrong=("default=5",)),
    Shape("tuple", defaults=("default=()",), wrong=("default=5",)),
    Shape("list[list[str]]", defaults=('default=[["a"]]',), wrong=('default=["a"]',)),
    Shape("Annotated[int, Field(ge=0)]", defaults=("default=1",), wrong=("default=-1",)),
    Shape("dict[str, list[int]]", defaults=("default={}",), wrong=('default={"a": "b"}',)),
    Shape('"int"', defaults=("default=1",), wrong=('default="x"',)),
    Shape('list["str"]', defaults=("default=[]",), wrong=("default=[[]]",)),
    Shape('Optional["Color"]', defaults=("default=None",), enum=True),
    Shape("int | str", defaults=("default=1", 'default="a"'), wrong=("default=[]",)),
    Shape("Any", defaults=("default=None", "default={}")),
    Shape("date", defaults=("default=date(2024, 1, 2)",), wrong=('default="soon"',)),
    Shape("dict[str, Any]", defaults=("default_factory=dict",), wrong=("default=[1]",)),
    Shape(
        "Annotated[str, Field(min_length=3)]", defaults=('default="abc"',), wrong=('default=""',)
    ),
    Shape(
        "Annotated[list[str], Field(max_length=1)]",
        defaults=("default=[]",),
        wrong=('default=["a", "b"]',),
    ),
)
REFUSED_LEAVES = (
    Shape('"Missing"', kind="refused", defaults=("default=None",)),
    Shape('list["Missing"]', kind="refused", defaults=("default=[]",)),
    Shape("set[list[str]]", kind="refused", defaults=("default_factory=set",)),
)

FIELD_NAMES = (
    "title",
    "summary",
    "items",
    "sections",
    "score",
    "notes",
    "tags",
    "rating",
    "body",
    "verdict",
    "colour",
    "level",
    "details",
    "parts",
    "extra",
    "count",
    "value",
    "prompt",
    "task",
    "outputs",
    "each",
    "external",
    "llm",
    "resample",
    "Notes",
    "URL",
    "model_name",
    "título",
)
CONFIGS = (
    "None",
    "None",
    "None",
    '{"default_modifier": "parallel"}',
    '{"validation_strategy": "permissive"}',
    '{"validation_strategy": "development"}',
    '{"allow_string_parsing": False, "allow_treenode_dict_conversion": False}',
    '{"enable_type_validation": False}',
    '{"on_error": "continue"}',
    '{"token_budget": {"*": 40}}',
    '{"max_concurrency": 1, "max_retries": 0}',
)
BAD_CONFIGS = ('{"default_modifier": "sideways"}', '{"token_budget": -1}', '{"colour": 1}', "[]")
ROOT_WORDS = ("Report", "Review", "DataDigest", "Survey", "StoryPlan")
NODE_WORDS = ("Section", "Item", "Part", "Note", "Entry", "Point")


def optional(shape: Shape) -> Shape:
    """`Optional[...]` around a leaf shape: `None` fits, and everything that fitted before."""
    return Shape(
        f"Optional[{shape.src}]",
        kind=shape.kind,
        defaults=("default=None", *shape.defaults),
        wrong=shape.wrong,
        enum=shape.enum,
    )


def node_shapes(child: ClassPlan, lineage: list[str]) -> tuple[list[Shape], list[Shape]]:
    """The ways a field may hold the node class `child`: those the tree takes, and those
    it refuses. `lineage` names the class that holds the field and its ancestors, which a
    forward reference may name (a recursive type, resolved at `add()`)."""
    name = child.name
    factory = f"default_factory={name}.model_construct"
    good = [
        Shape(
            name,
            "node",
            child,
            (factory, f"default={name}.model_construct()", "default={}"),
            ("default=1", 'default={"nope": 1}'),
        ),
        Shape(f'"{name}"', "node", child, (factory,), (f"default_factory={name}",)),
        Shape(
            f"list[{name}]",
            "nodes",
            child,
            ("default=[]", "default_factory=list"),
            ('default="x"', "default=[1]", "default=[{}]"),
        ),
        Shape(f'list["{name}"]', "nodes", child, ("default=[]",), ("default=None",)),
        Shape(f"Optional[{name}]", "node", child, ("default=None",), ("default=[]",)),
        Shape(f"tuple[{name}, ...]", "nodes", child, ("default=()",), ("default=[1]",)),
        Shape(f"list[list[{name}]]", "nodes", child, ("default=[]",), ("default=[[1]]",)),
        Shape(f"Optional[list[{name}]]", "nodes", child, ("default=None", "default=[]")),
        Shape(f"dict[str, {name}]", "leaf", None, ("default={}",), ('default={"a": 1}',)),
    ]
    for other in lineage:
        good.append(Shape(f'list["{other}"]', "leaf", None, ("default=[]",)))
        good.append(Shape(f'Optional["{other}"]', "leaf", None, ("default=None",)))
    bad = [
        Shape(f"set[{name}]", "refused", None, ("default_factory=set",)),
        Shape(f"{name} | int", "refused", None, ("default=1",)),
        Shape(f"tuple[{name}, int]", "refused", None),
    ]
    for shape in (*good, *bad):
        shape.defines = child
    return good, bad


@st.composite
def class_plans(
    draw: st.DrawFn,
    context: Context,
    name: str,
    path: str,
    parent: ClassPlan | None,
    levels: int,
) -> ClassPlan:
    """A class and, `levels` deep at most, the classes its node fields hold (no text yet)."""
    plan = ClassPlan(name, path, parent)
    lineage = []
    up: ClassPlan | None = plan
    while up is not None:
        lineage.append(up.name)
        up = up.parent
    names = draw(st.lists(st.sampled_from(FIELD_NAMES), min_size=1, max_size=5, unique=True))
    for field_name in names:
        if levels and draw(st.integers(0, 9)) < 4:
            if context.made and not draw(st.integers(0, 5)):  # a class used twice: two nodes
                child = draw(st.sampled_from(context.made))
            else:
                child_name = context.class_name(draw(st.sampled_from(NODE_WORDS)))
                child_path = f"{path}.{field_name}"
                child = draw(class_plans(context, child_name, child_path, plan, levels - 1))
                context.made.append(child)
            good, bad = node_shapes(child, lineage)
            shape = draw(st.sampled_from(bad if draw(bad_choices(context)) else good))
        else:
            refused = draw(bad_choices(context))
            shape = draw(st.sampled_from(REFUSED_LEAVES if refused else LEAVES))
            if draw(st.integers(0, 9)) == 0:
                shape = optional(shape)
        plan.fields.append(FieldPlan(field_name, shape, draw(defaults(context, shape))))
    return plan


@st.composite
def defaults(draw: st.DrawFn, context: Context, shape: Shape) -> str | None:
    """`Field(...)` default arguments: none (required), fitting ones, or wrong ones."""
    if draw(st.integers(0, 9)) < 5:
        return None
    if len(shape.wrong) > 0 and draw(bad_choices(context)):
        return draw(st.sampled_from(shape.wrong))
    return draw(st.sampled_from(shape.defaults)) if shape.defaults else None


# ---------------------------------------------------------------------------------------
# Texts: prose, placeholders and commands over the tree's real names
# ---------------------------------------------------------------------------------------

PROSE = (
    "Write a short, precise answer.",
    "Be concise and cite the text.",
    "Rate it from 1 to 5.",
    "",
    "# Background",
    "## Details",
    'Answer like {"score": 1}.',
    "Use {{double braces}} here.",
    "An open { brace.",
    "A close } brace.",
    "Ünïcödé — text ✓",
    "  indented line",
)
DOC_PROSE = ("\n{PROMPT_SUBTREE}\n", "\n{COLLECTED_CONTEXT}\n")
BAD_PROSE = ("{PROMPT_SUBTREE}", "See {COLLECTED_CONTEXT} here.", "{PROMPT_SUBTREE}\n")
BAD_NAMES = ("nope", "a__b", "Upper", "PROMPT_SUBTREE", "1x", "", " title ", "task.x")
MODIFIERS = ("@sequential", "@parallel", "together")
LLM_CALLS = (
    'llm("fast")',
    'llm("smart", override=true)',
    'llm("fast", override=false)',
    'llm("default")',
)
BAD_LLM_CALLS = (
    "llm(model_name)",
    'llm("nope")',
    "llm()",
    "llm(5)",
    'llm("fast", override=maybe)',
    'llm("a", "b")',
)
RESAMPLES = ("resample(3)", "resample(2)", "resample(1)")
BAD_RESAMPLES = (
    "resample(n)",
    "resample(0)",
    "resample(-2)",
    'resample("3")',
    "resample(2.5)",
    "resample()",
)
AGGREGATIONS = ("mean", "median", "mode", "min", "max")
BAD_AGGREGATIONS = ("sum", "avg")
ASSIGNMENTS = (
    "n=3",
    'model_name="fast"',
    "model_name='smart'",
    "threshold=2.5",
    "debug=true",
    'label="say \\"hi\\""',
)
BAD_ASSIGNMENTS = ('title="clash"', "count=2", "x__y=1", "n=three")
GARBAGE = (
    "@each [items]->task@{{value.x=items}}*",
    "@each[items]->task@{{value.x=items}",
    "@all->@{{}}",
    "@all->task.x@{{value.a=}}",
    "@each[]->x@{{y=z}}*",
    "@resampled[]->mean",
    "@unknown",
    "resample(",
    "}}",
    "= 3",
    "@all -> task.x@{{value.a=b}}",
    "@each[a.b]->c@{{d=a.b}}* extra",
    "llm('unterminated)",
    "@ ->x",
    "@each[items]->task.x@{{value.a=*}}*",
    "@all->task.x@{{value.a=*, value.b=*}}",
)
SCOPES = ("value.", "prompt.", "outputs.", "task.", "")
EACH_SCOPES = ("prompt.", "outputs.", "prompt.", "outputs.", "value.", "")
VARIABLE_NAMES = ("x", "context", "notes", "summary", "items")
BAD_SCOPES = ("bogus.", "prompt.external.", "value.value.")


@st.composite
def walk(draw: st.DrawFn, start: ClassPlan, prefix: str) -> tuple[str, ClassPlan | None]:
    """A path that starts at `prefix` (the path of `start`) and goes down 0-3 fields,
    with the class it ends at (`None` at a leaf)."""
    path, here = prefix, start
    for _ in range(draw(st.integers(0, 3))):
        chosen = draw(st.sampled_from(here.fields))
        path = f"{path}.{chosen.name}" if path else chosen.name
        if chosen.shape.child is None:
            return path, None
        here = chosen.shape.child
    return path, here


def root_of(plan: ClassPlan) -> ClassPlan:
    while plan.parent is not None:
        plan = plan.parent
    return plan


@st.composite
def destinations(
    draw: st.DrawFn, context: Context, here: ClassPlan, holder: FieldPlan | None
) -> tuple[str, ClassPlan | None] | None:
    """A destination downstream of the holding field: a root task drawn after its own, or
    a field after it in its node. When the choice is bad, any path, resolvable or not.
    `None` when there is no good one."""
    if draw(bad_choices(context)):
        roll = draw(st.integers(0, 2))
        if roll == 0:
            root = draw(st.sampled_from(context.roots))
            return draw(walk(root, root.path))
        if roll == 1:
            path, node = draw(walk(here, ""))
            return (path, node) if path else (root_of(here).path, root_of(here))
        bad = ("task.nowhere", "nowhere.x", "task", "prompt.external", root_of(here).path)
        return draw(st.sampled_from(bad)), None
    others = context.roots[context.roots.index(root_of(here)) + 1 :]  # no cycle of tasks
    names = here.field_names()
    later = here.fields[names.index(holder.name) + 1 :] if holder is not None else []
    if not others and not later:
        return None
    if later and (not others or draw(st.booleans())):
        chosen = draw(st.sampled_from(later))
        if chosen.shape.child is None:
            return chosen.name, None
        path, node = draw(walk(chosen.shape.child, chosen.name))
        return path, node
    root = draw(st.sampled_from(others))
    return draw(walk(root, root.path))


@st.composite
def targets(
    draw: st.DrawFn,
    context: Context,
    destination: ClassPlan | None,
    scopes: Sequence[str] = SCOPES,
) -> str:
    """A mapping target: a variable name for `prompt`/`outputs`, else a path into the
    destination (or another name)."""
    if destination is None:  # a leaf, or a path that resolves nowhere: no value targets
        scopes = ("prompt.", "outputs.")
    scope = draw(pick(context, scopes, BAD_SCOPES))
    if scope in ("prompt.", "outputs."):
        return scope + draw(pick(context, VARIABLE_NAMES, ["a.b", "items.title"]))
    if destination is None or draw(bad_choices(context)):
        return scope + draw(st.sampled_from(VARIABLE_NAMES))
    name, _ = draw(walk(destination, ""))
    return scope + (name or draw(st.sampled_from(destination.field_names())))


def joined(mappings: list[str], multiline: bool) -> str:
    if multiline:
        return "\n    " + ",\n    ".join(mappings) + ",\n"
    return ", ".join(mappings)


@st.composite
def each_commands(
    draw: st.DrawFn, context: Context, here: ClassPlan, holder: FieldPlan | None
) -> str:
    """`@each[...]->...@{{...}}*` over the holding field (or, in a docstring, a field of
    `here`) when it is iterable; over any field when the choice is bad."""
    bad = draw(bad_choices(context))
    if bad:
        first = draw(st.sampled_from(here.fields))
    elif holder is not None:
        first = holder
    else:
        iterable = [plan for plan in here.fields if plan.shape.iterable]
        first = draw(st.sampled_from(iterable)) if iterable else here.fields[0]
    if not first.shape.iterable and not bad:
        return draw(all_commands(context, here, holder))
    inclusion, element = first.name, first.shape.child
    if element is not None and draw(st.booleans()):
        deeper = draw(st.sampled_from(element.fields))
        inclusion, element = f"{inclusion}.{deeper.name}", deeper.shape.child
    if inclusion == first.name and one_level(first.shape) and draw(st.booleans()):
        matched = draw(matched_each_commands(context, here, holder, first))
        if matched is not None:
            return matched
    inclusion = draw(pick(context, [inclusion], ["missing", "items.nope", f"{inclusion}.x"]))
    downstream = draw(destinations(context, here, holder))
    if downstream is None:
        return "# nowhere to send it"
    destination, node = downstream
    sources = [inclusion]
    if element is not None:
        sources += [f"{inclusion}.{name}" for name in element.field_names()]
    mappings = [
        f"{draw(targets(context, node, EACH_SCOPES))}="
        + draw(pick(context, sources, ["other.x", "x", "*"]))
        for _ in range(draw(st.integers(1, 3)))
    ]
    implicit = holder is not None and inclusion == holder.name and not draw(st.integers(0, 9))
    bracket = "" if implicit else f"[{inclusion}]"
    star = draw(pick(context, ["*"], [""]))
    body = joined(mappings, draw(st.integers(0, 5)) == 0)
    return f"@each{bracket}->{destination}@{{{{{body}}}}}{star}"


def one_level(shape: Shape) -> bool:
    """Whether the shape is a sequence of nodes with one iteration level."""
    return shape.kind == "nodes" and "list[list" not in shape.src


def node_lists(plan: ClassPlan, prefix: str) -> list[tuple[str, ClassPlan]]:
    """The one-level node lists reachable from `plan` through single node fields: their
    paths (from `prefix`) and element classes."""
    found = []
    for field_plan in plan.fields:
        path = f"{prefix}.{field_plan.name}" if prefix else field_plan.name
        child = field_plan.shape.child
        if child is not None and one_level(field_plan.shape):
            found.append((path, child))
        elif child is not None and field_plan.shape.kind == "node":
            found += node_lists(child, path)
    return found


@st.composite
def matched_each_commands(
    draw: st.DrawFn, context: Context, here: ClassPlan, holder: FieldPlan | None, first: FieldPlan
) -> str | None:
    """`@each[list]->other_list@{{value.x=list.x}}*` between fields of the same type, one
    level each: element *i* of the destination gets the value of element *i*."""
    element = first.shape.child
    assert element is not None
    lists = [
        pair
        for root in context.roots[context.roots.index(root_of(here)) + 1 :]
        for pair in node_lists(root, root.path)
    ]
    if holder is not None:
        later = here.fields[here.field_names().index(holder.name) + 1 :]
        lists += node_lists(ClassPlan(here.name, here.path, None, later), "")  # siblings after
    pairs = [
        (path, target.name, source.name)
        for path, destination in lists
        for target in destination.fields
        for source in element.fields
        if target.shape.src == source.shape.src and target.shape.child is None
    ]
    if not pairs:
        return None
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=2, unique=True))
    path = chosen[0][0]
    mappings = [
        f"value.{target}={first.name}.{source}"
        for destination, target, source in chosen
        if destination == path
    ]
    if draw(st.booleans()):
        mappings.append(f"prompt.{draw(st.sampled_from(VARIABLE_NAMES))}={first.name}")
    return f"@each[{first.name}]->{path}@{{{{{', '.join(mappings)}}}}}*"


@st.composite
def all_commands(
    draw: st.DrawFn, context: Context, here: ClassPlan, holder: FieldPlan | None
) -> str:
    """`@all->...@{{...}}` (or `@->`) sending the holding field or the whole node."""
    downstream = draw(destinations(context, here, holder))
    if downstream is None:
        return "# nowhere to send it"
    destination, node = downstream
    own = [holder.name] if holder is not None else here.field_names()
    others = [name for name in here.field_names() if name not in own] or ["other"]
    roll = draw(st.integers(0, 9))
    if roll == 1 and holder is not None:
        variable = draw(st.sampled_from(VARIABLE_NAMES))
        return f"@all->prompt.external@{{{{{variable}={holder.name}}}}}"
    if roll == 0 and holder is not None:
        mappings = [f"outputs.{holder.name}"]  # implicit: the target names the field
    elif roll < 3:
        mappings = [f"{draw(targets(context, node))}=*"]
    else:
        mappings = [
            f"{draw(targets(context, node))}={draw(pick(context, own, others))}"
            for _ in range(draw(st.integers(1, 2)))
        ]
    keyword = draw(st.sampled_from(("@all", "@all", "@")))
    star = draw(st.sampled_from(("", "", "*")))
    body = joined(mappings, draw(st.integers(0, 5)) == 0)
    return f"{keyword}->{destination}@{{{{{body}}}}}{star}"


@st.composite
def commands(
    draw: st.DrawFn,
    context: Context,
    here: ClassPlan,
    holder: FieldPlan | None,
    used: set[str],
) -> str:
    """One `!` command line (possibly several physical lines). `used` holds the kinds of
    command already in the text: a good choice does not repeat a setting."""
    kinds = ["each", "each", "all", "all", "llm", "resample", "assign", "#"]
    if holder is None:
        kinds += ["modifier", "modifier"]
    enums = [plan for plan in here.fields if plan.shape.enum]
    if enums:
        kinds.append("resampled")
    if draw(bad_choices(context)):
        kind = draw(st.sampled_from(("garbage", "modifier", "resampled", "llm", "resample")))
    else:
        kind = draw(st.sampled_from([kind for kind in kinds if kind not in used] or ["#"]))
    if kind in ("llm", "resample", "resampled", "modifier"):
        used.add(kind)
    if kind == "each":
        body = draw(each_commands(context, here, holder))
    elif kind == "all":
        body = draw(all_commands(context, here, holder))
    elif kind == "modifier":
        body = draw(st.sampled_from(MODIFIERS))
    elif kind == "llm":
        body = draw(pick(context, LLM_CALLS, BAD_LLM_CALLS))
    elif kind == "resample":
        body = draw(pick(context, RESAMPLES, BAD_RESAMPLES))
    elif kind == "resampled":
        body = draw(resampled_commands(context, here, enums))
    elif kind == "assign":
        body = draw(pick(context, ASSIGNMENTS, BAD_ASSIGNMENTS))
    elif kind == "#":
        body = "# a standalone comment"
    else:
        body = draw(st.sampled_from(GARBAGE))
    if not body.startswith("#") and not draw(st.integers(0, 7)):
        body += "  # why"
    return draw(st.sampled_from(("! ", "! ", "!"))) + body


@st.composite
def resampled_commands(
    draw: st.DrawFn, context: Context, here: ClassPlan, enums: list[FieldPlan]
) -> str:
    """`@resampled[field]->function`: numeric functions for int enums, `mode` for others."""
    if not enums or draw(bad_choices(context)):
        name = draw(st.sampled_from([*here.field_names(), "nope"]))
        function = draw(st.sampled_from((*AGGREGATIONS, *BAD_AGGREGATIONS)))
    else:
        chosen = draw(st.sampled_from(enums))
        numeric = "Rating" in chosen.shape.src
        name = chosen.name
        function = draw(st.sampled_from(AGGREGATIONS if numeric else ("mode",)))
    return f"@resampled[{name}]->{function}"


@st.composite
def placeholder_lines(
    draw: st.DrawFn, context: Context, here: ClassPlan, holder: FieldPlan | None
) -> str:
    """Prose with a `{name}`: a field before the holding one, an external variable in a
    root's docstring; when the choice is bad, any other name."""
    names = here.field_names()
    good = names[: names.index(holder.name)] if holder is not None else []
    good = [name for name in good if name.islower()]
    if holder is None and here.parent is None:
        good += ["audience", "topic"]
    bad = [*names, *BAD_NAMES]
    up = here.parent
    while up is not None:
        bad += up.field_names()
        up = up.parent
    name = draw(pick(context, good, bad)) if good else draw(st.sampled_from(bad))
    if not good and not draw(bad_choices(context)):
        return draw(st.sampled_from(PROSE))
    if name.isidentifier():
        context.placeholders.add(name)
    return f"Consider {{{name}}} carefully."


@st.composite
def text_blocks(
    draw: st.DrawFn, context: Context, here: ClassPlan, holder: FieldPlan | None
) -> str | None:
    """A docstring (`holder` is `None`) or a field description, or no text at all."""
    if not draw(st.integers(0, 4)):
        return None
    prose = (*PROSE, *DOC_PROSE) if holder is None else PROSE
    lines: list[str] = []
    used: set[str] = set()
    for _ in range(draw(st.integers(1, 4))):
        roll = draw(st.integers(0, 9))
        if roll < 3:
            lines += draw(pick(context, prose, BAD_PROSE)).split("\n")
        elif roll < 5:
            lines.append(draw(placeholder_lines(context, here, holder)))
        else:
            lines += draw(commands(context, here, holder, used)).split("\n")
    if draw(st.booleans()):  # laid out as in a class body: indented, blank lines around
        return "\n" + "".join(f"    {line}\n" if line else "\n" for line in lines) + "    "
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# Rendering the plan as a module of `create_model` calls, and the calls to make on it
# ---------------------------------------------------------------------------------------


def post_order(plan: ClassPlan, seen: set[int]) -> list[ClassPlan]:
    """`plan` and the classes it names, children first (so that names exist when used),
    leaving out those in `seen` (ids of the classes already listed)."""
    if id(plan) in seen:
        return []
    seen.add(id(plan))
    ordered: list[ClassPlan] = []
    for field_plan in plan.fields:
        if field_plan.shape.defines is not None:
            ordered += post_order(field_plan.shape.defines, seen)
    return [*ordered, plan]


def render_class(plan: ClassPlan) -> str:
    lines = [f"{plan.name} = create_model(", f"    {plan.name!r},", "    __base__=TreeNode,"]
    if plan.doc is not None:
        lines.append(f"    __doc__={plan.doc!r},")
    for field_plan in plan.fields:
        arguments = [field_plan.default] if field_plan.default is not None else []
        if field_plan.description is not None:
            arguments.append(f"description={field_plan.description!r}")
        info = f"Field({', '.join(arguments)})" if arguments else "..."
        lines.append(f"    {field_plan.name}=({field_plan.shape.src}, {info}),")
    lines.append(")")
    return "\n".join(lines)


@dataclass
class Example:
    """One generated module and the calls to make on it."""

    module_name: str
    chaos: int
    source: str
    roots: list[str]
    tags: list[str]
    provider: str
    config: str
    inputs: str | None
    variables: dict[str, object] | None
    validate_with_inputs: bool

    def __repr__(self) -> str:
        return f"Example({self.module_name!r})  # the module and the calls are noted below"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """How Hypothesis shows the failing example: briefly (the notes hold the rest)."""
        printer.text(repr(self))

    def calls(self) -> str:
        """The calls the test makes, as Python source, for the failure report."""
        models = {
            "none": "None",
            "default": 'LLMProvider({"default": FakeChatModel()})',
            "fast+smart": 'LLMProvider({"fast": FakeChatModel(), "smart": FakeChatModel()})',
            "json": 'LLMProvider({"fast": FakeChatModel(), '
            '"smart": ModelConfig(FakeChatModel(), method="json_mode")})',
        }
        adds = "\n".join(f"structure.add({root})" for root in self.roots)
        checked = "inputs" if self.validate_with_inputs else ""
        return (
            f"structure = RunStructure({self.config}, provider={models[self.provider]})\n"
            f"{adds}\n"
            f"inputs = {self.inputs or 'None'}\nvariables = {self.variables!r}\n"
            f"structure.validate({checked})\n"
            + "".join(f"structure.get_node({tag!r})\n" for tag in self.tags)
            + "structure.plan(inputs).to_mermaid()\nstructure.prompts(inputs, variables)\n"
            "structure.run(inputs, variables)  # when validate() passed, with a provider"
        )


def task_tag(word: str, code: str) -> str:
    """The tag of `Task<word><code>` (`DataDigest`, `ab` -> `task.data_digestab`)."""
    return "task." + re.sub(r"(?<=[a-z])(?=[A-Z])", "_", word).lower() + code


@st.composite
def input_values(draw: st.DrawFn, context: Context, shape: Shape, depth: int = 0) -> str:
    """A value for a field, as source: one that fits, one that does not, or a partial node
    (a dict of some of its fields, or an instance made by `model_construct`)."""
    if shape.child is not None and shape.kind in ("node", "nodes"):
        element = draw(node_values(context, shape.child, depth))
        if shape.kind == "node":
            return draw(pick(context, [element], ["None", "[]", "1"]))
        if "list[list" in shape.src:
            return draw(pick(context, ["[]", f"[[{element}]]"], [f"[{element}]"]))
        elements = draw(st.sampled_from(("", element, f"{element}, {element}")))
        return draw(pick(context, [f"[{elements}]"], [element, "[1]"]))
    good = [d.split("=", 1)[1] for d in shape.defaults if d.startswith("default=")]
    bad = [d.split("=", 1)[1] for d in shape.wrong if d.startswith("default=")]
    return draw(pick(context, good or ["None"], bad))


@st.composite
def node_values(draw: st.DrawFn, context: Context, plan: ClassPlan, depth: int) -> str:
    """A partial value of the node class `plan`: a dict or an instance."""
    chosen = [] if depth > 2 else draw(st.lists(st.sampled_from(plan.fields), max_size=2))
    values = ", ".join(
        f"{item.name!r}: {draw(input_values(context, item.shape, depth + 1))}"
        for item in {id(item): item for item in chosen}.values()
    )
    values = draw(pick(context, [values], [f"{values}, 'nope': 1".lstrip(", ")]))
    if draw(st.integers(0, 3)):
        return f"{{{values}}}"
    return f"{plan.name}.model_construct(**{{{values}}})"


@st.composite
def input_sources(draw: st.DrawFn, context: Context) -> str | None:
    """The `inputs` argument as source: task classes (or tags) to some of their fields."""
    if not draw(st.integers(0, 2)):
        return None
    entries = []
    for root in context.roots:
        if not draw(st.integers(0, 3)):
            continue
        key = root.name if draw(st.integers(0, 4)) else repr(root.path)
        entries.append(f"{key}: {draw(node_values(context, root, 0))}")
    entries += [draw(pick(context, [""], ["'task.nowhere': {}", "3: {}"]))]
    return "{" + ", ".join(entry for entry in entries if entry) + "}"


@st.composite
def examples(draw: st.DrawFn) -> Example:
    """A generated module with one or two root tasks, and the calls to make on it."""
    context = Context(unique_code(), draw(st.sampled_from((0, 0, 1, 2))))
    words = draw(st.lists(st.sampled_from(ROOT_WORDS), min_size=1, max_size=2, unique=True))
    for word in words:
        name, tag = f"Task{word}{context.code}", task_tag(word, context.code)
        context.roots.append(draw(class_plans(context, name, tag, None, draw(st.integers(0, 3)))))
    seen: set[int] = set()
    classes = [plan for root in context.roots for plan in post_order(root, seen)]
    for plan in classes:
        plan.doc = draw(text_blocks(context, plan, None))
        for field_plan in plan.fields:
            field_plan.description = draw(text_blocks(context, plan, field_plan))
    source = "\n\n\n".join([HEADER, *(render_class(plan) for plan in classes)]) + "\n"
    roots = [root.name for root in context.roots]
    if len(roots) == 2 and not draw(st.integers(0, 3)):
        roots.reverse()
    values: tuple[object, ...] = ("text", "text", "text", 3, ["a"], {"k": 1}, None)
    variables: dict[str, object] = {}
    for name in sorted(context.placeholders):  # mostly text, sometimes other values
        value = draw(st.sampled_from(values))
        variables[name] = f"<{name}>" if value == "text" else value
    return Example(
        module_name=f"langtree_fuzz_{context.code}",
        chaos=context.chaos,
        source=source,
        roots=roots,
        tags=[root.path for root in context.roots],
        provider=draw(st.sampled_from(("none", "default", "fast+smart", "fast+smart", "json"))),
        config=draw(pick(context, CONFIGS, BAD_CONFIGS)),
        inputs=draw(input_sources(context)),
        variables=draw(st.sampled_from((None, variables, variables))),
        validate_with_inputs=draw(st.booleans()),
    )


# ---------------------------------------------------------------------------------------
# The property
# ---------------------------------------------------------------------------------------


@dataclass
class Outcome:
    ok: bool
    value: Any = None


def attempt(stage: str, call: Callable[[], object]) -> Outcome:
    """Run one stage; a `LangTreeError` is an answer, any other exception a failure.

    Each outcome is also a Hypothesis event (`--hypothesis-show-statistics` counts how
    far the trees get).
    """
    note(f"-- {stage}")
    kind = re.split(r"[(\[]", stage, maxsplit=1)[0]
    try:
        value = call()
    except LangTreeError as error:
        first = str(error).splitlines()[0] if str(error) else ""
        note(f"   refused: {type(error).__name__}: {first}")
        event(f"{kind}: {type(error).__name__}")
        return Outcome(False)
    event(f"{kind}: ok")
    return Outcome(True, value)


def providers(kind: str) -> LLMProvider | None:
    if kind == "none":
        return None
    if kind == "default":
        return LLMProvider({"default": FakeChatModel()})
    smart: Any = FakeChatModel()
    if kind == "json":
        smart = ModelConfig(FakeChatModel(), method="json_mode")
    return LLMProvider({"fast": FakeChatModel(), "smart": smart})


def load(example: Example) -> types.ModuleType:
    """Execute the generated source as a module registered under its own name."""
    module = types.ModuleType(example.module_name)
    sys.modules[example.module_name] = module
    exec(compile(example.source, f"<{example.module_name}>", "exec"), module.__dict__)
    return module


def exercise(example: Example, module: types.ModuleType) -> None:
    """Every stage on the generated tasks, in the order a user would call them."""
    tasks = [getattr(module, name) for name in example.roots]
    inputs: Mapping[object, object] | None = None
    try:
        inputs = eval(example.inputs, module.__dict__) if example.inputs else None
    except (ValidationError, PydanticUserError) as error:
        # `model_construct` called a `default_factory` that fails (the class has required
        # fields, or is not fully defined): the user's code, not LangTree, raised.
        note(f"the inputs cannot be built, none are given: {error}")
    config = eval(example.config)
    made = attempt(
        "RunStructure()", lambda: RunStructure(config, provider=providers(example.provider))
    )
    if not made.ok:
        return
    structure: RunStructure = made.value
    added = [
        task for task in tasks if attempt(f"add({task.__name__})", partial(structure.add, task)).ok
    ]
    checked = inputs if example.validate_with_inputs else None
    valid = attempt("validate()", lambda: structure.validate(checked)).ok
    for tag in example.tags:
        attempt(f"get_node({tag!r})", partial(structure.get_node, tag))
    planned = attempt("plan()", lambda: structure.plan(inputs))
    if planned.ok:
        attempt("plan.to_mermaid()", planned.value.to_mermaid)
    attempt("prompts()", lambda: structure.prompts(inputs, example.variables))
    if not valid or not added:
        return
    runner = structure
    if example.provider == "none":
        runner = RunStructure(config, provider=providers("fast+smart"))
        for task in added:
            if not attempt(f"add({task.__name__}) for run()", partial(runner.add, task)).ok:
                return
    ran = attempt("run()", lambda: runner.run(inputs, example.variables))
    if ran.ok:
        for task in added:
            attempt(f"result[{task.__name__}]", partial(ran.value.__getitem__, task))


def seeded(test: Callable[..., None]) -> Callable[..., None]:
    """Seed Hypothesis from `LANGTREE_FUZZ_SEED` when it is set."""
    return seed(int(SEED))(test) if SEED is not None else test


@seeded
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=SEED is None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(examples())
def test_random_trees_raise_nothing_but_langtree_errors(example: Example) -> None:
    note(f"generated module {example.module_name}:\n{example.source}")
    note(f"calls:\n{example.calls()}")
    module = load(example)
    try:
        exercise(example, module)
    finally:
        sys.modules.pop(example.module_name, None)
