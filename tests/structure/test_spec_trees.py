"""Every class example in the specification, built as a tree and checked.

Source: ``spec/langtree-dsl-spec.md``, every ```` ```python ```` block that defines a class,
read top to bottom. Each builder below holds one example with its commands exactly as the
spec writes them; roots are renamed ``Task<Name>`` where the spec's name is not a root task
name (``DocumentProcessor`` → ``TaskDocumentProcessor``), spec classes that do not inherit
from ``TreeNode`` do here, and the scaffolding the example leaves out is added and marked as
such: the destinations it points to (a ``TaskSummarize`` for ``task.summarize``, a field
``analyzer`` for the relative destination ``analyzer``) and the nested classes with the fields
its paths use (``Section``, ``Paragraph``, ``Document``).

Examples the spec calls valid (✅, or presented as correct usage) must validate with the
warnings pinned, and their plan is pinned. Examples the spec marks ❌ must raise a
``StructureError`` whose diagnostics are pinned. Where a valid-looking example breaks one
of our documented decisions (docs/structure.md, DESIGN.md D1–D9), the case pins what
LangTree reports and its comment names the decision; usually the spec contradicts its own
rules there too.

The other ``python`` blocks hold no class: the resampled output dict ("Resampling
Aggregation Commands"), command strings ("Whitespace Handling > Examples", parsed in
tests/dsl/test_spec_examples.py) and ``RunStructure(...)`` settings ("Configuration
Options", "Performance Configuration", tested in tests/structure/commands/test_settings.py).
"""

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from pydantic import Field

from langtree import CommandParseError, RunStructure, StructureError, TreeNode

Tasks = tuple[type[TreeNode], ...]
Builder = Callable[[], Tasks]
Problem = tuple[str | None, str, str]

SOURCE_LINES = Path(__file__).read_text().splitlines()


# -- scaffolding shared by the examples: the nested classes their paths go through ----------


class Paragraph(TreeNode):
    text: str


class Section(TreeNode):
    title: str
    paragraphs: list[Paragraph] = Field(default=[])


class Document(TreeNode):
    content: str


# -- "@each Commands > Field Context Scoping Rules > Field Context Examples" ------------------

FIELD_CONTEXT_COMMANDS = {
    # ✅ VALID: inclusion_path starts with field 'sections'
    "sections": (
        "! @each[sections.paragraphs]->other.analyzer@{{other.results=sections.paragraphs}}*"
    ),
    # ❌ INVALID: inclusion_path 'sections.paragraphs' doesn't start with field 'command'
    "command": "! @each[sections.paragraphs]->analyzer@{{value.results=sections.paragraphs}}*",
    # ✅ VALID: inclusion_path starts with field 'analysis', all source_paths are subchains
    # of 'analysis'
    "analysis": (
        "! @each[analysis]->task.processor@{{task.results=analysis,other.meta=analysis.metadata}}*"
    ),
}


def field_context_examples(*fields: str) -> Tasks:
    """The spec's ``TaskExample`` with the commands of ``fields`` (the others left plain)."""

    def text(field: str) -> str | None:
        return FIELD_CONTEXT_COMMANDS[field] if field in fields else None

    # Scaffolding: `other.analyzer` and `analyzer` (relative destinations, so fields of
    # TaskExample); `other.results` (a field path: `other` is no scope) and `value.results`
    # have two list levels, as the two levels of `sections.paragraphs` require.
    class AnalyzerOther(TreeNode):
        results: list[list[Paragraph]]

    class OtherAnalyzer(TreeNode):
        other: AnalyzerOther

    class Other(TreeNode):
        analyzer: OtherAnalyzer

    class Analyzer(TreeNode):
        results: list[list[Paragraph]]

    # Scaffolding: `task.processor` with `results` and `other.meta`.
    class ProcessorOther(TreeNode):
        meta: list[str]

    class TaskProcessor(TreeNode):
        results: list[str]
        other: ProcessorOther

    class TaskExample(TreeNode):
        sections: list[Section] = Field(description=text("sections"))
        command: str = Field(description=text("command"))
        analysis: list[str] = Field(description=text("analysis"))
        # Scaffolding.
        other: Other
        analyzer: Analyzer

    return TaskExample, TaskProcessor


