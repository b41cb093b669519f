"""Paths, ``@each`` and ``@all`` checked against the tree (docs/structure.md, "Paths" and
"``@each`` and ``@all``"; the spec's "@each Commands", "@all Commands" and "Path Syntax").

Each case puts one command on one field of ``TaskExample`` (or in its docstring) and pins
every diagnostic ``validate()`` reports: the field, the column of the marker in the
command line, the message and the hint. The destination is usually ``TaskAnalyzer``.
"""

from pathlib import Path
from typing import Any

import pytest
from pydantic import Field, create_model

from langtree import RunStructure, StructureError, TreeNode
from langtree.errors import Diagnostic
from tests.structure.validated import refused


class Paragraph(TreeNode):
    text: str = ""
    meta: str = ""


class Section(TreeNode):
    title: str = ""
    summary: str = ""
    paragraphs: list[Paragraph] = Field(default=[])


class Chapter(TreeNode):
    heading: str = ""
    paragraphs: list[Paragraph] = Field(default=[])
    digest: list[str] = Field(default=[])


class Note(TreeNode):
    text: str = ""
    tags: list[str] = Field(default=[])


class TaskAnalyzer(TreeNode):
    title: str = ""
    summary: str = ""
    titles: list[str] = Field(default=[])
    results: list[list[str]] = Field(default=[])
    deep: list[list[list[str]]] = Field(default=[])
    notes: list[Note] = Field(default=[])
    note: Note = Note()


EXAMPLE_FIELDS: dict[str, Any] = {
    "sections": list[Section],
    "chapter": Chapter,
    "notes": list[Note],
    "summary": str,
    "title": str,
    "keywords": list[str],
    "command": str,
}
ANALYZER_FIELDS = "'title', 'summary', 'titles', 'results', 'deep', 'notes', 'note'"
EXAMPLE_FIELD_NAMES = "'sections', 'chapter', 'notes', 'summary', 'title', 'keywords', 'command'"


def example(field: str | None, command: str) -> type[TreeNode]:
    """``TaskExample`` with ``command`` in ``field``'s description (``None``: the docstring)."""
    definitions: dict[str, Any] = {
        name: (annotation, Field(description=command if name == field else None))
        for name, annotation in EXAMPLE_FIELDS.items()
    }
    doc = command if field is None else "Analyse the sections."
    return create_model("TaskExample", __base__=TreeNode, __doc__=doc, **definitions)


Found = tuple[str | None, str | None, int, str, str]


def found(*tasks: type[TreeNode]) -> list[Found]:
    """The errors ``validate()`` raises: (class, field, column, message, hint)."""
    structure = RunStructure()
    for task in tasks:
        structure.add(task)
    try:
        structure.validate()
    except StructureError as error:
        return [
            (d.class_name, d.field_name, d.column, d.message, d.hint) for d in error.diagnostics
        ]
    return []


def problems(*tasks: type[TreeNode]) -> list[tuple[str, str]]:
    """The errors ``validate()`` raises, as (message, hint) pairs."""
    return [(message, hint) for *_, message, hint in found(*tasks)]


def column(command: str, snippet: str) -> int:
    """The 1-based column where ``snippet`` starts in ``command`` (the marker's column)."""
    assert command.count(snippet) >= 1, snippet
    return command.index(snippet) + 1


def check(field: str | None, command: str, *expected: tuple[str, str, str]) -> None:
    """Assert the exact errors of ``command`` on ``field``.

    Args:
        expected: (snippet the marker points at, or ``""`` for the whole line; message; hint).
    """
    task = example(field, command)
    located = [
        ("TaskExample", field, column(command, snippet) if snippet else 1, message, hint)
        for snippet, message, hint in expected
    ]
    assert found(task, TaskAnalyzer) == located


