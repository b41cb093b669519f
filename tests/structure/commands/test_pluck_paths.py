"""Pluck paths checked against the classes by ``validate()`` (docs/dsl.md, "Pluck paths").

A pluck reads a field of every element of a list of nodes. Each case puts one command on
one field of ``TaskCatalog`` (or in its docstring) and pins every diagnostic: the field,
the line and column of the marker, the message and the hint.
"""

from pathlib import Path
from typing import Any

import pytest
from pydantic import Field, create_model

from langtree import RunStructure, StructureError, TreeNode
from tests.structure.validated import diagnostics


class Tag(TreeNode):
    label: str = ""


class Item(TreeNode):
    id: int = 0
    name: str | None = None
    tags: list[Tag] = Field(default=[])
    words: list[str] = Field(default=[])
    owner: Tag = Tag()


class Shelf(TreeNode):
    title: str = ""
    items: list[Item] = Field(default=[])
    grid: list[list[Item]] = Field(default=[])


class TaskDigest(TreeNode):
    ids: list[int] = Field(default=[])
    maybe_ids: list[int | None] = Field(default=[])
    names: list[str] = Field(default=[])
    labels: list[list[str]] = Field(default=[])
    id_grid: list[list[int]] = Field(default=[])
    shelf_ids: list[list[int]] = Field(default=[])
    one_id: int = 0
    text: str = ""
    # Generated, so that what prompt and outputs targets send reaches a step's prompt.
    digest: str = Field(description="The digest.")


CATALOG_FIELDS: dict[str, tuple[Any, Any]] = {
    "items": (list[Item], []),
    "maybe_items": (list[Item | None], []),
    "shelves": (list[Shelf], []),
    "shelf": (Shelf, Shelf()),
    "grid": (list[list[Item]], []),
    "title": (str, ""),
    "words": (list[str], []),
}


def catalog(field: str | None, command: str) -> type[TreeNode]:
    """``TaskCatalog`` with ``command`` in ``field``'s description (``None``: the docstring)."""
    definitions: dict[str, Any] = {
        name: (annotation, Field(default=default, description=command if name == field else None))
        for name, (annotation, default) in CATALOG_FIELDS.items()
    }
    doc = command if field is None else "A catalog."
    return create_model("TaskCatalog", __base__=TreeNode, __doc__=doc, **definitions)


def check(field: str | None, command: str, *expected: tuple[str, str, str]) -> None:
    """Assert the exact diagnostics of ``command`` on ``field``.

    Args:
        expected: (snippet the marker starts at, message, hint) of each error.
    """
    found = [
        (d.severity, d.class_name, d.field_name, d.column, d.message, d.hint)
        for d in diagnostics(catalog(field, command), TaskDigest)
    ]
    assert found == [
        ("error", "TaskCatalog", field, command.index(snippet) + 1, message, hint)
        for snippet, message, hint in expected
    ]


# -- valid pluck paths -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "command"),
    [
        pytest.param("items", "! @all->task.digest@{{value.ids=items.*.id}}", id="all-star"),
        pytest.param("items", "! @all->task.digest@{{value.names=items.**.name}}", id="drop-nulls"),
        pytest.param("items", "! @all->task.digest@{{value.names=items.***.name}}", id="strict"),
        pytest.param(None, "! @all->task.digest@{{value.ids=items.*.id}}", id="docstring"),
        pytest.param(
            "items", "! @all->task.digest@{{value.names=items.*.owner.label}}", id="through-node"
        ),
        pytest.param(
            "items",
            "! @all->task.digest@{{value.labels=items.*.tags.*.label}}",
            id="nested-pluck-nests",
        ),
        pytest.param(
            "items", "! @all->task.digest@{{value.labels=items.*.words}}", id="list-field"
        ),
        pytest.param(
            "shelves",
            "! @each[shelves]->task.digest"
            "@{{value.names=shelves.title, prompt.ids=shelves.items.*.id}}*",
            id="each-plucks-inside-the-element",
        ),
        pytest.param(
            "shelves",
            "! @all->task.digest@{{value.shelf_ids=shelves.*.items.*.id}}",
            id="all-two-levels",
        ),
        pytest.param("grid", "! @all->task.digest@{{value.id_grid=grid.*.id}}", id="list-of-lists"),
        pytest.param("items", "! @all->task.digest@{{prompt.ids=items.*.id}}", id="prompt-target"),
        pytest.param("items", "! @all->task.digest@{{outputs.ids=items.**.id}}", id="outputs"),
        pytest.param(
            "maybe_items",
            "! @all->task.digest@{{value.maybe_ids=maybe_items.*.id}}",
            id="optional-elements-into-optional-target",
        ),
        pytest.param(
            "maybe_items",
            "! @all->task.digest@{{value.ids=maybe_items.**.id}}",
            id="optional-elements-dropped",
        ),
    ],
)
def test_valid_pluck_paths(field: str | None, command: str) -> None:
    assert diagnostics(catalog(field, command), TaskDigest) == ()


