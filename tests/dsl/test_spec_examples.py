"""Every DSL example in the specification, as a parse test.

Source: ``spec/langtree-dsl-spec.md``, read top to bottom. Each case's id names the spec
section it comes from. Commands that the spec writes inside ``Field(description="...")`` or a
docstring are tested with the string's content. Fragments (``{{...}}`` blocks, single
mappings, paths) are wrapped into a full command, usually ``! @all->task.x@{{...}}``. Cases
marked "derived" turn a rule stated in prose into a concrete command.

Where the DSL design (DESIGN.md and its decisions) settles something the spec leaves open,
the case says so in a comment.

Semantic rules (field context scoping, subchain rules, nesting levels, Enum-only
``@resampled`` fields, variable/field name conflicts) belong to the structure stage. The
spec's examples that break only those rules are syntactically valid and must parse. Each
one has a comment saying so.
"""

from __future__ import annotations

import pytest

from langtree import parse_command
from langtree.dsl import (
    Command,
    CommentCommand,
    ExecutionCommand,
    NodeModifierCommand,
    ResamplingCommand,
    VariableAssignmentCommand,
    VariableReference,
)
from tests.dsl.parsed import each, parse_error, sends, to

# The triple-quoted description of `DocumentProcessor.sections` in "@each Commands >
# Examples with Field Context Scoping", with its layout kept exactly as in the spec.
DOCUMENT_PROCESSOR_SECTIONS = """
        ! @each[sections.paragraphs]->analyzer@{{
            value.analysis.segments=sections.paragraphs,
            value.analysis.metadata.title=sections.title
        }}*
    """

# "@each Commands > Variable Mapping Constraints": a comment after every mapping.
VARIABLE_MAPPING_CONSTRAINTS = """\
! @each[sections.subsections]->task.analyzer@{{
    value.results.items=sections.subsections, # ✅ Exact subchain match
    value.results.content=sections.subsections.text, # ✅ Valid subchain with field access
    value.results.metadata=sections.subsections.meta # ✅ Valid subchain with field access
}}*"""

# "Whitespace Handling > Multiline Rules", the three examples.
MULTILINE_MAPPINGS = """\
! @each[items]->task@{{
    value.title=items.title,
    value.content=items.content,
    prompt.metadata=items.meta
}}*"""

MULTILINE_INCLUSION = """\
! @each[
    document.sections.subsections
]->task@{{value.data=subsections}}*"""

MULTILINE_ARGUMENTS = """\
! llm(
    "gpt-4-complex",
    override=true
)"""

# "Multiline Rules" mappings with a space around a dot on line 3 (derived, invalid).
MULTILINE_SPACE_AROUND_DOT = """\
! @each[items]->task@{{
    value.title=items.title,
    value . content=items.content
}}*"""

# Derived from "Continuation Rules": empty lines, comments and a trailing comma inside.
MULTILINE_EMPTY_LINES_AND_COMMENTS = """\
! @each[items]->task@{{
    # the title first
    value.title=items.title,

    value.content=items.content, # trailing comma
}}* # one task per item"""

MULTILINE_ARGUMENTS_WITH_COMMENT = """\
! llm(
    "gpt-4-complex", # the big one
    override=true
)"""


