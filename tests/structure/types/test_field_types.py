"""Field types end to end: bare iterables, forward references, recursive types, containers
of nodes and defaults, from ``validate()`` through ``plan()``, ``prompts()`` and a run
with ``FakeChatModel`` (docs/structure.md, "The node tree" and "Where the specification is
silent or contradicts itself"; the spec's "Field Type Detection").

A structure that does not validate raises the same ``StructureError`` from every one of
them, and no model is called.
"""

import typing
from collections.abc import Mapping, MutableSequence, Sequence
from pathlib import Path
from typing import Any, Optional

import pytest
from pydantic import BaseModel, ConfigDict, Field, create_model

from langtree import LLMProvider, RunStructure, StructureError, TreeNode
from langtree.errors import Diagnostic
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest
from tests.structure.validated import diagnostics

SOURCE_LINES = Path(__file__).read_text().splitlines()


def line_of(snippet: str) -> int:
    """The first 1-based line of this file that holds ``snippet``."""
    return next(number for number, line in enumerate(SOURCE_LINES, 1) if snippet in line)


def structure_of(*tasks: type[TreeNode], model: FakeChatModel | None = None) -> RunStructure:
    structure = RunStructure(provider=LLMProvider({"fake": model or FakeChatModel()}))
    for task in tasks:
        structure.add(task)
    return structure


def refused_everywhere(
    structure: RunStructure, model: FakeChatModel, inputs: Mapping[object, object]
) -> tuple[Diagnostic, ...]:
    """The diagnostics ``validate()`` raises, checked to be what ``plan()``, ``prompts()``
    and ``run()`` raise too, before any model call."""
    with pytest.raises(StructureError) as caught:
        structure.validate()
    for stage in (structure.plan, structure.prompts, structure.run):
        with pytest.raises(StructureError) as again:
            stage(inputs)
        assert again.value.diagnostics == caught.value.diagnostics, stage.__name__
    assert model.calls == []
    return caught.value.diagnostics


def error_at(class_name: str, field_name: str, snippet: str, message: str, hint: str) -> Diagnostic:
    """An error on a field of a class defined in this file, at the line holding ``snippet``."""
    return Diagnostic(
        severity="error",
        message=message,
        hint=hint,
        class_name=class_name,
        field_name=field_name,
        file=__file__,
        line=line_of(snippet),
    )


def last_human_text(request: FakeRequest) -> str:
    return str(request.messages[-1].content)


NOTES_LINE = 'Digest the notes: [\n  "alpha",\n  "beta"\n]'


# -- bare iterables (spec: "Supported: List[...], list, tuple, other sequence types") ---------


class TaskDigest(TreeNode):
    """Digest the notes: {note}"""

    seen: list = Field(default=[])
    digest: str = Field(description="One paragraph.")


def notes_task(annotation: object) -> type[TreeNode]:
    """``TaskNotes`` whose ``notes`` field has the annotation and sends each note on."""
    command = "! @each[notes]->task.digest@{{value.seen=notes, prompt.note=notes}}*"
    notes = (annotation, Field(default=[], description=command))
    return create_model("TaskNotes", __base__=TreeNode, __doc__="Read the notes.", notes=notes)


SEQUENCES = [
    pytest.param(list, id="list"),
    pytest.param(tuple, id="tuple"),
    pytest.param(typing.List, id="typing-List"),  # noqa: UP006
    pytest.param(typing.Tuple, id="typing-Tuple"),  # noqa: UP006
    pytest.param(Sequence, id="Sequence"),
    pytest.param(MutableSequence, id="MutableSequence"),
    pytest.param(list[str], id="list-of-str"),
    pytest.param(tuple[str, ...], id="tuple-of-str"),
    pytest.param(Sequence[str], id="Sequence-of-str"),
    pytest.param(Optional[list], id="optional-list"),  # noqa: UP045
]


@pytest.mark.parametrize("annotation", SEQUENCES)
def test_each_iterates_every_sequence_the_spec_lists(annotation: object) -> None:
    task = notes_task(annotation)
    model = FakeChatModel()
    structure = structure_of(task, TaskDigest, model=model)
    inputs = {task: task(notes=["alpha", "beta"])}

    assert structure.validate() == ()
    assert [step.id for step in structure.plan(inputs).steps] == ["task.digest:digest"]
    (prompt,) = structure.prompts(inputs)
    assert NOTES_LINE in str(prompt.messages[-1].content)
    result = structure.run(inputs)
    assert result[TaskDigest] == TaskDigest(seen=["alpha", "beta"], digest="digest 1")
    (call,) = model.calls
    assert NOTES_LINE in last_human_text(call)