# -- invalid pluck paths ---------------------------------------------------------------------

PERMISSIVE_HINT = (
    "change the field types, or allow the conversion with"
    " RunStructure({'validation_strategy': 'permissive'})"
)
ITEM_FIELDS = "'id', 'name', 'tags', 'words', 'owner'"


@pytest.mark.parametrize(
    ("field", "command", "snippet", "message", "hint"),
    [
        pytest.param(
            "title",
            "! @all->task.digest@{{value.ids=title.*.id}}",
            "value.ids",
            "Cannot pluck from 'title' in 'title.*.id': it is 'str', not a list",
            "pluck from a list of nodes, e.g. 'items.*.id' where 'items' is a list",
            id="not-a-list",
        ),
        pytest.param(
            "shelf",
            "! @all->task.digest@{{value.names=shelf.*.title}}",
            "value.names",
            "Cannot pluck from 'shelf' in 'shelf.*.title': it is 'Shelf', not a list",
            "'shelf' holds one node: write 'shelf.title' to read its field",
            id="single-node",
        ),
        pytest.param(
            "words",
            "! @all->task.digest@{{value.ids=words.*.id}}",
            "value.ids",
            "Cannot pluck 'id' from the elements of 'words' in 'words.*.id': they are 'str' "
            "values, not nodes",
            "pluck from a list of nodes, or send the list itself: 'words'",
            id="list-of-values",
        ),
        pytest.param(
            "items",
            "! @all->task.digest@{{value.ids=items.*.idd}}",
            "value.ids",
            "Cannot pluck 'idd' from the elements of 'items' in 'items.*.idd': 'Item' has no "
            "field 'idd'",
            f"did you mean 'id'? Its fields are {ITEM_FIELDS}",
            id="unknown-field-close-match",
        ),
        pytest.param(
            "items",
            "! @all->task.digest@{{value.ids=items.*.nothing.id}}",
            "value.ids",
            "Cannot pluck 'nothing' from the elements of 'items' in 'items.*.nothing.id': "
            "'Item' has no field 'nothing'",
            f"its fields are {ITEM_FIELDS}",
            id="unknown-field",
        ),
        pytest.param(
            "items",
            "! @all->task.digest@{{value.labels=items.*.tags.*.lable}}",
            "value.labels",
            "Cannot pluck 'lable' from the elements of 'items.*.tags' in "
            "'items.*.tags.*.lable': 'Tag' has no field 'lable'",
            "did you mean 'label'? Its fields are 'label'",
            id="unknown-field-in-nested-pluck",
        ),
        pytest.param(
            "items",
            "! @all->task.digest@{{value.labels=items.*.tags.label}}",
            "value.labels",
            "Source 'items.*.tags.label' crosses the list 'tags' without a pluck",
            "mark every list a pluck path crosses, e.g. 'items.*.tags.*.label'",
            id="unmarked-list",
        ),
        pytest.param(
            "shelves",
            "! @each[shelves]->task.digest@{{value.names=shelves.*.title}}*",
            "value.names",
            "Cannot pluck from 'shelves' in 'shelves.*.title': this @each iterates over it, "
            "so each iteration sees one element",
            "write 'shelves.title' to send each element's 'title', or pluck from a list "
            "inside the element",
            id="iterated-list",
        ),
        pytest.param(
            "items",
            "! @all->task.digest@{{value.ids=words.*.id}}",
            "value.ids",
            "@all sends only the field that holds it: the source 'words' is not 'items'",
            "write 'value.ids=items' or 'value.ids=*', or move the command into the "
            "description of 'words'",
            id="all-plucks-its-own-field",
        ),
        pytest.param(
            None,
            "! @all->task.digest@{{value.ids=shelf.items.*.id}}",
            "value.ids",
            "@all in a docstring sends one field or the whole node, not 'shelf.items'",
            "write a field of 'TaskCatalog' or '*'",
            id="all-docstring-plucks-one-field",
        ),
        pytest.param(
            "items",
            "! @all->task.digest@{{value.names=items.*.name}}",
            "value.names",
            "Type incompatibility in variable mapping from task.catalog.items.*.name "
            "(list[str | None]) to task.digest.names (list[str]): lossy conversion not "
            "allowed by strict strategy",
            "'.*.' sends None for a missing value: use '.**.' to leave such values out, or "
            "'.***.' to require every value",
            id="star-keeps-none",
        ),
        pytest.param(
            "maybe_items",
            "! @all->task.digest@{{value.ids=maybe_items.*.id}}",
            "value.ids",
            "Type incompatibility in variable mapping from task.catalog.maybe_items.*.id "
            "(list[int | None]) to task.digest.ids (list[int]): lossy conversion not allowed "
            "by strict strategy",
            "'.*.' sends None for a missing value: use '.**.' to leave such values out, or "
            "'.***.' to require every value",
            id="optional-elements",
        ),
        pytest.param(
            "items",
            "! @all->task.digest@{{value.ids=items.**.name}}",
            "value.ids",
            "Type incompatibility in variable mapping from task.catalog.items.**.name "
            "(list[str]) to task.digest.ids (list[int]): lossy conversion not allowed by "
            "strict strategy",
            PERMISSIVE_HINT,
            id="element-type",
        ),
        pytest.param(
            "items",
            "! @all->task.digest@{{value.one_id=items.***.id}}",
            "value.one_id",
            "Type incompatibility in variable mapping from task.catalog.items.***.id "
            "(list[int]) to task.digest.one_id (int): forbidden conversion not allowed by "
            "strict strategy",
            "change the field types: list[int] cannot be converted to int (see "
            "langtree.structure.types._compatibility)",
            id="list-into-a-scalar",
        ),
        pytest.param(
            "items",
            "! @all->task.digest@{{value.ids=items.*.tags.*.label}}",
            "value.ids",
            "Type incompatibility in variable mapping from task.catalog.items.*.tags.*.label "
            "(list[list[str]]) to task.digest.ids (list[int]): forbidden conversion not "
            "allowed by strict strategy",
            "change the field types: list[list[str]] cannot be converted to list[int] (see "
            "langtree.structure.types._compatibility)",
            id="nested-plucks-nest",
        ),
    ],
)
def test_invalid_pluck_paths(
    field: str | None, command: str, snippet: str, message: str, hint: str
) -> None:
    check(field, command, (snippet, message, hint))