# -- "@each Commands > Examples with Field Context Scoping" -----------------------------------

DOCUMENT_PROCESSOR_COMMANDS = {
    # ✅ Command in 'documents' field can use inclusion_path starting with 'documents'
    "documents": "! @each[documents]->task.summarize@{{value.summary=documents.content}}*",
    # ✅ Command in 'sections' field can use inclusion_path starting with 'sections'
    "sections": """
        ! @each[sections.paragraphs]->analyzer@{{
            value.analysis.segments=sections.paragraphs,
            value.analysis.metadata.title=sections.title
        }}*
    """,
}


def document_processor(*fields: str) -> Tasks:
    """The spec's ``DocumentProcessor`` with the commands of ``fields``."""

    def text(field: str) -> str | None:
        return DOCUMENT_PROCESSOR_COMMANDS[field] if field in fields else None

    # Scaffolding: `task.summarize` (one summary per document) and the relative `analyzer`
    # with `analysis.segments` (two list levels) and `analysis.metadata.title`.
    class TaskSummarize(TreeNode):
        summary: list[str]

    class Metadata(TreeNode):
        title: str

    class Analysis(TreeNode):
        segments: list[list[Paragraph]]
        metadata: Metadata

    class Analyzer(TreeNode):
        analysis: Analysis

    class TaskDocumentProcessor(TreeNode):
        documents: list[Document] = Field(description=text("documents"))
        sections: list[Section] = Field(description=text("sections"))
        # Scaffolding.
        analyzer: Analyzer

    return TaskDocumentProcessor, TaskSummarize


# -- "@all Commands > Examples" ---------------------------------------------------------------

ALL_COMMANDS = {
    # ✅ Valid - RHS matches containing field
    "summary": "! @->task.analyzer@{{prompt.source_data=summary}}",
    # ✅ Valid - RHS matches containing field
    "input_data": "! @all->task.process@{{value.data=input_data}}*",
    # ✅ Valid - wildcard represents entire node
    "analysis": "! @->task.analyze@{{prompt.context=*}}",
    # ✅ Valid - implicit mapping (field name = target variable name)
    "main_analysis": "! @all->summary@{{outputs.main_analysis}}*",
}


def all_command_examples(*fields: str) -> Tasks:
    """The spec's ``@all`` ``TaskExample`` with the commands of ``fields``."""

    def text(field: str) -> str | None:
        return ALL_COMMANDS[field] if field in fields else None

    # Scaffolding: the three destination tasks, each with a field of its own to generate.
    class TaskAnalyzer(TreeNode):
        findings: str

    class TaskProcess(TreeNode):
        data: str
        result: str

    class TaskAnalyze(TreeNode):
        verdict: str

    class TaskExample(TreeNode):
        summary: str = Field(description=text("summary"))
        input_data: str = Field(description=text("input_data"))
        analysis: str = Field(description=text("analysis"))
        main_analysis: str = Field(description=text("main_analysis"))

    return TaskExample, TaskAnalyzer, TaskProcess, TaskAnalyze


# -- "Node Modifier Commands > Examples" --------------------------------------------------------


def modifier_analysis_node() -> Tasks:
    class TaskAnalysisNode(TreeNode):
        """! @sequential"""

        overview: str = Field(description="High-level overview")
        details: str = Field(description="Detailed analysis - has access to overview")

    return (TaskAnalysisNode,)


def modifier_report_node() -> Tasks:
    class TaskReportNode(TreeNode):
        """! @parallel"""

        summary: str = Field(description="Executive summary")
        technical: str = Field(description="Technical details")

    return (TaskReportNode,)


def modifier_quick_node() -> Tasks:
    class TaskQuickNode(TreeNode):
        """! together"""  # Same as @parallel

        intro: str
        body: str

    return (TaskQuickNode,)


# -- "Data Flow Examples" -----------------------------------------------------------------------


def document_analysis() -> Tasks:
    """Data Flow Examples: "Sequential Processing (Automatic Forwarding)"."""

    class TaskDocumentAnalysis(TreeNode):
        """! @sequential"""

        overview: str = Field(description="First field - gets only external context")
        methodology: str = Field(description="Gets overview in context automatically")
        results: str = Field(description="Gets overview + methodology in context automatically")
        # No explicit forwarding needed - @sequential does it automatically

    return (TaskDocumentAnalysis,)


