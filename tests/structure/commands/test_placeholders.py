"""Runtime variables (``{name}``) and template variables in docstrings and descriptions."""

from pathlib import Path

import pytest
from pydantic import Field

from langtree import RunStructure, TreeNode
from langtree.errors import Diagnostic
from tests.structure.validated import diagnostics, line_in, problems, refused

FILE = __file__
SOURCE_LINES = Path(FILE).read_text().splitlines()


def column_in(line: int, snippet: str, occurrence: int = 1) -> int:
    """The 1-based column of this file where ``snippet`` stands on ``line`` (its n-th time)."""
    text = SOURCE_LINES[line - 1]
    index = -1
    for _ in range(occurrence):
        index = text.index(snippet, index + 1)
    return index + 1


def location(diagnostic: Diagnostic) -> tuple[str | None, int | None, int, str, int]:
    return (
        diagnostic.field_name,
        diagnostic.line,
        diagnostic.column,
        diagnostic.source_line,
        diagnostic.length,
    )


def unresolved(name: str, tag: str) -> tuple[str, str, str]:
    return (
        "error",
        f"Runtime variable {{{name}}} resolves to nothing in {tag!r}",
        f"add a field {name!r}, map a value into it with 'prompt.{name}=...', or write the "
        f"literal braces as {{{{{name}}}}}",
    )


def external(name: str) -> tuple[str, str, str]:
    return (
        "warning",
        f"{{{name}}} is an external variable: supply it at run time",
        f"pass variables={{'{name}': ...}} to run() or prompts()",
    )


# --- Resolution ------------------------------------------------------------------------


class Mapped(TreeNode):
    """Write about {topic}."""

    text: str = Field(description="Stay on {topic}.")


class TaskMapsPrompt(TreeNode):
    note: str = Field(description="! @all->child@{{prompt.topic=note}}")
    child: Mapped


def test_prompt_mapping_into_the_node_resolves() -> None:
    assert diagnostics(TaskMapsPrompt) == ()


class NumberedOnce(TreeNode):
    """Compare {topic_1}."""

    text: str


class TaskOneSource(TreeNode):
    note: str = Field(description="! @all->child@{{prompt.topic=note}}")
    child: NumberedOnce


def test_one_source_gives_no_numbered_names() -> None:
    assert problems(TaskOneSource) == [unresolved("topic_1", "task.one_source.child")]


class Numbered(TreeNode):
    """Compare {topic_1} with {topic_2}; together they are {topic}."""

    text: str


class TaskTwoSources(TreeNode):
    note: str = Field(description="! @all->child@{{prompt.topic=note}}")
    other_note: str = Field(description="! @all->child@{{prompt.topic=other_note}}")
    child: Numbered


def test_several_sources_give_numbered_names() -> None:
    assert diagnostics(TaskTwoSources) == ()


class NumberedThree(TreeNode):
    """Compare {topic_3}."""

    text: str


class TaskTwoSourcesThirdName(TreeNode):
    note: str = Field(description="! @all->child@{{prompt.topic=note}}")
    other_note: str = Field(description="! @all->child@{{prompt.topic=other_note}}")
    child: NumberedThree


def test_numbered_names_stop_at_the_number_of_sources() -> None:
    assert problems(TaskTwoSourcesThirdName) == [
        unresolved("topic_3", "task.two_sources_third_name.child")
    ]


class OwnField(TreeNode):
    """Improve the {draft}."""

    draft: str = "first draft"
    text: str = Field(description="Rewrite {draft}.")


class TaskOwnField(TreeNode):
    child: OwnField


def test_a_field_of_the_node_resolves() -> None:
    assert diagnostics(TaskOwnField) == ()


class Deep(TreeNode):
    """Written for {audience}."""

    text: str = Field(description="Keep {audience} in mind.")


class Between(TreeNode):
    deep: Deep


class TaskAncestorField(TreeNode):
    audience: str
    between: Between


def test_a_field_of_an_ancestor_resolves() -> None:
    assert diagnostics(TaskAncestorField) == ()


class ReadsSibling(TreeNode):
    """Mention {verdict}."""

    text: str


class HasVerdict(TreeNode):
    verdict: str


class TaskSiblingField(TreeNode):
    reader: ReadsSibling
    judge: HasVerdict


def test_a_field_of_a_sibling_node_does_not_resolve() -> None:
    assert problems(TaskSiblingField) == [unresolved("verdict", "task.sibling_field.reader")]


class Unmapped(TreeNode):
    """Write about {topic}."""

    text: str


class TaskMapsElsewhere(TreeNode):
    note: str = Field(description="! @all->mapped@{{prompt.topic=note}}")
    mapped: Mapped
    unmapped: Unmapped


def test_prompt_mapping_resolves_only_in_its_destination() -> None:
    assert problems(TaskMapsElsewhere) == [unresolved("topic", "task.maps_elsewhere.unmapped")]


class Unresolved(TreeNode):
    """Summarise the report.
    Use the {style} style."""

    text: str = Field(description="In {tone} words.")