VALID_CASES = [
    # --- @each Commands > Field Context Examples (Field descriptions) -------------------------
    pytest.param(
        "! @each[sections.paragraphs]->other.analyzer@{{other.results=sections.paragraphs}}*",
        each("sections.paragraphs", "other.analyzer", to("other.results", "sections.paragraphs")),
        id="each-field-context-valid-sections",
    ),
    # The spec marks this ❌ because the inclusion path does not start with the field that
    # holds it ('command'). That is a structure-stage rule; the text itself parses.
    pytest.param(
        "! @each[sections.paragraphs]->analyzer@{{value.results=sections.paragraphs}}*",
        each("sections.paragraphs", "analyzer", to("value.results", "sections.paragraphs")),
        id="each-field-context-invalid-command-semantic-only",
    ),
    pytest.param(
        "! @each[analysis]->task.processor@{{task.results=analysis,other.meta=analysis.metadata}}*",
        each(
            "analysis",
            "task.processor",
            to("task.results", "analysis"),
            to("other.meta", "analysis.metadata"),
        ),
        id="each-field-context-valid-analysis",
    ),
    # --- @each Commands > Variable Mapping Constraints (multiline, comments inside) -----------
    pytest.param(
        VARIABLE_MAPPING_CONSTRAINTS,
        each(
            "sections.subsections",
            "task.analyzer",
            to("value.results.items", "sections.subsections"),
            to("value.results.content", "sections.subsections.text"),
            to("value.results.metadata", "sections.subsections.meta"),
        ),
        id="each-variable-mapping-constraints",
    ),
    # --- @each Commands > Nesting Examples ----------------------------------------------------
    pytest.param(
        "! @each[sections.paragraphs]->task@{{value.results=sections.paragraphs}}*"
        " # ✅ results must have 2 levels",
        each(
            "sections.paragraphs",
            "task",
            to("value.results", "sections.paragraphs"),
            comment="✅ results must have 2 levels",
        ),
        id="each-nesting-valid-results",
    ),
    # ❌ in the spec only because of nesting levels (a structure-stage rule); parses.
    pytest.param(
        "! @each[sections.paragraphs]->task@{{value.title=sections.title}}*"
        " # ❌ title has 0 levels, no mapping matches 2",
        each(
            "sections.paragraphs",
            "task",
            to("value.title", "sections.title"),
            comment="❌ title has 0 levels, no mapping matches 2",
        ),
        id="each-nesting-title-semantic-only",
    ),
    # ❌ in the spec only because of nesting levels (a structure-stage rule); parses.
    pytest.param(
        "! @each[sections.paragraphs]->task@{{value.deep=sections.paragraphs}}*"
        " # ❌ deep has 3+ levels, exceeds iteration depth",
        each(
            "sections.paragraphs",
            "task",
            to("value.deep", "sections.paragraphs"),
            comment="❌ deep has 3+ levels, exceeds iteration depth",
        ),
        id="each-nesting-deep-semantic-only",
    ),
    # --- @each Commands > Examples with Field Context Scoping ---------------------------------
    pytest.param(
        "! @each[documents]->task.summarize@{{value.summary=documents.content}}*",
        each("documents", "task.summarize", to("value.summary", "documents.content")),
        id="each-scoping-documents",
    ),
    pytest.param(
        DOCUMENT_PROCESSOR_SECTIONS,
        each(
            "sections.paragraphs",
            "analyzer",
            to("value.analysis.segments", "sections.paragraphs"),
            to("value.analysis.metadata.title", "sections.title"),
        ),
        id="each-scoping-sections-multiline-description",
    ),
    # --- @all Commands > Syntax (placeholders parse as ordinary identifiers) ------------------
    pytest.param(
        "! @all->destination@{{variable_mappings}} # 1:1 relationship",
        sends("destination", to("variable_mappings"), comment="1:1 relationship"),
        id="all-syntax-one-to-one",
    ),
    pytest.param(
        "! @all->destination@{{variable_mappings}}* # 1:n relationship",
        sends("destination", to("variable_mappings"), star=True, comment="1:n relationship"),
        id="all-syntax-one-to-many",
    ),
    pytest.param(
        "! @->destination@{{variable_mappings}} # Shorthand syntax",
        sends("destination", to("variable_mappings"), comment="Shorthand syntax"),
        id="all-syntax-shorthand",
    ),
    # --- @all Commands > Examples (Field descriptions) ----------------------------------------
    pytest.param(
        "! @->task.analyzer@{{prompt.source_data=summary}}",
        sends("task.analyzer", to("prompt.source_data", "summary")),
        id="all-examples-summary",
    ),
    pytest.param(
        "! @all->task.process@{{value.data=input_data}}*",
        sends("task.process", to("value.data", "input_data"), star=True),
        id="all-examples-input-data",
    ),
    pytest.param(
        "! @->task.analyze@{{prompt.context=*}}",
        sends("task.analyze", to("prompt.context", "*")),
        id="all-examples-wildcard",
    ),
    pytest.param(
        "! @all->summary@{{outputs.main_analysis}}*",
        sends("summary", to("outputs.main_analysis"), star=True),
        id="all-examples-implicit-main-analysis",
    ),
    # --- Variable Assignment Commands > Examples ----------------------------------------------
    pytest.param(
        "! count=5 # Integer variable",
        VariableAssignmentCommand(variable_name="count", value=5, comment="Integer variable"),
        id="assignment-int",
    ),
    pytest.param(
        "! threshold=2.5 # Float variable",
        VariableAssignmentCommand(variable_name="threshold", value=2.5, comment="Float variable"),
        id="assignment-float",
    ),
    pytest.param(
        '! name="analysis_task" # String variable',
        VariableAssignmentCommand(
            variable_name="name", value="analysis_task", comment="String variable"
        ),
        id="assignment-string",
    ),
    pytest.param(
        "! title='Multi-word title' # String with single quotes",
        VariableAssignmentCommand(
            variable_name="title", value="Multi-word title", comment="String with single quotes"
        ),
        id="assignment-single-quotes",
    ),
    pytest.param(
        r'! path="file with \"quotes\"" # Escaped quotes',
        VariableAssignmentCommand(
            variable_name="path", value='file with "quotes"', comment="Escaped quotes"
        ),
        id="assignment-escaped-quotes",
    ),
    pytest.param(
        "! debug=true # Boolean variable",
        VariableAssignmentCommand(variable_name="debug", value=True, comment="Boolean variable"),
        id="assignment-true",
    ),
    pytest.param(
        "! verbose=false # Boolean variable",
        VariableAssignmentCommand(variable_name="verbose", value=False, comment="Boolean variable"),
        id="assignment-false",
    ),
    pytest.param(
        "! override=true # Boolean for command arguments",
        VariableAssignmentCommand(
            variable_name="override", value=True, comment="Boolean for command arguments"
        ),
        id="assignment-override",
    ),
    # --- Execution Commands > Examples --------------------------------------------------------
    pytest.param(
        "! resample(5) # Literal argument",
        ExecutionCommand(
            command_name="resample",
            arguments=(5,),
            named_arguments=(),
            comment="Literal argument",
        ),
        id="execution-resample-literal",
    ),
    pytest.param(
        "! resample(count) # Variable argument",
        ExecutionCommand(
            command_name="resample",
            arguments=(VariableReference("count"),),
            named_arguments=(),
            comment="Variable argument",
        ),
        id="execution-resample-variable",
    ),
    pytest.param(
        "! resample(iterations) # Variable from current scope",
        ExecutionCommand(
            command_name="resample",
            arguments=(VariableReference("iterations"),),
            named_arguments=(),
            comment="Variable from current scope",
        ),
        id="execution-resample-scope-variable",
    ),
    pytest.param(
        '! llm("gpt-4") # Select model for subtree',
        ExecutionCommand(
            command_name="llm",
            arguments=("gpt-4",),
            named_arguments=(),
            comment="Select model for subtree",
        ),
        id="execution-llm-literal",
    ),
    pytest.param(
        '! llm("claude-3", override=true) # Override model for entire subtree',
        ExecutionCommand(
            command_name="llm",
            arguments=("claude-3",),
            named_arguments=(("override", True),),
            comment="Override model for entire subtree",
        ),
        id="execution-llm-override-true",
    ),
    pytest.param(
        "! llm(model_name, override=false) # Variable arguments",
        ExecutionCommand(
            command_name="llm",
            arguments=(VariableReference("model_name"),),
            named_arguments=(("override", False),),
            comment="Variable arguments",
        ),
        id="execution-llm-variable",
    ),
    # --- LLM Model Selection Commands > Syntax ------------------------------------------------
    pytest.param(
        "! llm(model_key) # Basic model selection",
        ExecutionCommand(
            command_name="llm",
            arguments=(VariableReference("model_key"),),
            named_arguments=(),
            comment="Basic model selection",
        ),
        id="llm-syntax-basic",
    ),
    # The placeholder 'boolean' is an unquoted identifier: a variable reference.
    pytest.param(
        "! llm(model_key, override=boolean) # Model selection with override control",
        ExecutionCommand(
            command_name="llm",
            arguments=(VariableReference("model_key"),),
            named_arguments=(("override", VariableReference("boolean")),),
            comment="Model selection with override control",
        ),
        id="llm-syntax-override",
    ),
    # --- LLM Model Selection Commands > Examples ----------------------------------------------
    pytest.param(
        '! llm("gpt-4") # Use GPT-4 for this node only',
        ExecutionCommand(
            command_name="llm",
            arguments=("gpt-4",),
            named_arguments=(),
            comment="Use GPT-4 for this node only",
        ),
        id="llm-examples-gpt4",
    ),
    pytest.param(
        '! llm("claude-3", override=true) # Use Claude-3 for entire subtree',
        ExecutionCommand(
            command_name="llm",
            arguments=("claude-3",),
            named_arguments=(("override", True),),
            comment="Use Claude-3 for entire subtree",
        ),
        id="llm-examples-claude-override",
    ),
    pytest.param(
        "! llm(model_var) # Use variable-defined model",
        ExecutionCommand(
            command_name="llm",
            arguments=(VariableReference("model_var"),),
            named_arguments=(),
            comment="Use variable-defined model",
        ),
        id="llm-examples-variable",
    ),
    pytest.param(
        '! llm("fast-model", override=false) # Explicit non-override (same as default)',
        ExecutionCommand(
            command_name="llm",
            arguments=("fast-model",),
            named_arguments=(("override", False),),
            comment="Explicit non-override (same as default)",
        ),
        id="llm-examples-override-false",
    ),
    # --- Resampling Aggregation Commands > Examples -------------------------------------------
    # (Whether the field is an Enum is checked by the structure stage.)
    pytest.param(
        "! @resampled[rating]->mean # Numerical aggregation",
        ResamplingCommand(
            field_name="rating", aggregation_function="mean", comment="Numerical aggregation"
        ),
        id="resampled-mean",
    ),
    pytest.param(
        "! @resampled[status]->mode # Most frequent value",
        ResamplingCommand(
            field_name="status", aggregation_function="mode", comment="Most frequent value"
        ),
        id="resampled-mode",
    ),
    pytest.param(
        "! @resampled[priority]->median # Middle value",
        ResamplingCommand(
            field_name="priority", aggregation_function="median", comment="Middle value"
        ),
        id="resampled-median",
    ),
    # --- Node Modifier Commands > Syntax and Examples -----------------------------------------
    pytest.param(
        "! @sequential # Process fields in declaration order",
        NodeModifierCommand(modifier="sequential", comment="Process fields in declaration order"),
        id="modifier-syntax-sequential",
    ),
    pytest.param(
        "! @parallel # Process all fields simultaneously",
        NodeModifierCommand(modifier="parallel", comment="Process all fields simultaneously"),
        id="modifier-syntax-parallel",
    ),
    pytest.param(
        "! together # Shorthand for @parallel",
        NodeModifierCommand(modifier="parallel", comment="Shorthand for @parallel"),
        id="modifier-syntax-together",
    ),
    # Node Modifier Commands > Semantics writes "@parallel/@together": '@together' is accepted
    # as a spelling of 'together'.
    pytest.param(
        "! @together",
        NodeModifierCommand(modifier="parallel"),
        id="modifier-semantics-at-together",
    ),
    pytest.param(
        "! @sequential",
        NodeModifierCommand(modifier="sequential", comment=None),
        id="modifier-examples-analysis-node-docstring",
    ),
    pytest.param(
        "! @parallel",
        NodeModifierCommand(modifier="parallel", comment=None),
        id="modifier-examples-report-node-docstring",
    ),
    pytest.param(
        "! together",
        NodeModifierCommand(modifier="parallel", comment=None),
        id="modifier-examples-quick-node-docstring",
    ),
    # --- Comment Support ----------------------------------------------------------------------
    pytest.param(
        "! # This is a standalone comment",
        CommentCommand(comment="This is a standalone comment"),
        id="comments-syntax-standalone",
    ),
    pytest.param(
        "!# Another standalone comment",
        CommentCommand(comment="Another standalone comment"),
        id="comments-syntax-standalone-no-space",
    ),
    pytest.param(
        "! # comment",
        CommentCommand(comment="comment"),
        id="comments-standalone-syntax",
    ),
    pytest.param(
        "!# comment",
        CommentCommand(comment="comment"),
        id="comments-standalone-syntax-no-space",
    ),
    pytest.param(
        "! # Initialize analysis phase",
        CommentCommand(comment="Initialize analysis phase"),
        id="comments-standalone-initialize",
    ),
    pytest.param(
        "!# TODO: optimize performance",
        CommentCommand(comment="TODO: optimize performance"),
        id="comments-standalone-todo",
    ),
    pytest.param(
        '! model="gpt-4" # Use high-quality model',
        VariableAssignmentCommand(
            variable_name="model", value="gpt-4", comment="Use high-quality model"
        ),
        id="comments-inline-assignment",
    ),
    pytest.param(
        "! @each[items]->task@{{value.data=items}}* # Process each item",
        each("items", "task", to("value.data", "items"), comment="Process each item"),
        id="comments-inline-each",
    ),
    # Derived from the Comment Rules: quote-aware, whitespace before '#' trimmed.
    pytest.param(
        '! name="a # b"    #   c  ',
        VariableAssignmentCommand(variable_name="name", value="a # b", comment="c"),
        id="comments-rules-quote-aware-derived",
    ),
    pytest.param(
        '! llm("model#1")',
        ExecutionCommand(
            command_name="llm", arguments=("model#1",), named_arguments=(), comment=None
        ),
        id="comments-rules-quote-aware-argument-derived",
    ),
    # --- Assembly Variables > Examples --------------------------------------------------------
    pytest.param(
        "! count=5 # Define assembly variable",
        VariableAssignmentCommand(
            variable_name="count", value=5, comment="Define assembly variable"
        ),
        id="assembly-variables-count",
    ),
    pytest.param(
        "! resample(count) # Use in command argument",
        ExecutionCommand(
            command_name="resample",
            arguments=(VariableReference("count"),),
            named_arguments=(),
            comment="Use in command argument",
        ),
        id="assembly-variables-resample",
    ),
    pytest.param(
        "! threshold=2.5 # Available to all child nodes",
        VariableAssignmentCommand(
            variable_name="threshold", value=2.5, comment="Available to all child nodes"
        ),
        id="assembly-variables-threshold",
    ),
    # --- Scope Context Variables (mapping fragments wrapped in a command) ---------------------
    pytest.param(
        "! @all->task.x@{{prompt.source_data=summary}}",
        sends("task.x", to("prompt.source_data", "summary")),
        id="scope-prompt-example",
    ),
    pytest.param(
        "! @all->task.x@{{value.title=sections.title}}",
        sends("task.x", to("value.title", "sections.title")),
        id="scope-value-example",
    ),
    pytest.param(
        "! @all->task.x@{{outputs.main_analysis=main_analysis}}",
        sends("task.x", to("outputs.main_analysis", "main_analysis")),
        id="scope-outputs-example",
    ),
    pytest.param(
        "! @all->task.x@{{prompt.results=task.analyzer.results}}",
        sends("task.x", to("prompt.results", "task.analyzer.results")),
        id="scope-task-example",
    ),
    pytest.param(
        "! @all->prompt.external@{{variable_name=source}}",
        sends("prompt.external", to("variable_name", "source")),
        id="scope-prompt-external-syntax",
    ),
    pytest.param(
        "! @all->prompt.external@{{context_data=*}}",
        sends("prompt.external", to("context_data", "*")),
        id="scope-prompt-external-example",
    ),
    # "Scope Resolution > Path Component Types" and "Nested paths supported"; the unknown
    # scope 'scope' is not a parse error.
    pytest.param(
        "! @each[scope.path]->scope.path@{{scope.path=scope.deeply.nested.path}}*",
        each("scope.path", "scope.path", to("scope.path", "scope.deeply.nested.path")),
        id="scope-resolution-path-components",
    ),
    # --- Data Flow Examples -------------------------------------------------------------------
    pytest.param(
        "! @sequential",
        NodeModifierCommand(modifier="sequential", comment=None),
        id="data-flow-sequential-docstring",
    ),
    pytest.param(
        "! @sequential",
        NodeModifierCommand(modifier="sequential", comment=None),
        id="data-flow-forward-references-docstring",
    ),
    pytest.param(
        "! @->external_conclusion@{{value.conclusion=analysis}}",
        sends("external_conclusion", to("value.conclusion", "analysis")),
        id="data-flow-forward-references-conclusion",
    ),
    # --- Variable Mappings > Implicit Assignment (wrapped) ------------------------------------
    pytest.param(
        "! @all->task.x@{{prompt.target_data}}",
        sends("task.x", to("prompt.target_data")),
        id="implicit-prompt-target-data",
    ),
    pytest.param(
        "! @all->task.x@{{value.title}}",
        sends("task.x", to("value.title")),
        id="implicit-value-title",
    ),
    pytest.param(
        "! @all->task.x@{{outputs.main_analysis}}",
        sends("task.x", to("outputs.main_analysis")),
        id="implicit-outputs-main-analysis",
    ),
    # The explicit equivalents the spec gives, with spaces around '=' (allowed in braces).
    pytest.param(
        "! @all->task.x@{{prompt.target_data = target_data}}",
        sends("task.x", to("prompt.target_data", "target_data")),
        id="implicit-equivalent-prompt-target-data",
    ),
    pytest.param(
        "! @all->task.x@{{value.title = title}}",
        sends("task.x", to("value.title", "title")),
        id="implicit-equivalent-value-title",
    ),
    pytest.param(
        "! @all->task.x@{{outputs.main_analysis = main_analysis}}",
        sends("task.x", to("outputs.main_analysis", "main_analysis")),
        id="implicit-equivalent-outputs-main-analysis",
    ),
    # --- Variable Mappings > Multiple Mappings (wrapped) --------------------------------------
    pytest.param(
        "! @all->task.x@{{outputs.field1, outputs.field2}}",
        sends("task.x", to("outputs.field1"), to("outputs.field2")),
        id="multiple-rules-valid-all-implicit",
    ),
    pytest.param(
        "! @all->task.x@{{value.field1=source1, value.field2=source2}}",
        sends("task.x", to("value.field1", "source1"), to("value.field2", "source2")),
        id="multiple-rules-valid-all-explicit",
    ),
    pytest.param(
        "! @all->task.x@{{prompt.title=sections.title, value.content=sections.content,"
        " outputs.meta=sections.metadata}}",
        sends(
            "task.x",
            to("prompt.title", "sections.title"),
            to("value.content", "sections.content"),
            to("outputs.meta", "sections.metadata"),
        ),
        id="multiple-examples-all-explicit",
    ),
    pytest.param(
        "! @all->task.x@{{prompt.title, prompt.summary, prompt.metadata}}",
        sends("task.x", to("prompt.title"), to("prompt.summary"), to("prompt.metadata")),
        id="multiple-examples-all-implicit",
    ),
    # --- Path Syntax (wrapped) ----------------------------------------------------------------
    pytest.param(
        "! @all->title@{{sections.title=document.structure.sections.subsections.content}}",
        sends("title", to("sections.title", "document.structure.sections.subsections.content")),
        id="paths-basic",
    ),
    pytest.param(
        "! @all->variable@{{prompt.variable=variable,prompt.deeply.nested.variable=variable}}",
        sends(
            "variable",
            to("prompt.variable", "variable"),
            to("prompt.deeply.nested.variable", "variable"),
        ),
        id="paths-scoped",
    ),
    pytest.param(
        "! @all->x.y.z@{{p.a=custom.field}}",
        sends("x.y.z", to("p.a", "custom.field")),
        id="paths-special-cases",
    ),
    # --- Relationship Types -------------------------------------------------------------------
    pytest.param(
        "! @->task.process@{{value.result=input}}",
        sends("task.process", to("value.result", "input")),
        id="relationship-one-to-one",
    ),
    pytest.param(
        "! @all->task.generate@{{prompt.seed=topic}}*",
        sends("task.generate", to("prompt.seed", "topic"), star=True),
        id="relationship-one-to-many",
    ),
    pytest.param(
        "! @each[items]->task.process@{{value.item=items}}*",
        each("items", "task.process", to("value.item", "items")),
        id="relationship-many-to-many",
    ),
    # --- Validation Rules > Warning Patterns (valid but unusual; wrapped) ---------------------
    pytest.param(
        "! @all->a.b.c.d.e.f.g@{{unknown.field=b,p.a=b}}",
        sends("a.b.c.d.e.f.g", to("unknown.field", "b"), to("p.a", "b")),
        id="warning-patterns",
    ),
    # --- Whitespace Handling > Allowed Whitespace (wrapped) -----------------------------------
    pytest.param(
        "! @each[document.sections.subsections]->task@{{value.item=items,prompt.context=data}}*",
        each(
            "document.sections.subsections",
            "task",
            to("value.item", "items"),
            to("prompt.context", "data"),
        ),
        id="whitespace-allowed-inside-brackets-and-braces",
    ),
    # '(arg1,arg2)' needs a registered command: llm(model_key, override) takes two.
    pytest.param(
        "! llm(arg1,arg2)",
        ExecutionCommand(
            command_name="llm",
            arguments=(VariableReference("arg1"), VariableReference("arg2")),
            named_arguments=(),
            comment=None,
        ),
        id="whitespace-allowed-inside-parentheses",
    ),
    # Derived: spaces next to the brackets and around ',' and '=' inside them.
    pytest.param(
        "! @each[ items ]->task@{{ value.item = items , prompt.context=data }}*",
        each("items", "task", to("value.item", "items"), to("prompt.context", "data")),
        id="whitespace-allowed-spaces-inside-derived",
    ),
    pytest.param(
        '! llm( "gpt-4" , override = true )',
        ExecutionCommand(
            command_name="llm",
            arguments=("gpt-4",),
            named_arguments=(("override", True),),
            comment=None,
        ),
        id="whitespace-allowed-spaces-inside-parentheses-derived",
    ),
    # --- Whitespace Handling > Multiline Rules ------------------------------------------------
    pytest.param(
        MULTILINE_MAPPINGS,
        each(
            "items",
            "task",
            to("value.title", "items.title"),
            to("value.content", "items.content"),
            to("prompt.metadata", "items.meta"),
        ),
        id="multiline-mappings",
    ),
    pytest.param(
        MULTILINE_INCLUSION,
        each("document.sections.subsections", "task", to("value.data", "subsections")),
        id="multiline-inclusion",
    ),
    pytest.param(
        MULTILINE_ARGUMENTS,
        ExecutionCommand(
            command_name="llm",
            arguments=("gpt-4-complex",),
            named_arguments=(("override", True),),
            comment=None,
        ),
        id="multiline-arguments",
    ),
    # --- Whitespace Handling > Continuation Rules ---------------------------------------------
    pytest.param(
        "! @each[items]->task@{{value.item=items,}}*",
        each("items", "task", to("value.item", "items")),
        id="continuation-trailing-comma",
    ),
    pytest.param(
        MULTILINE_EMPTY_LINES_AND_COMMENTS,
        each(
            "items",
            "task",
            to("value.title", "items.title"),
            to("value.content", "items.content"),
            comment="one task per item",
        ),
        id="continuation-empty-lines-and-comments-derived",
    ),
    pytest.param(
        MULTILINE_ARGUMENTS_WITH_COMMENT,
        ExecutionCommand(
            command_name="llm",
            arguments=("gpt-4-complex",),
            named_arguments=(("override", True),),
            comment=None,
        ),
        id="continuation-comment-in-arguments-derived",
    ),
    # --- Whitespace Handling > Examples > Valid Commands --------------------------------------
    pytest.param(
        "! @each[items]->task@{{value.item=items}}*",
        each("items", "task", to("value.item", "items")),
        id="whitespace-valid-strict-spacing",
    ),
    pytest.param(
        "! @each[document.sections]->task.analyzer@{{value.title=sections.title}}*",
        each("document.sections", "task.analyzer", to("value.title", "sections.title")),
        id="whitespace-valid-complex-paths",
    ),
    pytest.param(
        "! @all->task.process@{{prompt.context=*}}*",
        sends("task.process", to("prompt.context", "*"), star=True),
        id="whitespace-valid-all-wildcard",
    ),
    pytest.param(
        "! @each[items]->task@{{value.item=items}}*",
        each("items", "task", to("value.item", "items")),
        id="whitespace-valid-space-after-bang",
    ),
    # Derived from "After '!'": several spaces, or none ('!' WS* in the grammar).
    pytest.param(
        "!   @each[items]->task@{{value.item=items}}*",
        each("items", "task", to("value.item", "items")),
        id="whitespace-valid-spaces-after-bang-derived",
    ),
    pytest.param(
        "!@each[items]->task@{{value.item=items}}*",
        each("items", "task", to("value.item", "items")),
        id="whitespace-valid-no-space-after-bang-derived",
    ),
    # --- Semantic Constraints: "@each without inclusion" parses (inclusion_path=None) ---------
    pytest.param(
        "! @each->task@{{value.item=items}}*",
        each(None, "task", to("value.item", "items")),
        id="semantic-constraints-each-without-inclusion",
    ),
    # --- Node Execution Modifiers (docstrings; indented as inside a docstring) ----------------
    pytest.param(
        "    ! @sequential",
        NodeModifierCommand(modifier="sequential", comment=None),
        id="node-execution-sequential-docstring",
    ),
    pytest.param(
        "    ! @parallel",
        NodeModifierCommand(modifier="parallel", comment=None),
        id="node-execution-parallel-docstring",
    ),
    # --- Context Flow Rules -------------------------------------------------------------------
    pytest.param(
        "! @sequential",
        NodeModifierCommand(modifier="sequential", comment=None),
        id="context-flow-sequential-docstring",
    ),
    pytest.param(
        "! @->external@{{value.conclusion=data}}",
        sends("external", to("value.conclusion", "data")),
        id="context-flow-sequential-conclusion",
    ),
    pytest.param(
        "! @parallel",
        NodeModifierCommand(modifier="parallel", comment=None),
        id="context-flow-parallel-docstring",
    ),
    pytest.param(
        "! @each[sections]->summary.node@{{prompt.section_titles=sections.title}}*",
        each("sections", "summary.node", to("prompt.section_titles", "sections.title")),
        id="context-flow-external-forwarding-override",
    ),
    pytest.param(
        "! @sequential",
        NodeModifierCommand(modifier="sequential", comment=None),
        id="context-flow-external-forwarding-docstring",
    ),
    pytest.param(
        "! @->conclusions@{{prompt.analysis_results=analysis.results}}",
        sends("conclusions", to("prompt.analysis_results", "analysis.results")),
        id="context-flow-cross-node",
    ),
    pytest.param(
        "! @parallel",
        NodeModifierCommand(modifier="parallel", comment=None),
        id="context-flow-cross-node-docstring",
    ),
    # --- Examples Collection > Basic Usage ----------------------------------------------------
    pytest.param(
        "! @->task.summarize@{{prompt.text=content}}",
        sends("task.summarize", to("prompt.text", "content")),
        id="collection-basic-one-to-one",
    ),
    pytest.param(
        "! @each[sections]->task.analyze@{{value.title=sections.title}}*",
        each("sections", "task.analyze", to("value.title", "sections.title")),
        id="collection-basic-collection-processing",
    ),
    pytest.param(
        "! @all->task.generate@{{prompt.seed=topic}}*",
        sends("task.generate", to("prompt.seed", "topic"), star=True),
        id="collection-basic-multiple-outputs",
    ),
    # --- Examples Collection > Advanced Patterns ----------------------------------------------
    pytest.param(
        "! @each[prompt.items]->value.processor@{{outputs.result=task.data}}*",
        each("prompt.items", "value.processor", to("outputs.result", "task.data")),
        id="collection-advanced-multiple-scopes",
    ),
    pytest.param(
        "! @each[doc.chapters.sections]->task.deep_analysis"
        "@{{value.path=doc.chapters.sections.title}}*",
        each(
            "doc.chapters.sections",
            "task.deep_analysis",
            to("value.path", "doc.chapters.sections.title"),
        ),
        id="collection-advanced-deep-nesting",
    ),
    pytest.param(
        "! @->task.comprehensive@{{prompt.context=*}}",
        sends("task.comprehensive", to("prompt.context", "*")),
        id="collection-advanced-wildcard",
    ),
]