SUMMARY_TASK_COMMAND = "! @each[sections]->summary@{{outputs.section_data=sections}}"


def summary_task(command: str = SUMMARY_TASK_COMMAND) -> Tasks:
    """Data Flow Examples: "Manual Forwarding (Cross-Node)", ``SummaryTask`` renamed."""

    # Scaffolding: the iterated `sections` and the relative destination `summary`.
    class Summary(TreeNode):
        text: str

    class TaskSummary(TreeNode):
        analysis: str = Field(description=command)
        # summary prompt will include "Outputs" section with all section_data
        # Scaffolding.
        sections: list[Section]
        summary: Summary

    return (TaskSummary,)


def report_generation() -> Tasks:
    """Data Flow Examples: "Context Assembly with Forward References"."""

    # Scaffolding: the relative destination `external_conclusion` and the source `analysis`.
    class ExternalConclusion(TreeNode):
        conclusion: str

    class TaskReportGeneration(TreeNode):
        """! @sequential"""

        # If conclusion is already generated by another chain, it appears BEFORE title
        title: str = Field(description="Gets conclusion in context if available")
        body: str = Field(description="Gets title + conclusion (if available) in context")
        conclusion: str = Field(
            description="! @->external_conclusion@{{value.conclusion=analysis}}"
        )
        # Scaffolding.
        external_conclusion: ExternalConclusion
        analysis: str

    return (TaskReportGeneration,)


# -- "Node Execution Modifiers" -----------------------------------------------------------------


def sequential_analysis_node() -> Tasks:
    """Node Execution Modifiers: "@sequential Modifier"."""

    class TaskAnalysisNode(TreeNode):
        """
        ! @sequential
        Generate analysis sections in order
        """

        overview: str
        methodology: str
        results: str

    return (TaskAnalysisNode,)


def parallel_summary_node() -> Tasks:
    """Node Execution Modifiers: "@parallel Modifier"."""

    class TaskSummaryNode(TreeNode):
        """
        ! @parallel
        Generate summary sections simultaneously
        """

        key_points: str
        conclusions: str
        recommendations: str

    return (TaskSummaryNode,)


# -- "Context Flow Rules" -----------------------------------------------------------------------


def document_node() -> Tasks:
    """Context Flow Rules: "Sequential Node Context Assembly"."""

    # Scaffolding: the relative destination `external` and the source `data`.
    class External(TreeNode):
        conclusion: str

    class TaskDocumentNode(TreeNode):
        """! @sequential"""

        title: str = "Research Analysis"  # Pre-calculated - available to all fields

        # If 'conclusion' was forwarded from another chain, it appears BEFORE introduction
        introduction: str  # Context: [title] + [conclusion if available]
        methodology: str  # Context: [title] + [conclusion if available] + [introduction]
        # Context: [title] + [conclusion if available] + [introduction] + [methodology]
        results: str

        # Even though defined last, if generated by external chain, appears early in context
        conclusion: str = Field(description="! @->external@{{value.conclusion=data}}")
        # Scaffolding.
        external: External
        data: str

    return (TaskDocumentNode,)


def context_summary_node() -> Tasks:
    """Context Flow Rules: "Parallel Node Context Assembly"."""

    class TaskSummaryNode(TreeNode):
        """! @parallel"""

        # All fields get same context: [external forwarded] + [pre-calculated]
        # + [explicit forwarded]
        overview: str  # Context: [external_data] + [title] + [analysis_results]
        details: str  # Context: [external_data] + [title] + [analysis_results] (same as overview)
        # Context: [external_data] + [title] + [analysis_results] (same as overview)
        recommendations: str

        title: str = "Summary Report"  # Pre-calculated - available to all parallel fields

    return (TaskSummaryNode,)


EXTERNAL_FORWARDING = "! @each[sections]->summary.node@{{prompt.section_titles=sections.title}}*"


class SummaryNode(TreeNode):
    """! @sequential"""

    overview: str  # Context: [section_titles] (external) - no auto-forwarding from other fields
    details: str  # Context: [section_titles] (external) + [overview] (sequential)


class Summary(TreeNode):
    """Scaffolding: the node that holds `summary.node`."""

    node: SummaryNode