# -- destinations ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "command"),
    [
        pytest.param(
            "sections",
            "! @each[sections]->task.analyzer@{{value.titles=sections.title}}*",
            id="absolute-task",
        ),
        pytest.param(
            "sections",
            "! @each[sections]->task.analyzer.notes@{{value.text=sections.title}}*",
            id="absolute-field-of-a-task",
        ),
        pytest.param(
            "sections",
            "! @each[sections]->notes@{{value.text=sections.title}}*",
            id="relative-field-of-the-node",
        ),
        pytest.param(
            "sections",
            "! @each[sections]->task.example.notes@{{value.text=sections.title}}*",
            id="absolute-field-of-the-own-task",
        ),
        pytest.param(
            "summary", "! @all->title@{{outputs.summary}}*", id="relative-leaf-spec-example"
        ),
        pytest.param("summary", "! @all->prompt.external@{{context=*}}", id="prompt-external"),
        pytest.param(
            "summary",
            "! @all->prompt.external@{{prompt.context=summary}}",
            id="prompt-external-prompt-scope",
        ),
    ],
)
def test_destination_resolves(field: str, command: str) -> None:
    assert problems(example(field, command), TaskAnalyzer) == []


def book(destination: str) -> type[TreeNode]:
    """A root task whose nested node ``Part`` holds a command sending to ``destination``."""
    command = f"! @each[paragraphs]->{destination}@{{{{value.text=paragraphs.text}}}}*"
    part = create_model(
        "Part",
        __base__=TreeNode,
        paragraphs=(list[Paragraph], Field(default=[], description=command)),
        lines=(list[Note], []),
    )
    return create_model("TaskBook", __base__=TreeNode, part=(part, None), outline=(list[Note], []))


@pytest.mark.parametrize(
    "destination",
    [
        pytest.param("lines", id="relative-to-the-nested-node"),
        pytest.param("task.book.part.lines", id="absolute"),
        pytest.param("task.book.outline", id="absolute-elsewhere-in-the-task"),
    ],
)
def test_destination_from_a_nested_node(destination: str) -> None:
    assert problems(book(destination)) == []


def test_relative_destination_is_not_read_from_the_root() -> None:
    assert problems(book("outline")) == [
        (
            "Path 'outline' does not resolve: 'Part' (task.book.part) has no field 'outline'",
            "its fields are 'paragraphs', 'lines'",
        )
    ]


def test_a_task_may_point_to_a_task_added_after_it() -> None:
    task = example("sections", "! @each[sections]->task.analyzer@{{value.titles=sections.title}}*")

    assert problems(task, TaskAnalyzer) == problems(TaskAnalyzer, task) == []


UNKNOWN_TASK_CASES = [
    pytest.param(
        "! @all->task.analyser@{{prompt.summary=*}}",
        "Path 'task.analyser' does not resolve: No task 'task.analyser' has been added",
        "did you mean 'task.analyzer'? Or add the class 'TaskAnalyser' with RunStructure.add()",
        id="close-to-an-added-task",
    ),
    pytest.param(
        "! @all->task.data_store@{{prompt.summary=*}}",
        "Path 'task.data_store' does not resolve: No task 'task.data_store' has been added",
        "add the class 'TaskDataStore' with RunStructure.add(), or fix the path",
        id="nothing-close",
    ),
]


@pytest.mark.parametrize(("command", "message", "hint"), UNKNOWN_TASK_CASES)
def test_unknown_destination_task(command: str, message: str, hint: str) -> None:
    check("summary", command, ("task.", message, hint))


def test_a_wrong_destination_does_not_hide_the_command_s_other_problems() -> None:
    command = (
        "! @each[sections]->task.nowhere@{{value.x=sections.missing, value.y=chapter.heading, "
        "prompt.a.b=sections.title}}*"
    )
    check(
        "sections",
        command,
        (
            "task.",
            "Path 'task.nowhere' does not resolve: No task 'task.nowhere' has been added",
            "did you mean 'task.analyzer'? Or add the class 'TaskNowhere' with RunStructure.add()",
        ),
        (
            "value.x",
            "Path 'sections.missing' does not resolve: 'Section' (task.example.sections) has "
            "no field 'missing'",
            "its fields are 'title', 'summary', 'paragraphs'",
        ),
        (
            "value.y",
            "Source 'chapter.heading' is not within the iteration over 'sections'",
            "every source of this @each must be 'sections' or start with 'sections.'",
        ),
        (
            "prompt.a.b",
            "Target 'prompt.a.b' must name a prompt variable with a single name",
            "use one name, e.g. 'prompt.b'",
        ),
    )