def test_the_elements_of_a_bare_list_arrive_unchanged() -> None:
    task = notes_task(list)
    notes = ["alpha", 2, {"key": "value"}, None]
    structure = structure_of(task, TaskDigest)

    result = structure.run({task: {"notes": notes}})

    assert result[TaskDigest].seen == notes


class TaskTypedDigest(TreeNode):
    seen: list[str] = Field(default=[])
    digest: str = Field(description="One paragraph.")


class TaskBareNotes(TreeNode):
    notes: list = Field(
        default=[], description="! @each[notes]->task.typed_digest@{{value.seen=notes}}*"
    )


def test_the_elements_of_a_bare_list_are_any_for_type_checks() -> None:
    model = FakeChatModel()
    structure = structure_of(TaskBareNotes, TaskTypedDigest, model=model)

    diagnostics = refused_everywhere(structure, model, {TaskBareNotes: {"notes": ["alpha"]}})

    snippet = 'description="! @each[notes]->task.typed_digest@{{value.seen=notes}}'
    assert [(d.message, d.hint, d.line) for d in diagnostics] == [
        (
            "Type incompatibility in variable mapping from task.bare_notes.notes[*] (Any) to "
            "task.typed_digest.seen[*] (str): unsafe conversion not allowed by strict strategy",
            "change the field types, or allow the conversion with "
            "RunStructure({'validation_strategy': 'development'})",
            line_of(snippet),
        )
    ]


class TaskTags(TreeNode):
    tags: set[str] = Field(
        default=set(), description="! @each[tags]->task.digest@{{prompt.note=tags}}*"
    )


def test_each_does_not_iterate_a_set() -> None:
    model = FakeChatModel()
    structure = structure_of(TaskTags, TaskDigest, model=model)

    diagnostics = refused_everywhere(structure, model, {TaskTags: {"tags": ["a", "b"]}})

    assert [(d.field_name, d.message, d.hint) for d in diagnostics] == [
        (
            "tags",
            "Inclusion path 'tags' has nothing to iterate: 'tags' is a set, which has no order",
            "declare 'tags' as a list (or a tuple) to iterate it with @each",
        )
    ]


class Chapter(TreeNode):
    title: str = Field(description="The chapter's title.")
    summary: str = Field(description="Two sentences.")


class TaskTitles(TreeNode):
    titles: list[str] = Field(default=[])
    verdict: str = Field(description="Which title is best.")


@pytest.mark.parametrize(
    "annotation",
    [
        pytest.param(tuple[Chapter, ...], id="tuple"),
        pytest.param(Sequence[Chapter], id="Sequence"),
    ],
)
def test_each_iterates_other_sequences_of_nodes(annotation: object) -> None:
    command = "! @each[chapters]->task.titles@{{value.titles=chapters.title}}*"
    chapters = (annotation, Field(default=(), description=command))
    task = create_model("TaskBook", __base__=TreeNode, chapters=chapters)
    model = FakeChatModel()
    structure = structure_of(task, TaskTitles, model=model)
    inputs = {task: {"chapters": [{"title": "One"}, {"title": "Two"}]}}

    assert structure.validate() == ()
    assert [step.id for step in structure.plan(inputs).steps] == [
        "task.book.chapters:summary",
        "task.titles:verdict",
    ]
    assert len(structure.prompts(inputs)) == 3
    result = structure.run(inputs)
    assert result[TaskTitles].titles == ["One", "Two"]
    assert [chapter.summary for chapter in result[task].chapters] == ["summary 1", "summary 1"]
    assert len(model.calls) == 3


# -- forward references -----------------------------------------------------------------------


class TaskSink(TreeNode):
    got: list[str] = Field(default=[])
    summary: str = Field(description="A summary.")


class TaskLater(TreeNode):
    """List the items."""

    items: list["Later"] = Field(description="! @each[items]->task.sink@{{value.got=items.text}}*")


class Later(TreeNode):
    """An item, defined after the task that uses it."""

    text: str = Field(description="The item's text.")


