"""Parser behaviour beyond the specification's own examples: values, calls, layout, errors."""

import pickle

import pytest

import langtree.dsl
from langtree import CommandParseError, LangTreeError, parse_command
from langtree.dsl import (
    CommentCommand,
    EachCommand,
    ExecutionCommand,
    NodeModifierCommand,
    ResamplingCommand,
    Span,
    VariableAssignmentCommand,
    VariableMapping,
    VariableReference,
)
from langtree.structure.call_commands._table import call_signatures
from tests.dsl.parsed import each, parse_error, sends, text_type_error, to


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("! n=0", 0, id="zero"),
        pytest.param("! n=-3", -3, id="negative-int"),
        pytest.param("! n=12345678901234567890", 12345678901234567890, id="big-int"),
        pytest.param("! x=0.25", 0.25, id="float"),
        pytest.param("! x=1e-05", 1e-05, id="float-exponent"),
        pytest.param("! s=''", "", id="empty-string"),
        pytest.param(r'! s="a\\b"', "a\\b", id="escaped-backslash"),
        pytest.param(r"! s='it\'s'", "it's", id="escaped-single-quote"),
        pytest.param(r'! s="line\nnext\ttab"', "line\nnext\ttab", id="newline-tab-escapes"),
        pytest.param(r'! s="a\qb"', "a\\qb", id="other-backslash-is-kept"),
        pytest.param(r'! path="C:\data"', "C:\\data", id="windows-path"),
        pytest.param(r"! s='\d+\.\ '", "\\d+\\.\\ ", id="regex-like-text"),
        pytest.param('! s="\\é\\\t\\\\\\n"', "\\é\\\t\\\n", id="non-ascii-tab-then-escapes"),
        pytest.param('! s="# not a comment"', "# not a comment", id="hash-inside-quotes"),
        pytest.param("! s='say \"hi\"'", 'say "hi"', id="double-quotes-inside-single"),
        pytest.param("! flag=false", False, id="false"),
    ],
)
def test_assignment_values_keep_their_type(text: str, value: object) -> None:
    command = parse_command(text)

    assert isinstance(command, VariableAssignmentCommand)
    assert command.value == value
    assert type(command.value) is type(value)


def test_inline_comment_after_a_quoted_hash_is_kept_apart() -> None:
    command = parse_command('! name="a # b" # the name')

    assert command == VariableAssignmentCommand(
        variable_name="name", value="a # b", comment="the name"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "! resample(3)",
            ExecutionCommand(command_name="resample", arguments=(3,)),
            id="resample-literal",
        ),
        pytest.param(
            "! resample( count , )",
            ExecutionCommand(command_name="resample", arguments=(VariableReference("count"),)),
            id="resample-variable-spaces-trailing-comma",
        ),
        pytest.param(
            '! llm("fast", true)',
            ExecutionCommand(command_name="llm", arguments=("fast", True)),
            id="llm-positional-override",
        ),
        pytest.param(
            "! llm(model_key='fast', override=flag)",
            ExecutionCommand(
                command_name="llm",
                named_arguments=(("model_key", "fast"), ("override", VariableReference("flag"))),
            ),
            id="llm-all-named",
        ),
        pytest.param(
            '! llm("fast") # cheap model',
            ExecutionCommand(command_name="llm", arguments=("fast",), comment="cheap model"),
            id="inline-comment",
        ),
    ],
)
def test_execution_commands(text: str, expected: ExecutionCommand) -> None:
    assert parse_command(text) == expected


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        pytest.param(
            "! resample()",
            "resample() missing required argument 'n_times'",
            12,
            id="resample-missing",
        ),
        pytest.param(
            "! resample(1, 2)", "resample() takes at most 1 argument(s), got 2", 15, id="too-many"
        ),
        pytest.param(
            "! resample(0)",
            "resample() argument 'n_times' must be at least 1, got 0",
            12,
            id="resample-zero",
        ),
        pytest.param(
            '! resample("3")',
            "resample() argument 'n_times' must be an integer, got \"3\"",
            12,
            id="resample-string",
        ),
        pytest.param(
            "! resample(true)",
            "resample() argument 'n_times' must be an integer, got true",
            12,
            id="resample-bool",
        ),
        pytest.param(
            "! llm(5)", "llm() argument 'model_key' must be a string, got 5", 7, id="llm-int-key"
        ),
        pytest.param(
            '! llm("a", override="yes")',
            "llm() argument 'override' must be true or false, got \"yes\"",
            12,
            id="llm-string-override",
        ),
        pytest.param(
            '! llm("a", temperature=1)',
            "llm() got an unexpected argument 'temperature'",
            12,
            id="llm-unknown-named",
        ),
        pytest.param(
            '! llm("a", model_key="b")',
            "llm() got multiple values for argument 'model_key'",
            12,
            id="llm-duplicate",
        ),
        pytest.param(
            '! llm(override=true, "a")',
            "Positional argument follows named argument",
            22,
            id="positional-after-named",
        ),
        pytest.param("! resampel(3)", "Unknown command 'resampel'", 3, id="unknown-call"),
        pytest.param("! resample (3)", "Space before '(' not allowed", 11, id="space-before-paren"),
    ],
)
def test_execution_command_errors(text: str, message: str, column: int) -> None:
    error = parse_error(text)

    assert error.message.startswith(message)
    assert (error.line, error.column) == (1, column)