class TaskBelowRoot(TreeNode):
    child: Unresolved


def test_unresolved_name_below_the_root_is_an_error() -> None:
    assert problems(TaskBelowRoot) == [
        unresolved("style", "task.below_root.child"),
        unresolved("tone", "task.below_root.child"),
    ]


def test_unresolved_name_in_a_docstring_points_at_its_line_and_column() -> None:
    first = diagnostics(TaskBelowRoot)[0]
    line = line_in(Unresolved, "Use the {style} style.")

    assert (first.class_name, first.file) == ("Unresolved", FILE)
    assert location(first) == (
        None,
        line,
        column_in(line, "{style}"),
        '    Use the {style} style."""',
        7,
    )


def test_unresolved_name_in_a_description_points_at_its_column() -> None:
    second = diagnostics(TaskBelowRoot)[1]
    line = line_in(Unresolved, "In {tone} words.")

    assert location(second) == (
        "text",
        line,
        column_in(line, "{tone}"),
        '    text: str = Field(description="In {tone} words.")',
        6,
    )


class LiteralThenPlaceholder(TreeNode):
    """Keep {{style}} as written, but fill {style}."""

    text: str


class TaskLiteralFirst(TreeNode):
    child: LiteralThenPlaceholder


def test_column_skips_a_literal_with_the_same_name() -> None:
    (diagnostic,) = diagnostics(TaskLiteralFirst)
    line = line_in(LiteralThenPlaceholder, "fill {style}")

    assert (diagnostic.line, diagnostic.column, diagnostic.source_line) == (
        line,
        column_in(line, "fill {style}") + len("fill "),
        '    """Keep {{style}} as written, but fill {style}."""',
    )


# --- External variables -------------------------------------------------------------------


class TaskExternal(TreeNode):
    """You write for {audience}; see {audience} again.
    Cite {{audience}} and {source}."""

    title: str = Field(description="In the voice of {brand}.")


def test_unresolved_names_in_a_root_task_are_external_variable_warnings() -> None:
    assert problems(TaskExternal) == [
        external("audience"),
        external("audience"),
        external("source"),
        external("brand"),
    ]


def test_each_external_occurrence_has_its_own_column() -> None:
    warnings = diagnostics(TaskExternal)
    first = line_in(TaskExternal, "You write for")
    second = line_in(TaskExternal, "Cite {{audience}}")
    title = line_in(TaskExternal, "In the voice of")

    assert [(d.line, d.column) for d in warnings] == [
        (first, column_in(first, "{audience}")),
        (first, column_in(first, "{audience}", occurrence=2)),
        (second, column_in(second, "{source}")),
        (title, column_in(title, "{brand}")),
    ]


class TaskRootFields(TreeNode):
    """Write {title} for {audience}."""

    title: str
    audience: str = "engineers"


def test_root_fields_are_not_external() -> None:
    assert diagnostics(TaskRootFields) == ()


class SectionOfReport(TreeNode):
    """Summarise the section for {tone} readers."""

    tone: str = "busy"
    summary: str


class TaskReportFor(TreeNode):
    """
    Write {title} for {audience}, in {style}.

    {PROMPT_SUBTREE}
    """

    title: str
    sections: list[SectionOfReport] = Field(description="Each in the voice of {brand}.")


def test_external_variables_are_the_names_the_root_texts_leave_unresolved() -> None:
    """Not a field's name, a template variable or a name below the root."""
    structure = RunStructure()
    structure.add(TaskExternal)
    structure.add(TaskReportFor)
    structure.add(TaskRootFields)

    assert structure.external_variables() == ("audience", "brand", "source", "style")


# --- Reserved names --------------------------------------------------------------------


class TaskDoubleUnderscore(TreeNode):
    """Use {prompt__title}."""

    title: str


class TaskUpperCase(TreeNode):
    """Use {TITLE} and {X2}."""

    title: str


def test_double_underscore_is_an_error_even_in_the_root() -> None:
    assert problems(TaskDoubleUnderscore) == [
        (
            "error",
            "Runtime variable {prompt__title} contains '__', which LangTree reserves",
            "rename the variable without a double underscore",
        )
    ]


@pytest.mark.parametrize("name", ["TITLE", "X2"])
def test_upper_case_names_are_reserved(name: str) -> None:
    assert (
        "error",
        f"Runtime variable {{{name}}} is upper-case, and upper-case names are reserved for "
        "template variables",
        "use a lower-case name, or {PROMPT_SUBTREE} / {COLLECTED_CONTEXT}",
    ) in problems(TaskUpperCase)


def test_every_reserved_name_is_reported() -> None:
    assert len(diagnostics(TaskUpperCase)) == 2


class TaskMixedCase(TreeNode):
    """Use {Title}."""

    title: str


def test_mixed_case_names_are_ordinary_variables() -> None:
    assert problems(TaskMixedCase) == [external("Title")]