def test_a_forward_reference_defined_later_in_the_module_is_read() -> None:
    model = FakeChatModel()
    structure = structure_of(TaskLater, TaskSink, model=model)

    assert structure.validate() == ()
    assert structure.get_node("task.later.items") is not None
    assert [step.id for step in structure.plan().steps] == ["task.later:items", "task.sink:summary"]
    assert [prompt.step_id for prompt in structure.prompts()] == [
        "task.later:items",
        "task.sink:summary",
    ]
    result = structure.run()
    assert result[TaskLater].items == [Later(text="text 1"), Later(text="text 2")]
    assert result[TaskSink].got == ["text 1", "text 2"]


class Meta(BaseModel):
    origin: "Elsewhere"  # noqa: F821 - not defined on purpose


class TaskMissing(TreeNode):
    """Go."""

    items: list["Nowhere"] = Field(  # noqa: F821 - not defined on purpose
        default=[], description="! @each[items]->task.sink@{{value.got=items.label}}*"
    )
    pair: "tuple[Gone, Lost] | None" = None  # noqa: F821 - not defined on purpose
    meta: Meta | None = None
    fine: str = Field(description="A field that resolves.")


def define_hint(names: str, owner: str, pronoun: str = "it") -> str:
    return (
        f"define or import {names} where {owner!r} is defined, before adding the task; or call "
        f"{owner}.model_rebuild() after defining {pronoun}"
    )


def test_a_forward_reference_that_does_not_resolve_is_an_error_at_its_field() -> None:
    model = FakeChatModel()
    structure = structure_of(TaskMissing, TaskSink, model=model)

    diagnostics = refused_everywhere(structure, model, {TaskMissing: {"items": [], "fine": "x"}})

    assert diagnostics == (
        error_at(
            "TaskMissing",
            "items",
            "value.got=items.label",
            "Field 'items' of 'TaskMissing' refers to 'Nowhere', which is not defined",
            define_hint("'Nowhere'", "TaskMissing"),
        ),
        error_at(
            "TaskMissing",
            "pair",
            'pair: "tuple[Gone, Lost] | None"',
            "Field 'pair' of 'TaskMissing' refers to 'Gone' and 'Lost', which are not defined",
            define_hint("'Gone' and 'Lost'", "TaskMissing", "them"),
        ),
        error_at(
            "TaskMissing",
            "meta",
            "meta: Meta | None = None",
            "Field 'meta' of 'TaskMissing' refers to 'Elsewhere' (in Meta.origin), which is not "
            "defined",
            define_hint("'Elsewhere'", "Meta"),
        ),
    )


def test_a_forward_reference_to_a_class_defined_later_in_a_function() -> None:
    class TaskLocal(TreeNode):
        entries: list["LocalEntry"] = Field(description="The entries.")

    class LocalEntry(TreeNode):
        text: str = Field(description="An entry.")

    model = FakeChatModel()
    diagnostics = refused_everywhere(structure_of(TaskLocal, model=model), model, {})
    assert [(d.message, d.hint) for d in diagnostics] == [
        (
            "Field 'entries' of 'TaskLocal' refers to 'LocalEntry', which is not defined",
            define_hint("'LocalEntry'", "TaskLocal"),
        )
    ]

    TaskLocal.model_rebuild()
    result = structure_of(TaskLocal).run()
    assert result[TaskLocal].entries == [LocalEntry(text="text 1"), LocalEntry(text="text 2")]


Alias = "Undefined"  # a type alias written as a string, naming nothing


class TaskAliased(TreeNode):
    """Aliased."""

    value: "Optional[Alias]" = None  # noqa: UP045 - "Alias | None" would fail: Alias is a str


def test_an_undefined_name_behind_an_alias_is_reported_on_the_class() -> None:
    model = FakeChatModel()

    assert refused_everywhere(structure_of(TaskAliased, model=model), model, {}) == (
        Diagnostic(
            severity="error",
            message="'TaskAliased' refers to 'Undefined', which is not defined",
            hint=define_hint("'Undefined'", "TaskAliased"),
            class_name="TaskAliased",
            file=__file__,
            line=line_of('"""Aliased."""'),
        ),
    )


# -- recursive types: generated or supplied whole ----------------------------------------------


class Part(TreeNode):
    """A part of an outline."""

    title: str = Field(description="The part's title.")
    parts: list["Part"] = Field(description="Its sub-parts, as deep as needed.")