def test_unknown_call_suggests_the_closest_builtin() -> None:
    error = parse_error("! resampel(3)")

    assert error.hint == "did you mean 'resample'?"


def test_unknown_call_lists_the_builtins_and_context() -> None:
    error = parse_error("! retry(3)")

    assert error.hint == (
        "the built-in commands are input(), llm(...), resample(...) and transform(...); "
        "@context[...] says what a step's context holds"
    )


def test_unknown_word_lists_every_command_form() -> None:
    error = parse_error("! hello world")

    assert error.hint == (
        "write one of @each[...]->...@{{...}}*, @all->...@{{...}}, @sequential, @parallel, "
        "together, @resampled[field]->mode, @context[...], name=value, input(), llm(...), "
        "resample(...) or transform(...)"
    )


@pytest.mark.parametrize(
    ("names", "hint"),
    [
        pytest.param(
            ("llm",),
            "the built-in commands are llm(...); @context[...] says what a step's context holds",
            id="one",
        ),
        pytest.param(
            (),
            "no call is accepted here; @context[...] says what a step's context holds",
            id="none",
        ),
    ],
)
def test_a_parse_accepts_the_calls_it_is_given(names: tuple[str, ...], hint: str) -> None:
    signatures = {name: call_signatures()[name] for name in names}
    with pytest.raises(CommandParseError) as caught:
        langtree.dsl.parse_command("! resample(3)", signatures=signatures)

    assert caught.value.hint == hint
    assert langtree.dsl.parse_command('! llm("fast")', signatures=call_signatures()) == (
        ExecutionCommand(command_name="llm", arguments=("fast",))
    )


@pytest.mark.parametrize("name", sorted(call_signatures()))
@pytest.mark.parametrize("text", ["! retry(3)", "! hello world"], ids=["call", "word"])
def test_unknown_command_hints_name_every_builtin(text: str, name: str) -> None:
    error = parse_error(text)

    assert f" {name}(" in error.hint
    assert "@context[...]" in error.hint