def external_forwarding_in_docstring() -> Tasks:
    """Context Flow Rules: "External Forwarding Override", the command in the docstring."""

    class TaskReport(TreeNode):
        # External forwarding takes precedence over automatic sequential forwarding
        __doc__ = EXTERNAL_FORWARDING
        # Scaffolding: the iterated `sections` and the relative destination `summary.node`.
        sections: list[Section]
        summary: Summary

    return (TaskReport,)


def external_forwarding_in_field() -> Tasks:
    """Context Flow Rules: "External Forwarding Override", the command on ``sections``."""

    class TaskReport(TreeNode):
        sections: list[Section] = Field(description=EXTERNAL_FORWARDING)
        # Scaffolding: the relative destination `summary.node`.
        summary: Summary

    return (TaskReport,)


CROSS_NODE = "! @->conclusions@{{prompt.analysis_results=analysis.results}}"


class ConclusionsNode(TreeNode):
    """! @parallel"""  # No auto-resolution

    summary: str  # Gets only analysis_results
    recommendations: str  # Gets only analysis_results


class Analysis(TreeNode):
    """Scaffolding: the node that holds `analysis.results`."""

    results: str


def cross_node_in_docstring() -> Tasks:
    """Context Flow Rules: "Cross-Node Dependencies", the command in the docstring."""

    class TaskReport(TreeNode):
        # Manual forwarding between subtrees
        __doc__ = CROSS_NODE
        # Scaffolding: the two subtrees.
        analysis: Analysis
        conclusions: ConclusionsNode

    return (TaskReport,)


def cross_node_in_field() -> Tasks:
    """Context Flow Rules: "Cross-Node Dependencies", the command on ``analysis``."""

    class TaskReport(TreeNode):
        analysis: Analysis = Field(description=CROSS_NODE)
        # Scaffolding: the destination subtree.
        conclusions: ConclusionsNode

    return (TaskReport,)


# -- helpers --------------------------------------------------------------------------------


def structure_of(tasks: Tasks, config: dict[str, str] | None = None) -> RunStructure:
    structure = RunStructure(config)
    for task in tasks:
        structure.add(task)
    return structure


def problems(tasks: Tasks) -> list[Problem]:
    """The errors ``validate()`` raises, as (field, message, hint)."""
    with pytest.raises(StructureError) as caught:
        structure_of(tasks).validate()
    return [(d.field_name, d.message, d.hint) for d in caught.value.diagnostics]


# -- examples the spec calls valid --------------------------------------------------------------