def test_a_wrong_iteration_does_not_hide_the_sources_outside_it() -> None:
    command = "! @each[sections]->task.analyzer@{{value.titles=chapter.heading}}*"
    check(
        "summary",
        command,
        (
            "sections",
            "Inclusion path 'sections' must start with the field 'summary' that holds the command",
            "move the command into the description of 'sections'",
        ),
        (
            "value.titles",
            "Source 'chapter.heading' is not within the iteration over 'sections'",
            "every source of this @each must be 'sections' or start with 'sections.'",
        ),
    )


def test_sources_under_a_wrong_iteration_path_are_not_reported_twice() -> None:
    command = "! @each[sectionz]->task.analyzer@{{value.titles=sectionz.title}}*"
    (error,) = found(example(None, command), TaskAnalyzer)

    assert error[3] == (
        "Path 'sectionz' does not resolve: 'TaskExample' (task.example) has no field 'sectionz'"
    )


# Commands on 'summary' refused at one span, as (command, snippet, message, hint).
DESTINATIONS_NOWHERE = [
    pytest.param(
        "! @all->task.analyzer.missing@{{prompt.summary=*}}",
        "task.analyzer.missing",
        "Path 'task.analyzer.missing' does not resolve: 'TaskAnalyzer' (task.analyzer) "
        "has no field 'missing'",
        f"its fields are {ANALYZER_FIELDS}",
        id="absolute",
    ),
    pytest.param(
        "! @all->missing@{{prompt.summary=*}}",
        "missing",
        "Path 'missing' does not resolve: 'TaskExample' (task.example) has no field 'missing'",
        f"its fields are {EXAMPLE_FIELD_NAMES}",
        id="relative",
    ),
    pytest.param(
        "! @all->task.analyzer.title.text@{{prompt.summary=*}}",
        "task.analyzer.title.text",
        "Path 'task.analyzer.title.text' does not resolve: Field 'title' holds a value, "
        "not a node: 'text' cannot be reached through it",
        "paths can only go through fields whose type is a TreeNode or a list of them",
        id="through-a-leaf",
    ),
]


# -- prompt.external ---------------------------------------------------------------------------


EXTERNAL_NAME_MISTAKES = [
    pytest.param(
        "! @all->prompt.external@{{context.data=*}}",
        "context.data",
        "Target 'context.data' must name an external variable with a single name",
        "use one name, e.g. 'data'",
        id="dotted-name",
    ),
    pytest.param(
        "! @all->prompt.external@{{value.context=*}}",
        "value.context",
        "Target 'value.context': prompt.external takes variable names, not 'value' targets",
        "name the external variable alone, e.g. 'context'",
        id="value-scope",
    ),
    pytest.param(
        "! @all->prompt.external@{{COLLECTED_CONTEXT=*}}",
        "COLLECTED_CONTEXT",
        "Target 'COLLECTED_CONTEXT' names the template variable {COLLECTED_CONTEXT}, which "
        "LangTree fills itself",
        "choose another name, e.g. 'collected_context'",
        id="template-variable",
    ),
    pytest.param(
        "! @all->prompt.external@{{outputs.context=*}}",
        "outputs.context",
        "Target 'outputs.context': prompt.external takes variable names, not 'outputs' targets",
        "name the external variable alone, e.g. 'context'",
        id="outputs-scope",
    ),
]


@pytest.mark.parametrize(
    ("command", "snippet", "message", "hint"), DESTINATIONS_NOWHERE + EXTERNAL_NAME_MISTAKES
)
def test_a_destination_that_resolves_nowhere_or_an_external_that_names_no_variable(
    command: str, snippet: str, message: str, hint: str
) -> None:
    check("summary", command, (snippet, message, hint))