@pytest.mark.parametrize(
    ("text", "message", "hint"),
    [
        pytest.param(
            "! name=analysis",
            "Unquoted value 'analysis' must be a number, true or false",
            'quote text: write "analysis"',
            id="unquoted-word",
        ),
        pytest.param(
            "! debug=True",
            "Unquoted value 'True' must be a number, true or false",
            "booleans are lower case: write 'true'",
            id="capitalised-boolean",
        ),
        pytest.param(
            "! count = 5",
            "Space around '=' not allowed - use 'count=5' not 'count = 5'",
            "write 'count=' with no spaces",
            id="space-before-equals",
        ),
        pytest.param(
            "! count= 5",
            "Space around '=' not allowed - use 'count=5' not 'count = 5'",
            "write the value right after '=', e.g. 'count=5' or 'count=\"text\"'",
            id="space-after-equals",
        ),
        pytest.param(
            "! count=",
            "Missing value for variable 'count'",
            "write the value right after '=', e.g. 'count=5' or 'count=\"text\"'",
            id="missing-value",
        ),
        pytest.param(
            "! true=1",
            "'true' is a reserved word and cannot be a variable name",
            "choose another name",
            id="reserved-name",
        ),
        pytest.param(
            "! together=1",
            "'together' is a reserved word and cannot be a variable name",
            "choose another name",
            id="reserved-modifier-name",
        ),
        pytest.param(
            '! PROMPT_SUBTREE="x"',
            "'PROMPT_SUBTREE' is a template variable and cannot be an assembly variable",
            "choose another name: LangTree fills {PROMPT_SUBTREE} itself",
            id="template-variable-name",
        ),
        pytest.param(
            "! COLLECTED_CONTEXT=3",
            "'COLLECTED_CONTEXT' is a template variable and cannot be an assembly variable",
            "choose another name: LangTree fills {COLLECTED_CONTEXT} itself",
            id="context-template-variable-name",
        ),
        pytest.param(
            '! llm="fast"',
            "'llm' is a built-in command and cannot be a variable name",
            "to call it, write 'llm(\"model-key\")' or 'llm(\"model-key\", override=true)'; "
            "otherwise choose another name",
            id="built-in-command-name",
        ),
        pytest.param(
            '! s="a\\\rb"',
            "Unterminated string literal",
            "close the string with the quote it starts with",
            id="escaped-line-break",
        ),
        pytest.param(
            "! n=5abc",
            "Expected a value, got '5abc'",
            'write a quoted string ("text"), a number (5, 2.5), true or false',
            id="number-glued-to-word",
        ),
    ],
)
def test_assignment_errors(text: str, message: str, hint: str) -> None:
    error = parse_error(text)

    assert (error.message, error.hint) == (message, hint)


@pytest.mark.parametrize(
    "name", sorted({*call_signatures(), "PROMPT_SUBTREE", "COLLECTED_CONTEXT", "true", "together"})
)
def test_reserved_names_are_no_variable_names(name: str) -> None:
    error = parse_error(f"! {name}=1")

    assert error.message.startswith(f"{name!r} is a ")
    assert (error.column, error.length) == (3, len(name))


def test_other_upper_case_names_are_variable_names() -> None:
    assert parse_command("! MAX_ITEMS=3") == VariableAssignmentCommand(
        variable_name="MAX_ITEMS", value=3
    )


def test_comment_inside_multiline_mapping_keeps_the_mappings_after_it() -> None:
    text = """! @each[items]->task.target@{{
        value.a=items.a,  # first
        # a comment on its own line, with a } and a , in it
        value.b=items.b,

        value.c=items.c  # last, no trailing comma
    }}*"""

    command = parse_command(text)

    assert command == each(
        "items",
        "task.target",
        to("value.a", "items.a"),
        to("value.b", "items.b"),
        to("value.c", "items.c"),
    )


def test_multiline_arguments_with_comments() -> None:
    text = """! llm(
        "strong",  # the expensive one
        override=true,
    )"""

    assert parse_command(text) == ExecutionCommand(
        command_name="llm", arguments=("strong",), named_arguments=(("override", True),)
    )


def test_spaces_around_equals_and_commas_inside_braces_are_allowed() -> None:
    command = parse_command("! @->task.x@{{ prompt.a = f , prompt.b=f }}")

    assert command == sends("task.x", to("prompt.a", "f"), to("prompt.b", "f"))