# --- Template variables ------------------------------------------------------------------


def task_with_docstring(docstring: str) -> type[TreeNode]:
    namespace = {"__doc__": docstring, "__annotations__": {"text": str}}
    return type("TaskTemplate", (TreeNode,), namespace)


SPACED = [
    pytest.param("Intro.\n\n{NAME}\n\nMore.", id="blank-lines-around"),
    pytest.param("{NAME}\n\nMore.", id="first-line"),
    pytest.param("Intro.\n\n{NAME}", id="last-line"),
    pytest.param("{NAME}", id="alone"),
    pytest.param("Intro.\n\n   {NAME}   \n\nMore.", id="surrounding-spaces"),
    pytest.param("Intro.\n\n! @sequential\n\n{NAME}", id="command-between"),
]


@pytest.mark.parametrize("docstring", SPACED)
@pytest.mark.parametrize("name", ["PROMPT_SUBTREE", "COLLECTED_CONTEXT"])
def test_template_variable_alone_between_blank_lines_is_accepted(name: str, docstring: str) -> None:
    assert diagnostics(task_with_docstring(docstring.replace("NAME", name))) == ()


CRAMPED = [
    pytest.param("Intro.\n{NAME}\n\nMore.", id="no-blank-before"),
    pytest.param("Intro.\n\n{NAME}\nMore.", id="no-blank-after"),
    pytest.param("Intro.\n\nSee {NAME} here.\n\nMore.", id="inline"),
    pytest.param("Intro.\n\n{NAME} {NAME}\n\nMore.", id="twice-on-a-line"),
    pytest.param("Intro.\n! @sequential\n{NAME}", id="only-a-command-before"),
]


@pytest.mark.parametrize("docstring", CRAMPED)
@pytest.mark.parametrize("name", ["PROMPT_SUBTREE", "COLLECTED_CONTEXT"])
def test_template_variable_without_its_own_paragraph_is_an_error(name: str, docstring: str) -> None:
    assert set(problems(task_with_docstring(docstring.replace("NAME", name)))) == {
        (
            "error",
            f"{{{name}}} must stand alone on its line, with a blank line before and after it",
            f"write it as a paragraph of its own: 'text\\n\\n{{{name}}}\\n\\nmore text'",
        )
    }


@pytest.mark.parametrize("name", ["PROMPT_SUBTREE", "COLLECTED_CONTEXT"])
def test_template_variable_in_a_field_description_is_an_error(name: str) -> None:
    namespace = {"__annotations__": {"text": str}, "text": Field(description=f"{{{name}}}")}
    task = type("TaskTemplateField", (TreeNode,), namespace)

    assert problems(task) == [
        (
            "error",
            f"{{{name}}} belongs in a class docstring, not in a field's description",
            "move it to the docstring",
        )
    ]


class TaskCrampedSubtree(TreeNode):
    """Intro.
    {PROMPT_SUBTREE}
    """

    text: str


def test_cramped_template_variable_points_at_its_line() -> None:
    (diagnostic,) = diagnostics(TaskCrampedSubtree)

    assert location(diagnostic) == (
        None,
        line_in(TaskCrampedSubtree, "    {PROMPT_SUBTREE}"),
        5,
        "    {PROMPT_SUBTREE}",
        16,
    )


# --- Other braces ---------------------------------------------------------------------


class BracesBelow(TreeNode):
    """Answer as JSON: {"score": 1, "tags": []}.
    Write {{name}} literally, and { spaced }, {task.model}, {}, {1st} and {a-b}."""

    text: str = Field(description='Like {"text": "..."} or {{text}}.')


class TaskBraces(TreeNode):
    """Reply with {"ok": true} and {{ literal }}.

    {PROMPT_SUBTREE}
    """

    child: BracesBelow


def test_other_brace_text_is_left_alone() -> None:
    assert diagnostics(TaskBraces) == ()


class TaskToneVariable(TreeNode):
    """
    ! tone="friendly"
    Write in a {tone} voice.
    """

    text: str = Field(description="The text.")


def test_an_assembly_variable_is_not_prompt_text() -> None:
    found = refused(TaskToneVariable)

    assert [(d.message, d.hint) for d in found] == [
        (
            "{tone} names the assembly variable 'tone'; assembly variables configure commands "
            "and are not prompt text",
            "give the node a field with a default, e.g. 'tone: str = ...', or map a value "
            "into it with 'prompt.tone=...'",
        )
    ]


class TaskTwoSubtrees(TreeNode):
    """
    Intro.

    {PROMPT_SUBTREE}

    Middle.

    {PROMPT_SUBTREE}
    """

    text: str = Field(description="The text.")


def test_a_template_variable_stands_once_per_docstring() -> None:
    found = refused(TaskTwoSubtrees)

    assert [(d.message, d.hint) for d in found] == [
        (
            "{PROMPT_SUBTREE} stands more than once in this docstring",
            "keep one {PROMPT_SUBTREE}: the content goes where the first one stands",
        )
    ]