def test_every_wrong_pluck_of_a_command_is_reported() -> None:
    command = "! @all->task.digest@{{value.ids=items.*.idd, value.names=items.*.tags.label}}"

    check(
        "items",
        command,
        (
            "value.ids",
            "Cannot pluck 'idd' from the elements of 'items' in 'items.*.idd': 'Item' has no "
            "field 'idd'",
            f"did you mean 'id'? Its fields are {ITEM_FIELDS}",
        ),
        (
            "value.names",
            "Source 'items.*.tags.label' crosses the list 'tags' without a pluck",
            "mark every list a pluck path crosses, e.g. 'items.*.tags.*.label'",
        ),
    )


def test_pluck_operators_are_not_one_character_components() -> None:
    """The warning about one-character path components skips the operators."""
    assert (
        diagnostics(catalog("items", "! @all->task.digest@{{value.ids=items.*.id}}"), TaskDigest)
        == ()
    )


class TaskShop(TreeNode):
    """A shop."""

    items: list[Item] = Field(
        default=[],
        description="! @all->task.digest@{{value.ids=items.*.price}}",
    )


def test_pluck_error_renders_with_file_line_and_marker() -> None:
    structure = RunStructure()
    structure.add(TaskShop)
    structure.add(TaskDigest)

    with pytest.raises(StructureError) as caught:
        structure.validate()

    line = next(
        number
        for number, text in enumerate(Path(__file__).read_text().splitlines(), 1)
        if "items.*.price" in text and "description" in text
    )
    assert str(caught.value) == (
        "LangTree found 1 problem:\n\n"
        "error: Cannot pluck 'price' from the elements of 'items' in 'items.*.price': "
        "'Item' has no field 'price'\n"
        '            description="! @all->task.digest@{{value.ids=items.*.price}}",\n'
        "                                               ^~~~~~~~~~~~~~~~~~~~~~~\n"
        f"  in TaskShop.items ({__file__}:{line})\n"
        f"  hint: its fields are {ITEM_FIELDS}"
    )