class TaskOutline(TreeNode):
    """Outline a talk."""

    root: Part = Field(description="The outline.")


NESTED = {"title": "Talk", "parts": [{"title": "Intro", "parts": [{"title": "Hook", "parts": []}]}]}


def test_a_recursive_type_is_generated_whole() -> None:
    model = FakeChatModel(responder=lambda request: {"root": NESTED})
    structure = structure_of(TaskOutline, model=model)

    assert structure.validate() == ()
    assert [step.id for step in structure.plan().steps] == ["task.outline:root"]
    (prompt,) = structure.prompts()
    assert prompt.fields == ("root",)
    result = structure.run()
    assert result[TaskOutline].root == Part.model_validate(NESTED)
    (call,) = model.calls
    assert call.schema is not None


def test_the_fake_model_answers_a_recursive_schema() -> None:
    result = structure_of(TaskOutline).run()

    assert result[TaskOutline].root == Part(title="title 1", parts=[])


def test_a_known_node_whose_field_is_recursive_generates_that_field_whole() -> None:
    model = FakeChatModel(responder=lambda request: {"parts": NESTED["parts"]})
    structure = structure_of(TaskOutline, model=model)
    inputs = {TaskOutline: {"root": {"title": "Talk"}}}

    assert [step.id for step in structure.plan(inputs).steps] == ["task.outline.root:parts"]
    result = structure.run(inputs)
    assert result[TaskOutline].root == Part.model_validate(NESTED)
    assert [call.fields for call in model.calls] == [("parts",)]


def test_a_recursive_value_is_supplied_whole() -> None:
    inputs = {TaskOutline: {"root": {"title": "Talk", "parts": [{"title": "Intro"}]}}}
    structure = structure_of(TaskOutline)

    with pytest.raises(StructureError) as caught:
        structure.plan(inputs)

    assert [(d.message, d.hint) for d in caught.value.diagnostics] == [
        (
            "Input task.outline.root.parts = [{'title': 'Intro'}] does not fit the field "
            "(list[Part]): Field required",
            "pass a value of type list[Part]",
        )
    ]


class Branch(TreeNode):
    name: str = Field(description="The branch's name.")
    branches: list["Branch"] = Field(
        default=[], description="! @each[branches]->task.sink@{{value.got=branches.name}}*"
    )


class TaskTree(TreeNode):
    trunk: Branch = Field(
        description="! @each[trunk.branches]->task.sink@{{value.got=trunk.branches.name}}*"
    )


def test_a_path_cannot_go_through_a_recursive_field() -> None:
    model = FakeChatModel()
    structure = structure_of(TaskTree, TaskSink, model=model)

    diagnostics = refused_everywhere(structure, model, {})

    through = (
        "has a recursive type (Branch.branches → Branch), so its value is generated or "
        "supplied whole: 'name' cannot be reached through it"
    )
    hint = "use the whole field ('branches'), or give the nested level a class of its own"
    assert [(d.class_name, d.message, d.hint) for d in diagnostics] == [
        ("Branch", f"Path 'branches.name' does not resolve: Field 'branches' {through}", hint),
        (
            "TaskTree",
            f"Path 'trunk.branches.name' does not resolve: Field 'branches' {through}",
            hint,
        ),
    ]


# -- containers of nodes ------------------------------------------------------------------------


class Entry(TreeNode):
    """An entry of the index."""

    text: str = Field(description="The entry's text.")


@pytest.mark.parametrize(
    ("annotation", "message", "hint"),
    [
        pytest.param(
            set[Entry],
            "the type 'set[Entry]' holds nodes in a set, which has no order and needs hashable "
            "elements",
            "declare the field as a list, e.g. list[Entry]",
            id="set",
        ),
        pytest.param(
            frozenset[Entry],
            "the type 'frozenset[Entry]' holds nodes in a set, which has no order and needs "
            "hashable elements",
            "declare the field as a list, e.g. list[Entry]",
            id="frozenset",
        ),
        pytest.param(
            dict[Entry, int],
            "the type 'dict[Entry, int]' uses nodes as dict keys, which must be hashable",
            "key the dict by a str (or another hashable type), or use a list of nodes",
            id="dict-keys",
        ),
    ],
)
def test_a_container_that_cannot_hold_nodes_is_an_error_before_any_call(
    annotation: object, message: str, hint: str
) -> None:
    task = create_model(
        "TaskIndex", __base__=TreeNode, entries=(annotation, Field(description="The entries."))
    )
    model = FakeChatModel()

    diagnostics = refused_everywhere(structure_of(task, model=model), model, {})

    assert [(d.message, d.hint) for d in diagnostics] == [
        (f"Field 'entries' of 'TaskIndex' cannot be part of the tree: {message}", hint)
    ]