# -- @each inclusion paths ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "command"),
    [
        pytest.param(
            "sections",
            "! @each[sections.paragraphs]->task.analyzer@{{value.results=sections.paragraphs}}*",
            id="starts-with-the-field-spec-example",
        ),
        pytest.param(
            "sections",
            "! @each->task.analyzer@{{value.titles=sections.title}}*",
            id="no-brackets-iterates-the-field",
        ),
        pytest.param(
            None,
            "! @each[notes]->task.analyzer@{{value.titles=notes.text}}*",
            id="docstring-any-list-field",
        ),
        pytest.param(
            "chapter",
            "! @each[chapter.paragraphs]->task.analyzer@{{value.titles=chapter.paragraphs.text}}*",
            id="through-a-single-node-to-a-list",
        ),
        pytest.param(
            "sections",
            "! @each[sections]->task.analyzer@{{prompt.sections}}*",
            id="implicit-mapping-of-the-inclusion-path",
        ),
        pytest.param(
            "notes",
            "! @each[notes]->task.analyzer@{{value.notes=notes}}*",
            id="node-elements-into-a-node-list",
        ),
    ],
)
def test_valid_inclusion(field: str | None, command: str) -> None:
    assert problems(example(field, command), TaskAnalyzer) == []


@pytest.mark.parametrize(
    ("field", "command", "snippet", "message", "hint"),
    [
        pytest.param(
            "command",
            "! @each[sections.paragraphs]->task.analyzer@{{value.results=sections.paragraphs}}*",
            "sections.paragraphs]",
            "Inclusion path 'sections.paragraphs' must start with the field 'command' that "
            "holds the command",
            "move the command into the description of 'sections'",
            id="spec-example-field-holds-a-value",
        ),
        pytest.param(
            "notes",
            "! @each[sections]->task.analyzer@{{value.titles=sections.title}}*",
            "sections]",
            "Inclusion path 'sections' must start with the field 'notes' that holds the command",
            "move the command into the description of 'sections', or iterate over 'notes'",
            id="field-holds-a-list",
        ),
        pytest.param(
            None,
            "! @each->task.analyzer@{{value.titles=sections.title}}*",
            "",
            "@each in a docstring needs an inclusion path",
            "name the list to iterate in brackets, e.g. '@each[sections]->...'",
            id="docstring-without-brackets",
        ),
        pytest.param(
            "summary",
            "! @each[summary]->task.analyzer@{{value.title=summary}}*",
            "summary]",
            "Inclusion path 'summary' has nothing to iterate: no field on it is a list",
            "@each iterates over list fields; use '@all' to send a single value",
            id="a-leaf",
        ),
        pytest.param(
            "chapter",
            "! @each[chapter]->task.analyzer@{{value.title=chapter.heading}}*",
            "chapter]",
            "Inclusion path 'chapter' has nothing to iterate: no field on it is a list",
            "@each iterates over list fields; use '@all' to send a single value",
            id="a-single-node",
        ),
        pytest.param(
            "sections",
            "! @each[sections.missing]->task.analyzer@{{value.titles=sections.missing}}*",
            "sections.missing]",
            "Path 'sections.missing' does not resolve: 'Section' (task.example.sections) has "
            "no field 'missing'",
            "its fields are 'title', 'summary', 'paragraphs'",
            id="missing-field",
        ),
        pytest.param(
            "sections",
            "! @each[sections.title.text]->task.analyzer@{{value.titles=sections.title.text}}*",
            "sections.title.text]",
            "Path 'sections.title.text' does not resolve: Field 'title' holds a value, not a "
            "node: 'text' cannot be reached through it",
            "paths can only go through fields whose type is a TreeNode or a list of them",
            id="through-a-leaf",
        ),
        pytest.param(
            None,
            "! @each[task.analyzer.notes]->task.analyzer@{{value.titles=task.analyzer.notes}}*",
            "task.analyzer.notes]",
            "Path 'task.analyzer.notes' does not resolve: 'TaskExample' (task.example) has no "
            "field 'task'",
            f"its fields are {EXAMPLE_FIELD_NAMES}",
            id="relative-to-the-node-never-absolute",
        ),
    ],
)
def test_invalid_inclusion(
    field: str | None, command: str, snippet: str, message: str, hint: str
) -> None:
    check(field, command, (snippet, message, hint))