# Each case: text, message, line, column, hint. Messages that the spec words (its "Error
# Messages" and "Example Error Messages") start with the spec's text.
INVALID_CASES = [
    # --- Execution Commands / Comment Support / Variable System: placeholder syntax -----------
    # The spec's syntax lines use metavariables. Taken literally they break its own rules:
    # commands "must be registered in command registry" and an assignment's "unquoted
    # non-numeric, non-boolean values throw parse-time exception".
    pytest.param(
        "! command_name(arguments) # Basic execution",
        "Unknown command 'command_name'",
        1,
        3,
        "the built-in commands are input(), llm(...), resample(...) and transform(...); "
        "@context[...] says what a step's context holds",
        id="execution-syntax-placeholder-basic",
    ),
    pytest.param(
        "! command_name(arg1, arg2) # Multiple arguments",
        "Unknown command 'command_name'",
        1,
        3,
        "the built-in commands are input(), llm(...), resample(...) and transform(...); "
        "@context[...] says what a step's context holds",
        id="execution-syntax-placeholder-multiple",
    ),
    pytest.param(
        "! command_name() # No arguments",
        "Unknown command 'command_name'",
        1,
        3,
        "the built-in commands are input(), llm(...), resample(...) and transform(...); "
        "@context[...] says what a step's context holds",
        id="execution-syntax-placeholder-none",
    ),
    pytest.param(
        "! command # This is an inline comment",
        "Unknown command 'command'",
        1,
        3,
        "write one of @each[...]->...@{{...}}*, @all->...@{{...}}, @sequential, @parallel, "
        "together, @resampled[field]->mode, @context[...], name=value, input(), llm(...), "
        "resample(...) or transform(...)",
        id="comments-syntax-placeholder-command",
    ),
    pytest.param(
        "! variable=value # Another inline comment",
        "Unquoted value 'value' must be a number, true or false",
        1,
        12,
        'quote text: write "value"',
        id="comments-syntax-placeholder-assignment",
    ),
    pytest.param(
        "! var=value",
        "Unquoted value 'value' must be a number, true or false",
        1,
        7,
        'quote text: write "value"',
        id="variable-taxonomy-placeholder-assignment",
    ),
    # --- Data Flow Examples > Manual Forwarding -----------------------------------------------
    # The spec's example omits the '*' that "@each commands require"; the parser enforces
    # the rule.
    pytest.param(
        "! @each[sections]->summary@{{outputs.section_data=sections}}",
        "@each commands require '*' multiplicity indicator",
        1,
        59,
        "add '*' right after '}}'",
        id="data-flow-manual-forwarding-missing-star",
    ),
    # --- Field Type Detection > Leaf List Limitations (no index syntax in paths; wrapped) -----
    pytest.param(
        "! @all->task.x@{{value.t=sections.titles[0]}}",
        "Expected '}}' to close '{{' opened at line 1, column 16, got '['",
        1,
        41,
        "separate items with ',' and close with '}}'",
        id="leaf-list-index-derived",
    ),
    # --- Variable Mappings > Multiple Mappings: cannot mix implicit and explicit --------------
    pytest.param(
        "! @all->task.x@{{outputs.field1, value.field2=source}}",
        "Cannot mix implicit and explicit variable mappings",
        1,
        18,
        "write every mapping as 'target=source', e.g. 'outputs.field1=field1'",
        id="multiple-rules-invalid-mixed",
    ),
    # --- Variable Mappings > Wildcard Assignment: explicit, so not mixed with implicit --------
    pytest.param(
        "! @all->task.x@{{prompt.a, prompt.b=*}}",
        "Wildcard (*) cannot be used with multiple variable mappings",
        1,
        28,
        "send the whole node in a command of its own, e.g. '@{{prompt.context=*}}'",
        id="wildcard-restrictions-with-implicit",
    ),
    # --- Path Syntax > Special Cases: "Empty components not allowed: prompt." (wrapped) -------
    pytest.param(
        "! @->task@{{prompt.=summary}}",
        "Empty path component after 'prompt.'",
        1,
        19,
        "name a field after '.', or remove the trailing '.' (e.g. 'prompt.context')",
        id="paths-empty-component",
    ),
    # --- Validation Rules > Required Elements -------------------------------------------------
    pytest.param(
        "@each[items]->task@{{value.item=items}}*",
        "Command must start with '!', got '@'",
        1,
        1,
        "begin the command with '!', e.g. '! @sequential'",
        id="required-bang",
    ),
    pytest.param(
        "! @each[items]task@{{value.item=items}}*",
        "Expected '->' after ']', got 'task'",
        1,
        15,
        "commands send data with '->', e.g. '@all->task.target@{{prompt.x=field}}'",
        id="required-arrow-derived",
    ),
    pytest.param(
        "! @each[items->task@{{value.item=items}}*",
        "Expected ']' to close '[' opened at line 1, column 8, got '->'",
        1,
        14,
        "separate items with ',' and close with ']'",
        id="required-bracket-matching-derived",
    ),
    # --- Validation Rules > Forbidden Patterns ------------------------------------------------
    pytest.param(
        "! @all[items]->...",
        "@all commands cannot have inclusion brackets",
        1,
        3,
        "use '@each[items]->...*' to iterate, or remove the brackets",
        id="forbidden-all-inclusion",
    ),
    pytest.param(
        "! @all[items]->task@{{value.item=items}}",
        "@all commands cannot have inclusion brackets",
        1,
        3,
        "use '@each[items]->...*' to iterate, or remove the brackets",
        id="forbidden-all-inclusion-completed",
    ),
    pytest.param(
        "! @each[]->...",
        "@each commands cannot have an empty inclusion path",
        1,
        8,
        "name the list to iterate over, e.g. '@each[sections]'",
        id="forbidden-each-empty-inclusion",
    ),
    pytest.param(
        "! @each[]->task@{{value.item=items}}*",
        "@each commands cannot have an empty inclusion path",
        1,
        8,
        "name the list to iterate over, e.g. '@each[sections]'",
        id="forbidden-each-empty-inclusion-completed",
    ),
    pytest.param(
        "! @each[items]->task@{{value=*}}*",
        "@each commands cannot use wildcard (*) in variable mappings",
        1,
        30,
        "name the source field, e.g. 'value.item=items', or use '@all' to send the whole node",
        id="forbidden-each-wildcard",
    ),
    pytest.param(
        "! @->task@{{a=*,b=c}}",
        "Wildcard (*) cannot be used with multiple variable mappings",
        1,
        13,
        "send the whole node in a command of its own, e.g. '@{{prompt.context=*}}'",
        id="forbidden-wildcard-multiple-mappings",
    ),
    pytest.param(
        "! @->task@{{=value}}",
        "Empty variable name in mapping",
        1,
        13,
        "write the target before '=', e.g. 'prompt.context=summary'",
        id="forbidden-empty-variable-name",
    ),
    pytest.param(
        "! @->task@{{prompt.var=}}",
        "Empty source path in mapping",
        1,
        23,
        "write the source after '=', e.g. 'prompt.context=summary'",
        id="forbidden-empty-source-path",
    ),
    # --- Whitespace Handling > Examples > Invalid Commands ------------------------------------
    pytest.param(
        "! @each [items]->task@{{value.item=items}}*",
        "Space before '[' not allowed - use '@each[items]' not '@each [items]'",
        1,
        8,
        "write '@each[' with no space",
        id="whitespace-invalid-space-before-bracket",
    ),
    pytest.param(
        "! @each[items] ->task@{{value.item=items}}*",
        "Space after ']' not allowed - use '[items]->' not '[items] ->'",
        1,
        14,
        "write ']->' with no space",
        id="whitespace-invalid-space-after-bracket",
    ),
    pytest.param(
        "! @each[items]-> task@{{value.item=items}}*",
        "Space around '->' not allowed - use ']->' not '] ->' or '-> '",
        1,
        15,
        "write '->' with no spaces",
        id="whitespace-invalid-space-after-arrow",
    ),
    pytest.param(
        "! @ each[items]->task@{{value.item=items}}*",
        "Space around '@' not allowed - use '@each' not '@ each' or ' @each'",
        1,
        3,
        "write the command name right after '@', e.g. '@each'",
        id="whitespace-invalid-space-after-at",
    ),
    pytest.param(
        "! @each[items]->task @{{value.item=items}}*",
        "Space before '{{' not allowed - use 'task@{{' not 'task @{{'",
        1,
        21,
        "write '@{{' right after the destination",
        id="whitespace-invalid-space-before-braces",
    ),
    pytest.param(
        "! @each[items]->task@{{value.item=items}} *",
        "Space after '}}' not allowed - use '}}*' not '}} *'",
        1,
        40,
        "write '}}*' with no space",
        id="whitespace-invalid-space-after-braces",
    ),
    pytest.param(
        "! @each[document . sections]->task@{{value.item=items}}*",
        "Space around '.' not allowed - use 'document.sections' not 'document . sections'",
        1,
        9,
        "write 'document.sections'",
        id="whitespace-invalid-space-around-dots",
    ),
    # --- Whitespace Handling > Prohibited Whitespace (prose rules; derived) -------------------
    pytest.param(
        "! @all ->task@{{prompt.x=y}}",
        "Space around '->' not allowed - use ']->' not '] ->' or '-> '",
        1,
        7,
        "write '->' with no spaces",
        id="whitespace-prohibited-space-before-arrow-derived",
    ),
    pytest.param(
        "! @all->task@ {{prompt.x=y}}",
        "Space before '{{' not allowed - use 'task@{{' not 'task @{{'",
        1,
        13,
        "write '@{{' with no space",
        id="whitespace-prohibited-space-between-at-and-braces-derived",
    ),
    pytest.param(
        "! @all->task@{{prompt.x=y}} *",
        "Space after '}}' not allowed - use '}}*' not '}} *'",
        1,
        26,
        "write '}}*' with no space",
        id="whitespace-prohibited-all-space-after-braces-derived",
    ),
    # Inside braces spaces are allowed, but never around '.' in a path (decision).
    pytest.param(
        "! @each[items]->task@{{value . item=items}}*",
        "Space around '.' not allowed - use 'document.sections' not 'document . sections'",
        1,
        24,
        "write 'value.item'",
        id="whitespace-prohibited-dots-inside-braces-derived",
    ),
    # Outside brackets '=' takes no spaces (decision; spec "Strict Whitespace Rules").
    pytest.param(
        "! name = 5",
        "Space around '=' not allowed - use 'count=5' not 'count = 5'",
        1,
        7,
        "write 'name=' with no spaces",
        id="whitespace-prohibited-assignment-equals-derived",
    ),
    # --- Whitespace Handling > Continuation Rules: only inside brackets (derived) -------------
    pytest.param(
        "! @each[items]\n->task@{{value.item=items}}*",
        "A command may continue on the next line only inside [...], {{...}} or (...)",
        1,
        15,
        "join the lines, or break the line inside the brackets",
        id="continuation-outside-brackets-derived",
    ),
    pytest.param(
        MULTILINE_SPACE_AROUND_DOT,
        "Space around '.' not allowed - use 'document.sections' not 'document . sections'",
        3,
        5,
        "write 'value.content'",
        id="multiline-space-around-dot-derived",
    ),
    pytest.param(
        '! llm(\n    "gpt-4-complex",\n    override=true',
        "Unclosed '(' opened at line 1, column 6",
        1,
        6,
        "add ')' to close it",
        id="multiline-unclosed-parenthesis-derived",
    ),
    # --- Validation Rules > Variable Assignment Validation (derived) --------------------------
    pytest.param(
        "! name=analysis_task",
        "Unquoted value 'analysis_task' must be a number, true or false",
        1,
        8,
        'quote text: write "analysis_task"',
        id="assignment-validation-unquoted-text",
    ),
    pytest.param(
        "! debug=True",
        "Unquoted value 'True' must be a number, true or false",
        1,
        9,
        "booleans are lower case: write 'true'",
        id="assignment-validation-booleans-case-sensitive",
    ),
    # --- LLM Model Selection Commands > Validation (derived) ----------------------------------
    pytest.param(
        "! llm()",
        "llm() missing required argument 'model_key'",
        1,
        7,
        "call it as 'llm(\"model-key\")' or 'llm(\"model-key\", override=true)'",
        id="llm-validation-too-few-arguments",
    ),
    pytest.param(
        '! llm("gpt-4", true, 3)',
        "llm() takes at most 2 argument(s), got 3",
        1,
        22,
        "call it as 'llm(\"model-key\")' or 'llm(\"model-key\", override=true)'",
        id="llm-validation-too-many-arguments",
    ),
    pytest.param(
        '! llm("gpt-4", override="yes")',
        "llm() argument 'override' must be true or false, got \"yes\"",
        1,
        16,
        "pass true or false for 'override'",
        id="llm-validation-override-boolean",
    ),
    # --- Grammar: aggregation_function ::= mean | median | mode | sum | min | max (derived) ---
    pytest.param(
        "! @resampled[rating]->average",
        "Unknown aggregation function 'average'",
        1,
        23,
        "use one of mean, median, mode, sum, min, max",
        id="resampled-unknown-function-derived",
    ),
    # --- Example Error Messages / Error Examples ----------------------------------------------
    pytest.param(
        "! @each[items]->task@{{value=items}} # ❌ Missing *",
        "@each commands require '*' multiplicity indicator",
        1,
        35,
        "add '*' right after '}}'",
        id="error-examples-missing-multiplicity",
    ),
    pytest.param(
        "! @each[items]->task@{{value=*}}* # ❌ Wildcard with @each",
        "@each commands cannot use wildcard (*) in variable mappings",
        1,
        30,
        "name the source field, e.g. 'value.item=items', or use '@all' to send the whole node",
        id="error-examples-wildcard-with-each",
    ),
    pytest.param(
        "! @->task@{{}} # ❌ Empty mappings",
        "Variable mappings cannot be empty",
        1,
        11,
        "map at least one value, e.g. '@{{prompt.context=summary}}'",
        id="error-examples-empty-mappings",
    ),
]