class TaskIndex(TreeNode):
    """Index the book."""

    by_letter: dict[str, Entry] = Field(description="One entry per letter.")


def test_a_dict_of_nodes_is_a_leaf_generated_whole() -> None:
    model = FakeChatModel()
    structure = structure_of(TaskIndex, model=model)

    assert structure.validate() == ()
    assert [n.tag for n in structure.nodes] == ["task.index"]
    assert [step.id for step in structure.plan().steps] == ["task.index:by_letter"]
    result = structure.run()
    assert result[TaskIndex].by_letter == {"key 1": Entry(text="text 1")}


# -- defaults -----------------------------------------------------------------------------------


class Section(TreeNode):
    title: str = Field(description="The section's title.")
    summary: str = Field(description="Two sentences.")


def default_of(annotation: object, field: Any) -> tuple[Diagnostic, ...]:
    """The diagnostics of ``TaskDefaults`` whose field ``value`` has this default."""
    task = create_model(
        "TaskDefaults",
        __base__=TreeNode,
        value=(annotation, field),
        text=(str, Field(description="Generated.")),
    )
    model = FakeChatModel()
    return refused_everywhere(structure_of(task, model=model), model, {})


@pytest.mark.parametrize(
    ("annotation", "field", "message", "type_name"),
    [
        pytest.param(
            int,
            Field(default="many"),
            "The default of field 'value' of 'TaskDefaults', 'many', does not fit its type "
            "(int): Input should be a valid integer, unable to parse string as an integer",
            "int",
            id="wrong-type",
        ),
        pytest.param(
            list[str],
            Field(default_factory=lambda: ["a", 1]),
            "The default_factory of field 'value' of 'TaskDefaults' returns ['a', 1], which does "
            "not fit its type (list[str]): [1]: Input should be a valid string",
            "list[str]",
            id="factory",
        ),
        pytest.param(
            int,
            Field(default_factory=lambda: None),
            "The default_factory of field 'value' of 'TaskDefaults' returns None, which does not "
            "fit its type (int): Input should be a valid integer",
            "int",
            id="factory-none",
        ),
        pytest.param(
            float,
            Field(default=2.5, le=1.0),
            "The default of field 'value' of 'TaskDefaults', 2.5, does not fit its type (float): "
            "Input should be less than or equal to 1",
            "float",
            id="constraint",
        ),
        pytest.param(
            list[str],
            Field(default=[], min_length=1),
            "The default of field 'value' of 'TaskDefaults', [], does not fit its type "
            "(list[str]): List should have at least 1 item after validation, not 0",
            "list[str]",
            id="empty-list-constraint",
        ),
        pytest.param(
            Section,
            Field(default={"title": 5}),
            "The default of field 'value' of 'TaskDefaults', {'title': 5}, does not fit its type "
            "(Section): title: Input should be a valid string",
            "Section",
            id="node-leaf",
        ),
        pytest.param(
            list[Section],
            Field(default=[Entry(text="x")]),
            "The default of field 'value' of 'TaskDefaults', [Entry(text='x')], does not fit its "
            "type (list[Section]): [0]: Input should be a valid dictionary or instance of Section",
            "list[Section]",
            id="other-node-class",
        ),
        pytest.param(
            dict[str, Entry],
            Field(default={"a": {}}),
            "The default of field 'value' of 'TaskDefaults', {'a': {}}, does not fit its type "
            "(dict[str, Entry]): a.text: Field required",
            "dict[str, Entry]",
            id="dict-of-nodes-whole",
        ),
    ],
)
def test_a_default_that_does_not_fit_its_type_is_an_error_before_any_call(
    annotation: object, field: Any, message: str, type_name: str
) -> None:
    assert [(d.field_name, d.message, d.hint) for d in default_of(annotation, field)] == [
        (
            "value",
            message,
            f"give the field a default of type {type_name}, or none to have it generated",
        )
    ]


def _no_default() -> int:
    raise LookupError("no default configured")