# -- @each sources -----------------------------------------------------------------------------

SUBCHAIN = "! @each[sections.paragraphs]->task.analyzer@{{value.results=sections.paragraphs,%s}}*"


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("sections.paragraphs", id="exact-match"),
        pytest.param("sections.paragraphs.text", id="field-access"),
        pytest.param("sections.paragraphs.meta", id="another-field-access"),
    ],
)
def test_each_source_within_the_iteration(source: str) -> None:
    command = SUBCHAIN % f"prompt.extra={source}"

    assert problems(example("sections", command), TaskAnalyzer) == []


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("sections.title", id="shorter-path"),
        pytest.param("paragraphs", id="inner-field-alone"),
        pytest.param("other.field", id="different-path"),
        pytest.param("sections.paragraphsX", id="same-prefix-other-field"),
    ],
)
def test_each_source_outside_the_iteration(source: str) -> None:
    check(
        "sections",
        SUBCHAIN % f"prompt.extra={source}",
        (
            "prompt.extra",
            f"Source {source!r} is not within the iteration over 'sections.paragraphs'",
            "every source of this @each must be 'sections.paragraphs' or start with "
            "'sections.paragraphs.'",
        ),
    )


def test_each_implicit_mapping_outside_the_iteration() -> None:
    check(
        "sections",
        "! @each[sections]->task.analyzer@{{value.titles}}*",
        (
            "value.titles",
            "The implicit mapping 'value.titles' reads 'titles', which is not within the "
            "iteration over 'sections'",
            "every source of this @each must be 'sections' or start with 'sections.'",
        ),
    )


def test_each_source_that_does_not_resolve() -> None:
    check(
        "sections",
        "! @each[sections]->task.analyzer@{{value.titles=sections.heading}}*",
        (
            "value.titles",
            "Path 'sections.heading' does not resolve: 'Section' (task.example.sections) has no "
            "field 'heading'",
            "its fields are 'title', 'summary', 'paragraphs'",
        ),
    )


# -- @all sources ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "command"),
    [
        pytest.param("summary", "! @all->task.analyzer@{{prompt.source=summary}}", id="field"),
        pytest.param("summary", "! @all->task.analyzer@{{value.summary=summary}}*", id="1-n"),
        pytest.param("summary", "! @all->task.analyzer@{{prompt.context=*}}", id="wildcard"),
        pytest.param("summary", "! @all->task.analyzer@{{outputs.summary}}", id="implicit"),
        pytest.param("summary", "! @->task.analyzer@{{prompt.source=summary}}", id="shorthand"),
        pytest.param(None, "! @all->task.analyzer@{{prompt.context=*}}", id="docstring-wildcard"),
        pytest.param(None, "! @all->task.analyzer@{{value.title=title}}", id="docstring-field"),
        pytest.param(None, "! @all->task.analyzer@{{value.title}}", id="docstring-implicit"),
    ],
)
def test_valid_all_source(field: str | None, command: str) -> None:
    assert problems(example(field, command), TaskAnalyzer) == []