# The spec's own error texts ("Whitespace Handling > Error Messages" and "Error Handling >
# Example Error Messages") with a command that must produce each one.
SPEC_ERROR_MESSAGES = [
    pytest.param(
        "Space around '.' not allowed - use 'document.sections' not 'document . sections'",
        "! @each[document . sections]->task@{{value.item=items}}*",
        id="space-around-dot",
    ),
    pytest.param(
        "Space around '@' not allowed - use '@each' not '@ each' or ' @each'",
        "! @ each[items]->task@{{value.item=items}}*",
        id="space-around-at",
    ),
    pytest.param(
        "Space before '[' not allowed - use '@each[items]' not '@each [items]'",
        "! @each [items]->task@{{value.item=items}}*",
        id="space-before-bracket",
    ),
    pytest.param(
        "Space after ']' not allowed - use '[items]->' not '[items] ->'",
        "! @each[items] ->task@{{value.item=items}}*",
        id="space-after-bracket",
    ),
    pytest.param(
        "Space around '->' not allowed - use ']->' not '] ->' or '-> '",
        "! @each[items]-> task@{{value.item=items}}*",
        id="space-around-arrow",
    ),
    pytest.param(
        "Space before '{{' not allowed - use 'task@{{' not 'task @{{'",
        "! @each[items]->task @{{value.item=items}}*",
        id="space-before-braces",
    ),
    pytest.param(
        "Space after '}}' not allowed - use '}}*' not '}} *'",
        "! @each[items]->task@{{value.item=items}} *",
        id="space-after-braces",
    ),
    pytest.param(
        "Command must start with '!'",
        "@each[items]->task@{{value.item=items}}*",
        id="must-start-with-bang",
    ),
    pytest.param(
        "@each commands require '*' multiplicity indicator",
        "! @each[items]->task@{{value=items}} # ❌ Missing *",
        id="each-requires-multiplicity",
    ),
    pytest.param(
        "@each commands cannot use wildcard (*) in variable mappings",
        "! @each[items]->task@{{value=*}}* # ❌ Wildcard with @each",
        id="each-wildcard",
    ),
    pytest.param(
        "Empty variable name in mapping",
        "! @->task@{{=value}}",
        id="empty-variable-name",
    ),
    pytest.param(
        "Wildcard (*) cannot be used with multiple variable mappings",
        "! @->task@{{a=*,b=c}}",
        id="wildcard-multiple-mappings",
    ),
]