def test_each_without_inclusion_parses_with_no_inclusion_path() -> None:
    command = parse_command("! @each->task.x@{{value.items=items}}*")

    assert command == each(None, "task.x", to("value.items", "items"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("! @parallel", NodeModifierCommand(modifier="parallel"), id="parallel"),
        pytest.param("!@sequential", NodeModifierCommand(modifier="sequential"), id="no-space"),
        pytest.param(
            "! together # same as parallel",
            NodeModifierCommand(modifier="parallel", comment="same as parallel"),
            id="together-comment",
        ),
        pytest.param("!#", CommentCommand(comment=""), id="empty-comment"),
        pytest.param(
            "! @resampled[ rating ]->median",
            ResamplingCommand(field_name="rating", aggregation_function="median"),
            id="resampled-spaces-inside-brackets",
        ),
        pytest.param(
            "   ! @sequential   ",
            NodeModifierCommand(modifier="sequential"),
            id="surrounding-whitespace",
        ),
    ],
)
def test_other_commands(text: str, expected: object) -> None:
    assert parse_command(text) == expected


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        pytest.param(
            "! @sequential extra",
            "Unexpected text after the command, got 'extra'",
            1,
            15,
            id="trailing-word",
        ),
        pytest.param(
            "! @seqential", "Unknown command '@seqential'", 1, 3, id="misspelled-modifier"
        ),
        pytest.param("! hello world", "Unknown command 'hello'", 1, 3, id="prose-after-bang"),
        pytest.param(
            "!", "Expected a command after '!', got the end of the command", 1, 2, id="bang-alone"
        ),
        pytest.param(
            "! @",
            "Expected a command name after '@', got the end of the command",
            1,
            4,
            id="at-alone",
        ),
        pytest.param(
            "! @each[items]task@{{a=b}}*",
            "Expected '->' after ']', got 'task'",
            1,
            15,
            id="missing-arrow",
        ),
        pytest.param(
            "! @all->task.x",
            "Expected '@{{' after the destination, got the end of the command",
            1,
            15,
            id="missing-mappings",
        ),
        pytest.param(
            "! @all->task.x@{{a=b}}\n  *",
            "A command may continue on the next line only inside [...], {{...}} or (...)",
            1,
            23,
            id="line-break-outside-brackets",
        ),
        pytest.param(
            "! @each[items]->task.x@{{\n  value.a=items.a,\n  value.b=items . b\n}}*",
            "Space around '.' not allowed - use 'document.sections' not 'document . sections'",
            3,
            11,
            id="multiline-position",
        ),
        pytest.param(
            "! @each[items]->task.x@{{\n  value.a=items.a\n",
            "Unclosed '{{' opened at line 1, column 24",
            1,
            24,
            id="unclosed-multiline",
        ),
        pytest.param(
            "! @->prompt.@{{a=b}}",
            "Empty path component after 'prompt.'",
            1,
            12,
            id="empty-path-component",
        ),
        pytest.param(
            "! @resampled[a.rating]->mean",
            "@resampled takes one field of the current node, not a path",
            1,
            14,
            id="resampled-path",
        ),
        pytest.param(
            "! @resampled[rating]->average",
            "Unknown aggregation function 'average'",
            1,
            23,
            id="unknown-aggregation",
        ),
        pytest.param(
            "! @->task.x@{{*=a}}",
            "Wildcard (*) can only be the source of a mapping",
            1,
            15,
            id="wildcard-target",
        ),
    ],
)
def test_structural_errors(text: str, message: str, line: int, column: int) -> None:
    error = parse_error(text)

    assert (error.message, error.line, error.column) == (
        message,
        line,
        column,
    )


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("! @all->task@{{prompt.x=\r\n", id="crlf"),
        pytest.param("! @all->task@{{prompt.x=\n\n  # nothing here\n", id="blank-and-comment"),
    ],
)
def test_empty_source_before_a_line_break_points_at_the_equals(text: str) -> None:
    error = parse_error(text)

    assert (error.message, error.line, error.column) == (
        "Empty source path in mapping",
        1,
        24,
    )
    assert error.source_line == "! @all->task@{{prompt.x="