def test_a_default_factory_that_raises_is_an_error_before_any_call() -> None:
    assert [
        (d.field_name, d.message, d.hint)
        for d in default_of(int, Field(default_factory=_no_default))
    ] == [
        (
            "value",
            "The default_factory of field 'value' of 'TaskDefaults' raised LookupError: no "
            "default configured",
            "make it return a value of type int when called without arguments, or remove it "
            "to have the field generated",
        )
    ]


class TaskPartialDefaults(TreeNode):
    section: Section = Field(default={"title": "Intro"})
    sections: list[Section] = Field(default=[Section.model_construct(title="One")])
    count: int = Field(default="3")
    label: str | None = None
    note: str = ""


def test_defaults_that_fit_pass_and_node_defaults_may_be_partial() -> None:
    model = FakeChatModel()
    structure = structure_of(TaskPartialDefaults, model=model)

    assert structure.validate() == ()
    result = structure.run()
    assert result[TaskPartialDefaults] == TaskPartialDefaults(
        section=Section(title="Intro", summary="summary 1"),
        sections=[Section(title="One", summary="summary 1")],
        count=3,
        label="label 1",
    )
    assert sorted((call.node_path, call.fields) for call in model.calls) == [
        ("task.partial_defaults", ("label",)),
        ("task.partial_defaults.section", ("summary",)),
        ("task.partial_defaults.sections[0]", ("summary",)),
    ]


class TaskCount(TreeNode):
    """Count."""

    count: int = Field(default="many")
    text: str = Field(description="Generated.")


def test_a_wrong_default_is_not_blamed_on_the_model() -> None:
    model = FakeChatModel()
    structure = structure_of(TaskCount, model=model)

    assert refused_everywhere(structure, model, {}) == (
        error_at(
            "TaskCount",
            "count",
            'count: int = Field(default="many")',
            "The default of field 'count' of 'TaskCount', 'many', does not fit its type (int): "
            "Input should be a valid integer, unable to parse string as an integer",
            "give the field a default of type int, or none to have it generated",
        ),
    )


class Blob:
    """A type pydantic has no schema for."""


class TaskBlob(TreeNode):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    blob: Blob = Field(default_factory=Blob)
    wrong: Blob = Field(default="not a blob")
    text: str = Field(description="Generated.")


def test_defaults_and_inputs_of_arbitrary_types_are_checked_with_isinstance() -> None:
    model = FakeChatModel()
    structure = structure_of(TaskBlob, model=model)

    assert [(d.field_name, d.message) for d in refused_everywhere(structure, model, {})] == [
        (
            "wrong",
            "The default of field 'wrong' of 'TaskBlob', 'not a blob', does not fit its type "
            "(Blob): Input should be an instance of Blob",
        )
    ]
    fixed = create_model("TaskBlob", __base__=TaskBlob, wrong=(Blob, Field(default_factory=Blob)))
    result = structure_of(fixed).run({fixed: {"blob": Blob()}})
    assert result[fixed].text == "text 1"


def test_a_lone_surrogate_in_a_description_is_an_error_at_validate() -> None:
    task = create_model(
        "TaskSurrogate",
        __base__=TreeNode,
        text=(str, Field(description="Résumé of the\n« \udfff » text.")),
    )
    (problem,) = diagnostics(task)

    assert (problem.severity, problem.field_name, problem.message, problem.hint) == (
        "error",
        "text",
        "The text holds a lone surrogate ('\\udfff'), which is not Unicode text and cannot be "
        "sent to a model",
        "decode the text with errors='strict' or 'replace', or remove the character",
    )
    assert (problem.source_line, problem.column, problem.length) == ("« \\udfff » text.", 3, 1)


def test_inputs_for_a_field_whose_type_cannot_be_completed_report_the_missing_name() -> None:
    section = create_model("Section", __base__=TreeNode, title=("Missing", None))
    task = create_model(
        "TaskReport", __base__=TreeNode, by_key=(dict[str, section], ...), section=(section, ...)
    )
    structure = RunStructure()
    structure.add(task)

    for check in (structure.validate, structure.plan, structure.prompts):
        with pytest.raises(StructureError) as caught:
            check({task: {"by_key": {}}})
        assert [d.message for d in caught.value.diagnostics] == [
            "Field 'title' of 'Section' refers to 'Missing', which is not defined"
        ]