@pytest.mark.parametrize(
    ("field", "command", "message", "hint"),
    [
        pytest.param(
            "summary",
            "! @all->task.analyzer@{{prompt.source=title}}",
            "@all sends only the field that holds it: the source 'title' is not 'summary'",
            "write 'prompt.source=summary' or 'prompt.source=*', or move the command into the "
            "description of 'title'",
            id="sibling-field",
        ),
        pytest.param(
            "chapter",
            "! @all->task.analyzer@{{prompt.source=chapter.heading}}",
            "@all sends only the field that holds it: the source 'chapter.heading' is not "
            "'chapter'",
            "write 'prompt.source=chapter' or 'prompt.source=*'; @all sends whole fields, not "
            "parts of them",
            id="longer-path-from-the-field",
        ),
        pytest.param(
            "summary",
            "! @all->task.analyzer@{{prompt.title}}",
            "@all sends only the field that holds it: the implicit mapping's name 'title' is "
            "not 'summary'",
            "write 'prompt.title=summary' or 'prompt.title=*', or move the command into the "
            "description of 'title'",
            id="implicit-name-not-the-field",
        ),
        pytest.param(
            None,
            "! @all->task.analyzer@{{prompt.source=chapter.heading}}",
            "@all in a docstring sends one field or the whole node, not 'chapter.heading'",
            "write a field of 'TaskExample' or '*'",
            id="docstring-longer-path",
        ),
        pytest.param(
            None,
            "! @all->task.analyzer@{{prompt.source=heading}}",
            "Path 'heading' does not resolve: 'TaskExample' (task.example) has no field 'heading'",
            f"its fields are {EXAMPLE_FIELD_NAMES}",
            id="docstring-missing-field",
        ),
    ],
)
def test_invalid_all_source(field: str | None, command: str, message: str, hint: str) -> None:
    check(field, command, ("prompt.", message, hint))


# -- targets -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        pytest.param("value.summary", id="value"),
        pytest.param("task.summary", id="task"),
        pytest.param("summary", id="unscoped"),
        pytest.param("value.note.text", id="through-a-node-field"),
        pytest.param("prompt.summary", id="prompt"),
        pytest.param("outputs.summary", id="outputs"),
    ],
)
def test_valid_target(target: str) -> None:
    task = example("summary", f"! @all->task.analyzer@{{{{{target}=summary}}}}")

    assert problems(task, TaskAnalyzer) == []


@pytest.mark.parametrize(
    ("target", "message", "hint"),
    [
        pytest.param(
            "value.missing",
            "Path 'missing' does not resolve: 'TaskAnalyzer' (task.analyzer) has no field "
            "'missing'",
            f"its fields are {ANALYZER_FIELDS}",
            id="missing-field",
        ),
        pytest.param(
            "missing",
            "Path 'missing' does not resolve: 'TaskAnalyzer' (task.analyzer) has no field "
            "'missing'",
            f"its fields are {ANALYZER_FIELDS}",
            id="missing-unscoped-field",
        ),
        pytest.param(
            "value.title.text",
            "Path 'title.text' does not resolve: Field 'title' holds a value, not a node: "
            "'text' cannot be reached through it",
            "paths can only go through fields whose type is a TreeNode or a list of them",
            id="through-a-leaf",
        ),
        pytest.param(
            "value.task.analyzer.title",
            "Path 'task.analyzer.title' does not resolve: 'TaskAnalyzer' (task.analyzer) has no "
            "field 'task'",
            f"its fields are {ANALYZER_FIELDS}",
            id="relative-to-the-destination-never-absolute",
        ),
        pytest.param(
            "prompt.source.text",
            "Target 'prompt.source.text' must name a prompt variable with a single name",
            "use one name, e.g. 'prompt.text'",
            id="prompt-name-with-a-dot",
        ),
        pytest.param(
            "outputs.source.text",
            "Target 'outputs.source.text' must name a context entry with a single name",
            "use one name, e.g. 'outputs.text'",
            id="outputs-name-with-a-dot",
        ),
        pytest.param(
            "prompt.PROMPT_SUBTREE",
            "Target 'prompt.PROMPT_SUBTREE' names the template variable {PROMPT_SUBTREE}, which "
            "LangTree fills itself",
            "choose another name, e.g. 'prompt.prompt_subtree'",
            id="prompt-template-variable",
        ),
        pytest.param(
            "prompt.SUMMARY",
            "Target 'prompt.SUMMARY' is upper-case, and upper-case names are reserved for "
            "template variables",
            "choose another name, e.g. 'prompt.summary'",
            id="prompt-upper-case-name",
        ),
        pytest.param(
            "prompt.source__text",
            "Target 'prompt.source__text' contains '__', which LangTree reserves",
            "choose another name, e.g. 'prompt.source_text'",
            id="prompt-double-underscore",
        ),
    ],
)
def test_invalid_target(target: str, message: str, hint: str) -> None:
    check("summary", f"! @all->task.analyzer@{{{{{target}=summary}}}}", (target, message, hint))