VALID_EXAMPLES = [
    pytest.param(
        lambda: field_context_examples("sections"),
        None,
        None,
        # `other.analyzer` is wholly written by the mapping (D2): it has no step.
        {
            "task.example:sections": (),
            "task.example:command": ("task.example:sections",),
            "task.example:analysis": ("task.example:command",),
            "task.example:analyzer": ("task.example:analysis",),
            "task.processor:results": (),
            "task.processor:other": ("task.processor:results",),
        },
        id="field-context-examples-sections",
    ),
    pytest.param(
        lambda: document_processor("documents"),
        None,
        None,
        # `task.summarize`'s only field is written by the mapping: it has no step.
        {
            "task.document_processor:documents": (),
            "task.document_processor:sections": ("task.document_processor:documents",),
            "task.document_processor:analyzer": ("task.document_processor:sections",),
        },
        id="examples-with-field-context-scoping-documents",
    ),
    pytest.param(
        lambda: all_command_examples("summary"),
        None,
        None,
        {
            "task.example:summary": (),
            "task.example:input_data": ("task.example:summary",),
            "task.example:analysis": ("task.example:input_data",),
            "task.example:main_analysis": ("task.example:analysis",),
            "task.analyzer:findings": ("task.example:summary",),
            "task.process:data": (),
            "task.process:result": ("task.process:data",),
            "task.analyze:verdict": (),
        },
        id="all-commands-examples-summary",
    ),
    pytest.param(
        lambda: all_command_examples("input_data"),
        None,
        None,
        {
            "task.example:summary": (),
            "task.example:input_data": ("task.example:summary",),
            "task.example:analysis": ("task.example:input_data",),
            "task.example:main_analysis": ("task.example:analysis",),
            "task.analyzer:findings": (),
            "task.process:result": ("task.example:input_data",),
            "task.analyze:verdict": (),
        },
        id="all-commands-examples-input_data",
    ),
    pytest.param(
        lambda: all_command_examples("analysis"),
        None,
        None,
        {
            "task.example:summary": (),
            "task.example:input_data": ("task.example:summary",),
            "task.example:analysis": ("task.example:input_data",),
            "task.example:main_analysis": ("task.example:analysis",),
            "task.analyzer:findings": (),
            "task.process:data": (),
            "task.process:result": ("task.process:data",),
            # `*` is the whole node: its every field.
            "task.analyze:verdict": (
                "task.example:analysis",
                "task.example:input_data",
                "task.example:main_analysis",
                "task.example:summary",
            ),
        },
        id="all-commands-examples-analysis",
    ),
    # The whole class validates once @parallel is the default, as the spec's "@parallel
    # Modifier" section says it is (D1 picks @sequential; see the rejected cases): `summary`,
    # which needs `main_analysis`, moves to a follow-up step (D4).
    pytest.param(
        lambda: all_command_examples(*ALL_COMMANDS),
        {"default_modifier": "parallel"},
        None,
        {
            "task.example:input_data+analysis+main_analysis": (),
            "task.example:summary": ("task.example:input_data+analysis+main_analysis",),
            "task.analyzer:findings": ("task.example:summary",),
            "task.process:result": ("task.example:input_data+analysis+main_analysis",),
            "task.analyze:verdict": (
                "task.example:input_data+analysis+main_analysis",
                "task.example:summary",
            ),
        },
        id="all-commands-examples-as-written-parallel-default",
    ),
    pytest.param(
        modifier_analysis_node,
        None,
        None,
        {
            "task.analysis_node:overview": (),
            "task.analysis_node:details": ("task.analysis_node:overview",),
        },
        id="node-modifier-commands-AnalysisNode",
    ),
    pytest.param(
        modifier_report_node,
        None,
        None,
        {"task.report_node:summary+technical": ()},
        id="node-modifier-commands-ReportNode",
    ),
    pytest.param(
        modifier_quick_node,
        None,
        None,
        {"task.quick_node:intro+body": ()},
        id="node-modifier-commands-QuickNode",
    ),
    pytest.param(
        document_analysis,
        None,
        None,
        {
            "task.document_analysis:overview": (),
            "task.document_analysis:methodology": ("task.document_analysis:overview",),
            "task.document_analysis:results": ("task.document_analysis:methodology",),
        },
        id="data-flow-examples-sequential-processing-DocumentAnalysis",
    ),
    pytest.param(
        sequential_analysis_node,
        None,
        None,
        {
            "task.analysis_node:overview": (),
            "task.analysis_node:methodology": ("task.analysis_node:overview",),
            "task.analysis_node:results": ("task.analysis_node:methodology",),
        },
        id="node-execution-modifiers-sequential-AnalysisNode",
    ),
    pytest.param(
        parallel_summary_node,
        None,
        None,
        {"task.summary_node:key_points+conclusions+recommendations": ()},
        id="node-execution-modifiers-parallel-SummaryNode",
    ),
    pytest.param(
        context_summary_node,
        None,
        None,
        # `title` has a default: it is known, not generated (D2).
        {"task.summary_node:overview+details+recommendations": ()},
        id="context-flow-rules-parallel-node-SummaryNode",
    ),
    pytest.param(
        external_forwarding_in_docstring,
        None,
        None,
        # Without inputs `summary` is generated whole (D3), after the sections it reads.
        {"task.report:sections": (), "task.report:summary": ("task.report:sections",)},
        id="context-flow-rules-external-forwarding-override-docstring",
    ),
    pytest.param(
        external_forwarding_in_field,
        None,
        None,
        {"task.report:sections": (), "task.report:summary": ("task.report:sections",)},
        id="context-flow-rules-external-forwarding-override-field",
    ),
    pytest.param(
        external_forwarding_in_field,
        None,
        # With `summary.node` supplied, its fields get @sequential steps of their own:
        # `overview` sees the section titles, `details` also `overview`.
        {"TaskReport": {"summary": {"node": {}}}},
        {
            "task.report:sections": (),
            "task.report.summary.node:overview": ("task.report:sections",),
            "task.report.summary.node:details": (
                "task.report.summary.node:overview",
                "task.report:sections",
            ),
        },
        id="context-flow-rules-external-forwarding-override-summary-supplied",
    ),
]