@pytest.mark.parametrize(("text", "expected"), VALID_CASES)
def test_valid_spec_example_parses(text: str, expected: Command) -> None:
    result = parse_command(text)

    assert result == expected
    # Equality alone cannot tell 5 from 5.0 or True from 1; the reprs can.
    assert repr(result) == repr(expected)


@pytest.mark.parametrize(("text", "message", "line", "column", "hint"), INVALID_CASES)
def test_invalid_spec_example_is_rejected(
    text: str, message: str, line: int, column: int, hint: str
) -> None:
    error = parse_error(text)

    assert (error.message, error.line, error.column) == (message, line, column)
    assert error.hint == hint


@pytest.mark.parametrize(("spec_message", "text"), SPEC_ERROR_MESSAGES)
def test_error_message_starts_with_spec_wording(spec_message: str, text: str) -> None:
    error = parse_error(text)

    assert error.message.startswith(spec_message)


# --- The whole rendering of str(err) for representative errors --------------------------------
RENDERED_ERRORS = [
    pytest.param(
        "! @each [items]->task@{{value.item=items}}*",
        "Space before '[' not allowed - use '@each[items]' not '@each [items]'\n"
        "    ! @each [items]->task@{{value.item=items}}*\n"
        "           ^\n"
        "  at line 1, column 8\n"
        "  hint: write '@each[' with no space",
        id="whitespace-space-before-bracket",
    ),
    pytest.param(
        "! @each[items]->task@{{value=items}} # ❌ Missing *",
        "@each commands require '*' multiplicity indicator\n"
        "    ! @each[items]->task@{{value=items}} # ❌ Missing *\n"
        "                                      ^~\n"
        "  at line 1, column 35\n"
        "  hint: add '*' right after '}}'",
        id="error-examples-missing-multiplicity",
    ),
    pytest.param(
        "! @->task@{{a=*,b=c}}",
        "Wildcard (*) cannot be used with multiple variable mappings\n"
        "    ! @->task@{{a=*,b=c}}\n"
        "                ^~~\n"
        "  at line 1, column 13\n"
        "  hint: send the whole node in a command of its own, e.g. '@{{prompt.context=*}}'",
        id="forbidden-wildcard-multiple-mappings",
    ),
    pytest.param(
        MULTILINE_SPACE_AROUND_DOT,
        "Space around '.' not allowed - use 'document.sections' not 'document . sections'\n"
        "        value . content=items.content\n"
        "        ^~~~~~~~~~~~~~~\n"
        "  at line 3, column 5\n"
        "  hint: write 'value.content'",
        id="multiline-space-around-dot",
    ),
    pytest.param(
        '! llm(\n    "gpt-4-complex",\n    override=true',
        "Unclosed '(' opened at line 1, column 6\n"
        "    ! llm(\n"
        "         ^\n"
        "  at line 1, column 6\n"
        "  hint: add ')' to close it",
        id="multiline-unclosed-parenthesis",
    ),
]


@pytest.mark.parametrize(("text", "rendered"), RENDERED_ERRORS)
def test_error_rendering(text: str, rendered: str) -> None:
    error = parse_error(text)

    assert str(error) == rendered