def test_every_target_problem_is_reported_even_when_the_source_is_wrong() -> None:
    command = "! @all->task.analyzer@{{value.missing=title}}"

    check(
        "summary",
        command,
        (
            "value.missing",
            "@all sends only the field that holds it: the source 'title' is not 'summary'",
            "write 'value.missing=summary' or 'value.missing=*', or move the command into the "
            "description of 'title'",
        ),
        (
            "value.missing",
            "Path 'missing' does not resolve: 'TaskAnalyzer' (task.analyzer) has no field "
            "'missing'",
            f"its fields are {ANALYZER_FIELDS}",
        ),
    )


# -- list levels -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(
            "! @each[sections.paragraphs]->task.analyzer@{{value.results=sections.paragraphs}}*",
            id="spec-two-levels-into-two-levels",
        ),
        pytest.param(
            "! @each[sections.paragraphs]->task.analyzer@{{"
            "value.results=sections.paragraphs.text,value.title=sections.paragraphs.meta}}*",
            id="one-target-at-depth-another-shallower",
        ),
        pytest.param(
            "! @each[sections]->task.analyzer.notes@{{value.text=sections.title}}*",
            id="destination-list-counts",
        ),
        pytest.param(
            "! @each[sections.paragraphs]->task.analyzer@{{"
            "prompt.texts=sections.paragraphs.text,outputs.metas=sections.paragraphs.meta}}*",
            id="prompt-and-outputs-targets-are-not-counted",
        ),
    ],
)
def test_each_levels_match(command: str) -> None:
    assert problems(example("sections", command), TaskAnalyzer) == []


def test_each_source_outside_and_no_target_at_the_depth_spec_example() -> None:
    command = "! @each[sections.paragraphs]->task.analyzer@{{value.title=sections.title}}*"

    check(
        "sections",
        command,
        (
            "",
            "No target of this @each has exactly 2 list level(s), the depth of the iteration "
            "over 'sections.paragraphs'",
            "map at least one value into a list field (one element per iteration), e.g. "
            "'value.items=...' where items is a list",
        ),
        (
            "value.title",
            "Source 'sections.title' is not within the iteration over 'sections.paragraphs'",
            "every source of this @each must be 'sections.paragraphs' or start with "
            "'sections.paragraphs.'",
        ),
    )


def test_each_without_a_target_at_the_depth() -> None:
    command = (
        "! @each[sections.paragraphs]->task.analyzer@{{value.titles=sections.paragraphs.text}}*"
    )

    check(
        "sections",
        command,
        (
            "",
            "No target of this @each has exactly 2 list level(s), the depth of the iteration "
            "over 'sections.paragraphs'",
            "map at least one value into a list field (one element per iteration), e.g. "
            "'value.items=...' where items is a list",
        ),
    )


def test_each_target_deeper_than_the_iteration_spec_example() -> None:
    command = (
        "! @each[sections.paragraphs]->task.analyzer@{{"
        "value.results=sections.paragraphs,value.deep=sections.paragraphs}}*"
    )

    check(
        "sections",
        command,
        (
            "value.deep",
            "Target 'value.deep' has 3 list level(s), more than the 2 the iteration provides",
            "map into a field with no more list levels than the inclusion path iterates",
        ),
    )


def test_each_levels_count_the_lists_the_destination_crosses() -> None:
    command = "! @each[sections]->task.analyzer.notes@{{value.tags=sections.title}}*"

    check(
        "sections",
        command,
        (
            "",
            "No target of this @each has exactly 1 list level(s), the depth of the iteration "
            "over 'sections'",
            "map at least one value into a list field (one element per iteration), e.g. "
            "'value.items=...' where items is a list",
        ),
        (
            "value.tags",
            "Target 'value.tags' has 2 list level(s), more than the 1 the iteration provides",
            "map into a field with no more list levels than the inclusion path iterates",
        ),
    )