def test_plucked_sources_are_read_by_the_mapping() -> None:
    """A pluck reads the list and the plucked field: the plan waits for the step that
    generates the list before it carries out the command."""

    class Generated(TreeNode):
        code: str = Field(description="A code.")

    class TaskMaker(TreeNode):
        """Make things."""

        things: list[Generated] = Field(
            description="! @all->task.codes@{{value.codes=things.***.code}}"
        )

    class TaskCodes(TreeNode):
        codes: list[str] = Field(default=[])
        verdict: str = Field(description="What the codes have in common.")

    structure = RunStructure()
    structure.add(TaskMaker)
    structure.add(TaskCodes)
    steps = structure.plan().steps

    assert [(step.id, step.depends_on) for step in steps] == [
        ("task.maker:things", ()),
        ("task.codes:verdict", ("task.maker:things",)),
    ]


class Summarised(TreeNode):
    text: str = Field(description="The text.")
    summary: str = Field(description="Its summary.")


class TaskPile(TreeNode):
    """A pile of documents, given, and notes, generated whole.

    ! @all->task.review@{{value.summaries=docs.**.summary, value.notes=notes.**.summary}}
    ! @all->task.review@{{value.texts=docs.*.summary}}
    """

    docs: list[Summarised] = Field(default=[], description="The documents.")
    notes: list[Summarised] = Field(description="Two notes.")


class TaskReview(TreeNode):
    summaries: list[str] = Field(default=[])
    notes: list[str] = Field(default=[])
    texts: list[str] = Field(default=[])
    review: str = Field(description="The review.")


class TaskLenient(TreeNode):
    """! @all->task.review@{{value.summaries=docs.**.summary, value.notes=notes.**.summary}}"""

    docs: list[Summarised] = Field(default=[], description="The documents.")
    notes: list[Summarised] = Field(description="Two notes.")


@pytest.mark.parametrize(
    ("task", "partial"),
    [
        pytest.param(TaskLenient, ("task.lenient.docs:summary",), id="double-star-only"),
        pytest.param(TaskPile, (), id="also-a-star"),
    ],
)
def test_a_double_star_pluck_reads_the_instances_of_its_elements_partially(
    task: type[TreeNode], partial: tuple[str, ...]
) -> None:
    """A '.**.' pluck leaves out what a failed element never produced: its reader needs
    the elements' steps, not each of their instances; it needs the step that generates
    the list whole, and every instance read through '.*.' too."""
    structure = RunStructure()
    structure.add(task)
    structure.add(TaskReview)

    review = structure.plan({task: {"docs": [{"text": "a"}]}}).step("task.review:review")

    tag = task.__name__.removeprefix("Task").lower()
    assert review.depends_on == (f"task.{tag}.docs:summary", f"task.{tag}:notes")
    assert review.partial_reads == partial