@pytest.mark.parametrize(("build", "config", "inputs", "steps"), VALID_EXAMPLES)
def test_valid_example_validates_and_plans(
    build: Builder,
    config: dict[str, str] | None,
    inputs: dict[str, object] | None,
    steps: dict[str, tuple[str, ...]],
) -> None:
    tasks = build()
    structure = structure_of(tasks, config)

    assert structure.validate() == ()
    by_name = {task.__name__: task for task in tasks}
    plan = structure.plan({by_name[name]: value for name, value in (inputs or {}).items()})
    assert {step.id: step.depends_on for step in plan.steps} == steps


# -- examples the spec marks ❌, and valid-looking ones our decisions reject ----------------------

ONLY_IN_FIELD = "@all sends only the field that holds it: the source {source!r} is not {field!r}"

# The one problem of an example both with the command the test names and as written.
SECTIONS_TITLE_OUTSIDE_THE_ITERATION = [
    (
        "sections",
        "Source 'sections.title' is not within the iteration over 'sections.paragraphs'",
        "every source of this @each must be 'sections.paragraphs' or start with "
        "'sections.paragraphs.'",
    )
]
SUMMARY_BEFORE_MAIN_ANALYSIS = [
    (
        "main_analysis",
        "In @sequential 'TaskExample', 'summary' "
        "needs 'main_analysis', which is generated after it",
        "declare 'main_analysis' before 'summary', make the node @parallel, give the "
        "field a value, or supply it in the inputs (validate(inputs) checks with them)",
    )
]