@pytest.mark.parametrize(
    ("field", "command"),
    [
        pytest.param(
            "summary", "! @all->task.analyzer@{{value.title=summary}}", id="1-1-into-a-leaf"
        ),
        pytest.param(
            "keywords",
            "! @all->task.analyzer@{{value.titles=keywords}}",
            id="1-1-a-whole-list-into-a-list-field",
        ),
        pytest.param(
            "summary",
            "! @all->task.analyzer.notes@{{value.text=summary}}*",
            id="1-n-into-the-elements-of-the-destination",
        ),
        pytest.param(
            "summary",
            "! @all->task.analyzer@{{value.notes.text=summary}}*",
            id="1-n-into-the-elements-of-a-target-list",
        ),
        pytest.param(
            "summary", "! @all->task.analyzer@{{prompt.titles=summary}}", id="1-1-into-a-prompt"
        ),
    ],
)
def test_all_levels_match(field: str, command: str) -> None:
    assert problems(example(field, command), TaskAnalyzer) == []


@pytest.mark.parametrize(
    ("command", "target"),
    [
        pytest.param(
            "! @all->task.analyzer.notes@{{value.text=summary}}",
            "value.text",
            id="destination-is-a-list",
        ),
        pytest.param(
            "! @all->task.analyzer@{{value.notes.text=summary}}",
            "value.notes.text",
            id="target-crosses-a-list",
        ),
    ],
)
def test_all_without_star_into_a_list(command: str, target: str) -> None:
    check(
        "summary",
        command,
        (
            target,
            f"Target {target!r} lies inside a list, but @all without '*' sends one value to one "
            "place",
            "add '*' after '}}' to send the value to every element (1:n)",
        ),
    )


# -- where diagnostics point ---------------------------------------------------------------------


def test_a_docstring_diagnostic_points_at_its_file_line_and_span() -> None:
    class TaskLocated(TreeNode):
        """Summarise the sections.

        ! @each[sections]->task.analyzer@{{value.titles=sections.heading}}*
        """

        sections: list[Section] = Field(default=[])

    found = refused(TaskLocated, TaskAnalyzer)

    source_line = "        ! @each[sections]->task.analyzer@{{value.titles=sections.heading}}*"
    lines = Path(__file__).read_text().splitlines()
    assert found == (
        Diagnostic(
            severity="error",
            message="Path 'sections.heading' does not resolve: 'Section' "
            "(task.located.sections) has no field 'heading'",
            hint="its fields are 'title', 'summary', 'paragraphs'",
            class_name="TaskLocated",
            field_name=None,
            file=__file__,
            line=lines.index(source_line) + 1,
            column=source_line.index("value.titles") + 1,
            source_line=source_line,
            length=len("value.titles=sections.heading"),
        ),
    )


def test_spec_analysis_example_breaks_the_path_rules() -> None:
    # The spec marks this example valid, but 'analysis' is a list[str] (a leaf ends a path)
    # and 'other' is neither a scope nor a field of the destination (docs/structure.md).
    class TaskProcessor(TreeNode):
        results: list[str] = Field(default=[])

    command = (
        "! @each[analysis]->task.processor@{{task.results=analysis,other.meta=analysis.metadata}}*"
    )
    task = create_model(
        "TaskAnalysis",
        __base__=TreeNode,
        analysis=(list[str], Field(default=[], description=command)),
    )

    assert problems(task, TaskProcessor) == [
        (
            "Path 'analysis.metadata' does not resolve: Field 'analysis' holds a value, not a "
            "node: 'metadata' cannot be reached through it",
            "paths can only go through fields whose type is a TreeNode or a list of them",
        ),
        (
            "Target 'other.meta' starts with 'other', which is neither a scope nor a field of "
            "'TaskProcessor' (task.processor)",
            "start it with one of the scopes outputs, prompt, task, value, or with one of the "
            "fields 'results'",
        ),
    ]