def test_error_renders_line_marker_location_and_hint() -> None:
    error = parse_error("! @each[items]->task@{{value.item=items}} *")

    assert str(error) == (
        "Space after '}}' not allowed - use '}}*' not '}} *'\n"
        "    ! @each[items]->task@{{value.item=items}} *\n"
        "                                           ^~~~\n"
        "  at line 1, column 40\n"
        "  hint: write '}}*' with no space"
    )


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        pytest.param(
            '! s="a\\\rb"',
            "Unterminated string literal\n"
            '    ! s="a\\\n'
            "        ^~~\n"
            "  at line 1, column 5\n"
            "  hint: close the string with the quote it starts with",
            id="backslash-before-a-line-break",
        ),
        pytest.param(
            '! llm(\n    "fast\n)',
            "Unterminated string literal\n"
            '        "fast\n'
            "        ^~~~~\n"
            "  at line 2, column 5\n"
            "  hint: close the string with the quote it starts with",
            id="on-a-later-line",
        ),
    ],
)
def test_unterminated_string_marks_the_rest_of_its_line(text: str, rendered: str) -> None:
    error = parse_error(text)

    assert str(error) == rendered


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        pytest.param(
            None,
            "parse_command() takes the command text as a str, got None\n"
            "  hint: pass the text itself, e.g. parse_command('! @sequential')",
            id="none",
        ),
        pytest.param(
            b"! @parallel",
            "parse_command() takes the command text as a str, got an object of type 'bytes'\n"
            "  hint: decode the bytes first, e.g. parse_command(data.decode())",
            id="bytes",
        ),
        pytest.param(
            ["! @parallel"],
            "parse_command() takes the command text as a str, got an object of type 'list'\n"
            "  hint: pass the text itself, e.g. parse_command('! @sequential')",
            id="list",
        ),
    ],
)
def test_text_that_is_not_a_str_is_a_type_error(text: object, rendered: str) -> None:
    error = text_type_error(parse_command, text)

    assert str(error) == rendered
    assert isinstance(error, TypeError)
    assert isinstance(error, LangTreeError)


def test_type_error_survives_pickling() -> None:
    error = text_type_error(parse_command, None)

    copy = pickle.loads(pickle.dumps(error))

    assert (str(copy), copy.message, copy.hint) == (str(error), error.message, error.hint)


def test_mapping_spans_point_into_the_source() -> None:
    command = parse_command(
        "! @each[items]->task.x@{{\n    value.a=items.a,\n    value.b=items.b}}*"
    )

    assert isinstance(command, EachCommand)
    assert [m.span for m in command.mappings] == [
        Span(line=2, column=5, length=15),
        Span(line=3, column=5, length=15),
    ]
    assert command.inclusion_span == Span(line=1, column=9, length=5)
    assert command.destination_span == Span(line=1, column=17, length=6)


@pytest.mark.parametrize(
    ("mapping_", "scope", "implicit", "source"),
    [
        pytest.param(to("prompt.context", "summary"), "prompt", False, "summary", id="prompt"),
        pytest.param(to("outputs.summary"), "outputs", True, "summary", id="implicit"),
        pytest.param(to("custom.field", "x"), None, False, "x", id="unknown-scope"),
        pytest.param(to("value", "x"), None, False, "x", id="bare-scope-word"),
        pytest.param(to("title"), None, True, "title", id="implicit-unscoped"),
    ],
)
def test_mapping_scope_and_implicit_source(
    mapping_: VariableMapping, scope: str | None, implicit: bool, source: str
) -> None:
    assert (mapping_.scope, mapping_.is_implicit, mapping_.resolved_source_path) == (
        scope,
        implicit,
        source,
    )


def test_commands_are_frozen() -> None:
    command = parse_command("! @sequential")

    with pytest.raises(AttributeError):
        command.modifier = "parallel"  # type: ignore[misc]


def test_path_component_starting_with_a_digit_is_named() -> None:
    error = parse_error("! @->task.2_go@{{a=b}}")

    assert (error.message, error.column, error.hint) == (
        "Path component '2_go' must start with a letter or '_'",
        11,
        "names in paths are Python identifiers, e.g. 'task.go_2'",
    )