REJECTED_EXAMPLES = [
    # ❌ in the spec.
    pytest.param(
        lambda: field_context_examples("command"),
        [
            (
                "command",
                "Inclusion path 'sections.paragraphs' must start with the field 'command' "
                "that holds the command",
                "move the command into the description of 'sections'",
            )
        ],
        id="field-context-examples-command",
    ),
    # ✅ in the spec, but `analysis` is a `list[str]`, a leaf: a path ends there
    # (docs/structure.md "Paths": "A path goes through node fields only; a leaf ends it"),
    # as the spec's own "Leaf List Limitations" say. `task.results=analysis` alone is fine.
    pytest.param(
        lambda: field_context_examples("analysis"),
        [
            (
                "analysis",
                "Path 'analysis.metadata' does not resolve: Field 'analysis' holds a value, not "
                "a node: 'metadata' cannot be reached through it",
                "paths can only go through fields whose type is a TreeNode or a list of them",
            )
        ],
        id="field-context-examples-analysis",
    ),
    pytest.param(
        lambda: field_context_examples(*FIELD_CONTEXT_COMMANDS),
        [
            (
                "command",
                "Inclusion path 'sections.paragraphs' must start with the field 'command' "
                "that holds the command",
                "move the command into the description of 'sections'",
            ),
            (
                "analysis",
                "Path 'analysis.metadata' does not resolve: Field 'analysis' holds a value, not "
                "a node: 'metadata' cannot be reached through it",
                "paths can only go through fields whose type is a TreeNode or a list of them",
            ),
        ],
        id="field-context-examples-as-written",
    ),
    # ✅ in the spec, but `sections.title` lies outside the iteration over
    # `sections.paragraphs` (docs/structure.md "`@each` and `@all`": "Every `@each` source is
    # the inclusion path itself or starts with it"), as the spec's own "Critical Subchain
    # Rule" and its `sections.title` ❌ under "Right Side (Source) Rules" say.
    pytest.param(
        lambda: document_processor("sections"),
        SECTIONS_TITLE_OUTSIDE_THE_ITERATION,
        id="examples-with-field-context-scoping-sections",
    ),
    pytest.param(
        lambda: document_processor(*DOCUMENT_PROCESSOR_COMMANDS),
        SECTIONS_TITLE_OUTSIDE_THE_ITERATION,
        id="examples-with-field-context-scoping-as-written",
    ),
    # ✅ in the spec, but `main_analysis` sends `outputs` to `summary`, declared before it:
    # nodes are @sequential by default (D1), and a @sequential field that needs a later
    # sibling is an error naming both (D4; docs/structure.md "Known and generated fields;
    # steps"). With @parallel as the default the class validates (see the valid cases).
    pytest.param(
        lambda: all_command_examples("main_analysis"),
        SUMMARY_BEFORE_MAIN_ANALYSIS,
        id="all-commands-examples-main_analysis",
    ),
    pytest.param(
        lambda: all_command_examples(*ALL_COMMANDS),
        SUMMARY_BEFORE_MAIN_ANALYSIS,
        id="all-commands-examples-as-written",
    ),
    # Presented as correct usage, but an @all in a field's description sends that field or
    # `*` (docs/structure.md "`@each` and `@all`"), as the spec's own "Source Path Scoping
    # Rules" say (❌ "Sibling field references").
    pytest.param(
        report_generation,
        [
            (
                "conclusion",
                ONLY_IN_FIELD.format(source="analysis", field="conclusion"),
                "write 'value.conclusion=conclusion' or 'value.conclusion=*', or move the "
                "command into the description of 'analysis'",
            )
        ],
        id="data-flow-examples-forward-references-ReportGeneration",
    ),
    pytest.param(
        document_node,
        [
            (
                "conclusion",
                ONLY_IN_FIELD.format(source="data", field="conclusion"),
                "write 'value.conclusion=conclusion' or 'value.conclusion=*', or move the "
                "command into the description of 'data'",
            )
        ],
        id="context-flow-rules-sequential-node-DocumentNode",
    ),
    # Presented as correct usage, but `analysis.results` is part of a field: an @all sends
    # whole fields (docs/structure.md "`@each` and `@all`": in a docstring "it sends `*` or
    # one field"; in a description the field that holds it), as the spec's own "Source Path
    # Scoping Rules" say (❌ "Longer paths from containing field").
    pytest.param(
        cross_node_in_docstring,
        [
            (
                None,
                "@all in a docstring sends one field or the whole node, not 'analysis.results'",
                "write a field of 'TaskReport' or '*'",
            )
        ],
        id="context-flow-rules-cross-node-dependencies-docstring",
    ),
    pytest.param(
        cross_node_in_field,
        [
            (
                "analysis",
                ONLY_IN_FIELD.format(source="analysis.results", field="analysis"),
                "write 'prompt.analysis_results=analysis' or 'prompt.analysis_results=*'; "
                "@all sends whole fields, not parts of them",
            )
        ],
        id="context-flow-rules-cross-node-dependencies-field",
    ),
    # "Manual Forwarding (Cross-Node)" with the `*` it lacks added: the inclusion path still
    # does not start with `analysis`, the field that holds the command (the spec's "Field
    # Context Scoping Rules"; docs/structure.md "`@each` and `@all`").
    pytest.param(
        lambda: summary_task(SUMMARY_TASK_COMMAND + "*"),
        [
            (
                "analysis",
                "Inclusion path 'sections' must start with the field 'analysis' that holds "
                "the command",
                "move the command into the description of 'sections'",
            )
        ],
        id="data-flow-examples-manual-forwarding-SummaryTask-with-star",
    ),
]


@pytest.mark.parametrize(("build", "expected"), REJECTED_EXAMPLES)
def test_rejected_example_reports(build: Builder, expected: Sequence[Problem]) -> None:
    assert problems(build()) == list(expected)


def test_summary_task_lacks_the_star_that_each_requires() -> None:
    """Data Flow Examples: "Manual Forwarding (Cross-Node)", as written.

    Presented as correct usage, but the spec's grammar (and its "Error Examples": "Missing
    multiplicity") require `*` after an @each's mappings; the command cannot be parsed, so
    ``add()`` raises at once (docs/structure.md "The node tree").
    """
    (task,) = summary_task()

    with pytest.raises(CommandParseError) as caught:
        RunStructure().add(task)

    error = caught.value
    assert (error.message, error.hint) == (
        "@each commands require '*' multiplicity indicator",
        "add '*' right after '}}'",
    )
    line = SOURCE_LINES.index("        analysis: str = Field(description=command)") + 1
    assert error.location == f"TaskSummary.analysis ({__file__}:{line})"
