"""Parse one DSL command into a command object.

One short function per grammar rule, each with its EBNF line as docstring. Whitespace is
strict outside brackets (every prohibited place has its own message, worded as in the
specification) and free inside ``[...]``, ``{{...}}`` and ``(...)``, where line breaks and
``#`` comments may also stand: a multiline command parses as its single-line form would.
"""

from __future__ import annotations

import dataclasses

from langtree.dsl._commands import (
    AllCommand,
    Command,
    CommentCommand,
    ContextCommand,
    EachCommand,
    ExecutionCommand,
    NodeModifierCommand,
    ResamplingCommand,
    Span,
    VariableAssignmentCommand,
)
from langtree.dsl._fastpath import parse_fast
from langtree.dsl._hints import suggest
from langtree.dsl._mappings import parse_mapping_block, parse_path, parse_source_path
from langtree.dsl._names import assembly_name_problem
from langtree.dsl._signatures import Signatures
from langtree.dsl._tokenizer import Token, Tokenizer
from langtree.dsl._values import parse_arguments, parse_value
from langtree.errors import CommandTextTypeError

__all__ = ["parse_command", "require_text"]

_AT_COMMANDS = ("each", "all", "sequential", "parallel", "together", "resampled", "context")
_WORD_COMMANDS = ("together",)
_AGGREGATIONS = ("mean", "median", "mode", "sum", "min", "max")

_SPACED_WORD_ERRORS = (
    ("EQUALS", "Space around '=' not allowed - use 'count=5' not 'count = 5'", "=", "spaces"),
    ("LPAREN", "Space before '(' not allowed - use 'resample(5)' not 'resample (5)'", "(", "space"),
)
_SPACE_AROUND_ARROW = "Space around '->' not allowed - use ']->' not '] ->' or '-> '"


def require_text(text: object, *, function: str, what: str, example: str) -> None:
    """Raise `CommandTextTypeError` unless ``text`` is a ``str``.

    Args:
        text: What the caller passed.
        function: The function's name, for the message.
        what: What the function takes, e.g. ``"the command text as a str"``.
        example: A call that works, for the hint.
    """
    if isinstance(text, str):
        return
    got = "None" if text is None else f"an object of type {type(text).__name__!r}"
    hint = (
        f"decode the bytes first, e.g. {function}(data.decode())"
        if isinstance(text, bytes | bytearray)
        else f"pass the text itself, e.g. {example}"
    )
    raise CommandTextTypeError(f"{function}() takes {what}, got {got}", hint)


def parse_command(text: str, *, signatures: Signatures, first_line: int = 1) -> Command:
    """Parse one command, accepting the call-style commands that ``signatures`` declares.

    `langtree.parse_command()` is this function given LangTree's own commands, and says
    what a text may hold and what a bad one raises.

    Args:
        text: A line starting with ``!``, possibly continued inside brackets.
        signatures: The call-style commands to accept, by name.
        first_line: The line number of the text's first line; error positions count
            from it.

    Examples:
        >>> text = "! @each[items]->task.processor@{{value.item=items}}*"
        >>> parse_command(text, signatures={}).inclusion_path
        'items'
    """
    require_text(
        text,
        function="parse_command",
        what="the command text as a str",
        example="parse_command('! @sequential')",
    )
    return parse_fast(text, first_line) or _parse_command(
        Tokenizer(text, first_line=first_line), signatures
    )


def _known_forms(signatures: Signatures) -> str:
    """Every form a command takes, for hints; the calls are listed from their table, so
    that a new one is never missing."""
    forms = [
        "@each[...]->...@{{...}}*",
        "@all->...@{{...}}",
        "@sequential",
        "@parallel",
        "together",
        "@resampled[field]->mode",
        "@context[...]",
        "name=value",
        *_calls(signatures),
    ]
    return _listed(forms, "or")


def _builtin_calls(signatures: Signatures) -> str:
    calls = _calls(signatures)
    listed = (
        f"the built-in commands are {_listed(calls, 'and')}"
        if calls
        else "no call is accepted here"
    )
    return f"{listed}; @context[...] says what a step's context holds"


def _calls(signatures: Signatures) -> list[str]:
    return [signatures[name].call for name in sorted(signatures)]


def _listed(items: list[str], conjunction: str) -> str:
    """``a, b and c``: the last item joined by ``conjunction``."""
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} {conjunction} {items[-1]}"


def _parse_command(tokens: Tokenizer, signatures: Signatures) -> Command:
    """command ::= "!" WS* command_body WS* comment?"""
    tokens.skip_layout_before_bang()
    if not tokens.check("BANG"):
        tokens.fail_here(
            "Command must start with '!'", hint="begin the command with '!', e.g. '! @sequential'"
        )
    tokens.consume("BANG")
    tokens.skip_space()
    if tokens.check("COMMENT"):
        return CommentCommand(comment=tokens.consume("COMMENT").text[1:].strip())
    command = _parse_body(tokens, signatures)
    comment = _parse_end(tokens)
    return dataclasses.replace(command, comment=comment) if comment else command


def _parse_body(tokens: Tokenizer, signatures: Signatures) -> Command:
    """command_body ::= each | all | node_modifier | assignment | execution | resampling
    | context"""
    if tokens.check("AT"):
        return _parse_at_command(tokens, signatures)
    if tokens.check("IDENT"):
        return _parse_word_command(tokens, tokens.consume("IDENT"), signatures)
    tokens.fail_here(
        "Expected a command after '!'", hint=f"write one of {_known_forms(signatures)}"
    )


def _parse_end(tokens: Tokenizer) -> str | None:
    """end ::= WS* comment?"""
    tokens.skip_space()
    comment = tokens.consume("COMMENT").text[1:].strip() if tokens.check("COMMENT") else None
    if tokens.at_end():
        return comment
    if tokens.check("NEWLINE"):
        _fail_line_break(tokens)
    tokens.fail_here(
        "Unexpected text after the command",
        hint="start a comment with '#', or put each command on its own '!' line",
    )


def _fail_line_break(tokens: Tokenizer) -> None:
    tokens.fail(
        "A command may continue on the next line only inside [...], {{...}} or (...)",
        hint="join the lines, or break the line inside the brackets",
        start=tokens.position,
    )


def _parse_at_command(tokens: Tokenizer, signatures: Signatures) -> Command:
    """at_command ::= "@" ("each" | "all" | "sequential" | "parallel" | "resampled"
    | "context")?"""
    at = tokens.consume("AT")
    tokens.forbid_space_after(
        at,
        "Space around '@' not allowed - use '@each' not '@ each' or ' @each'",
        hint="write the command name right after '@', e.g. '@each'",
    )
    if tokens.check("ARROW") or tokens.space_then("ARROW"):
        return _parse_all(tokens, at)
    if not tokens.check("IDENT"):
        tokens.fail_here(
            "Expected a command name after '@'", hint=f"write one of {_known_forms(signatures)}"
        )
    name = tokens.consume("IDENT")
    if name.text == "each":
        return _parse_each(tokens, at)
    if name.text == "all":
        return _parse_all(tokens, at)
    if name.text in ("sequential", "parallel", "together"):
        return NodeModifierCommand(
            modifier="sequential" if name.text == "sequential" else "parallel"
        )
    if name.text == "resampled":
        return _parse_resampled(tokens)
    if name.text == "context":
        return _parse_context(tokens)
    return _fail_unknown_command(tokens, name, f"@{name.text}", at.start, signatures)


def _parse_word_command(tokens: Tokenizer, name: Token, signatures: Signatures) -> Command:
    """word_command ::= "together" | identifier "=" value | identifier "(" arguments ")" """
    if tokens.check("EQUALS"):
        return _parse_assignment(tokens, name, signatures)
    if name.text == "together":
        return NodeModifierCommand(modifier="parallel")
    if tokens.check("LPAREN"):
        return _parse_execution(tokens, name, signatures)
    for rule, message, symbol, fix in _SPACED_WORD_ERRORS:
        if tokens.space_then(rule):
            tokens.fail(
                message,
                hint=f"write '{name.text}{symbol}' with no {fix}",
                start=name.end,
                end=tokens.position + 2,
            )
    return _fail_unknown_command(tokens, name, name.text, name.start, signatures)


def _fail_unknown_command(
    tokens: Tokenizer, name: Token, spelled: str, start: int, signatures: Signatures
) -> Command:
    candidates = [f"@{known}" for known in _AT_COMMANDS] + list(_WORD_COMMANDS)
    tokens.fail(
        f"Unknown command {spelled!r}",
        hint=suggest(spelled, candidates, fallback=f"write one of {_known_forms(signatures)}"),
        start=start,
        end=name.end,
    )


def _parse_each(tokens: Tokenizer, at: Token) -> EachCommand:
    """each_command ::= "@each" inclusion? "->" destination "@{{" mappings "}}" "*" """
    inclusion: tuple[str, Span] | None = None
    _forbid_space_before_bracket(tokens, "@each")
    if tokens.check("LBRACKET"):
        inclusion = _parse_inclusion(tokens)
    _parse_arrow(tokens, after_bracket=inclusion is not None)
    destination, destination_span = parse_path(tokens, what="destination")
    mappings = parse_mapping_block(tokens, command="@each")
    if not _parse_multiplicity(tokens):
        tokens.fail(
            "@each commands require '*' multiplicity indicator",
            hint="add '*' right after '}}'",
            start=tokens.position - 2,
            end=tokens.position,
        )
    return EachCommand(
        inclusion_path=inclusion[0] if inclusion else None,
        destination_path=destination,
        mappings=mappings,
        has_multiplicity=True,
        inclusion_span=inclusion[1] if inclusion else None,
        destination_span=destination_span,
    )


def _parse_inclusion(tokens: Tokenizer) -> tuple[str, Span]:
    """inclusion ::= "[" WS* path WS* "]" """
    opening = tokens.consume("LBRACKET")
    tokens.forbid_empty(
        "RBRACKET",
        opening,
        "@each commands cannot have an empty inclusion path",
        hint="name the list to iterate over, e.g. '@each[sections]'",
    )
    path = parse_path(tokens, what="inclusion")
    tokens.skip_layout()
    tokens.expect_closing("RBRACKET", opening)
    _forbid_space_after_bracket(tokens)
    return path


def _forbid_space_before_bracket(
    tokens: Tokenizer, command: str, *, example: str = "@each[items]"
) -> None:
    """No space between a command's name and its ``[``, shown right and wrong in ``example``."""
    spaced = example.replace("[", " [", 1)
    tokens.forbid_space_before(
        "LBRACKET",
        message=f"Space before '[' not allowed - use '{example}' not '{spaced}'",
        hint=f"write '{command}[' with no space",
    )


def _forbid_space_after_bracket(tokens: Tokenizer) -> None:
    if tokens.at_space() and not tokens.at_end():
        tokens.fail(
            "Space after ']' not allowed - use '[items]->' not '[items] ->'",
            hint="write ']->' with no space",
            start=tokens.position - 1,
            end=tokens.position + 1,
        )


def _parse_arrow(tokens: Tokenizer, *, after_bracket: bool) -> None:
    """arrow ::= "->"   (no whitespace on either side)"""
    if tokens.space_then("ARROW"):
        tokens.fail(_SPACE_AROUND_ARROW, hint="write '->' with no spaces", start=tokens.position)
    if tokens.check("NEWLINE"):
        _fail_line_break(tokens)
    what = "']'" if after_bracket else "the command name"
    arrow = tokens.expect(
        "ARROW",
        f"Expected '->' after {what}",
        hint="commands send data with '->', e.g. '@all->task.target@{{prompt.x=field}}'",
    )
    tokens.forbid_space_after(arrow, _SPACE_AROUND_ARROW, hint="write '->' with no spaces")


def _parse_multiplicity(tokens: Tokenizer) -> bool:
    """multiplicity ::= "*" """
    if tokens.space_then("STAR"):
        tokens.fail(
            "Space after '}}' not allowed - use '}}*' not '}} *'",
            hint="write '}}*' with no space",
            start=tokens.position - 2,
            end=tokens.position + 2,
        )
    if tokens.check("STAR"):
        tokens.consume("STAR")
        return True
    return False


def _parse_all(tokens: Tokenizer, at: Token) -> AllCommand:
    """all_command ::= ("@all" | "@") "->" destination "@{{" mappings "}}" "*"?"""
    if tokens.check("LBRACKET") or tokens.space_then("LBRACKET"):
        tokens.fail_through(
            at,
            "@all commands cannot have inclusion brackets",
            hint="use '@each[items]->...*' to iterate, or remove the brackets",
        )
    _parse_arrow(tokens, after_bracket=False)
    destination, destination_span = parse_path(tokens, what="destination")
    mappings = parse_mapping_block(tokens, command="@all")
    return AllCommand(
        destination_path=destination,
        mappings=mappings,
        has_multiplicity=_parse_multiplicity(tokens),
        destination_span=destination_span,
    )


def _parse_resampled(tokens: Tokenizer) -> ResamplingCommand:
    """resampling_command ::= "@resampled" "[" identifier "]" "->" aggregation_function"""
    _forbid_space_before_bracket(tokens, "@resampled")
    opening = tokens.expect(
        "LBRACKET", "Expected '[' after '@resampled'", hint="write '@resampled[field]->mode'"
    )
    tokens.skip_layout()
    field, field_span = parse_path(tokens, what="field")
    if "." in field:
        tokens.fail(
            "@resampled takes one field of the current node, not a path",
            hint=f"name the field alone, e.g. '@resampled[{field.rsplit('.', 1)[1]}]'",
            start=tokens.position - len(field),
            end=tokens.position,
        )
    tokens.skip_layout()
    tokens.expect_closing("RBRACKET", opening)
    _forbid_space_after_bracket(tokens)
    _parse_arrow(tokens, after_bracket=True)
    function = tokens.expect(
        "IDENT",
        "Expected an aggregation function after '->'",
        hint=f"use one of {', '.join(_AGGREGATIONS)}",
    )
    if function.text not in _AGGREGATIONS:
        tokens.fail(
            f"Unknown aggregation function {function.text!r}",
            hint=suggest(
                function.text, _AGGREGATIONS, fallback=f"use one of {', '.join(_AGGREGATIONS)}"
            ),
            start=function.start,
            end=function.end,
        )
    return ResamplingCommand(
        field_name=field,
        aggregation_function=function.text,  # type: ignore[arg-type]
        field_span=field_span,
    )


def _parse_context(tokens: Tokenizer) -> ContextCommand:
    """context_command ::= "@context" "[" WS* (entry (WS* "," WS* entry)* (WS* ",")?)? WS* "]" """
    _forbid_space_before_bracket(tokens, "@context", example="@context[heading]")
    if tokens.check("NEWLINE"):
        _fail_line_break(tokens)
    opening = tokens.expect(
        "LBRACKET",
        "Expected '[' after '@context'",
        hint="write '@context[field, ...]', '@context[*]' or '@context[]'",
    )
    paths: list[str] = []
    spans: list[Span] = []
    tokens.skip_layout()
    while not tokens.check("RBRACKET") and not tokens.at_end():
        start = tokens.position
        paths.append(_parse_context_entry(tokens))
        spans.append(tokens.span(start, tokens.position))
        tokens.skip_layout()
        if not tokens.check("COMMA"):
            break
        tokens.consume("COMMA")
        tokens.skip_layout()
    tokens.expect_closing("RBRACKET", opening)
    return ContextCommand(paths=tuple(paths), path_spans=tuple(spans))


def _parse_context_entry(tokens: Tokenizer) -> str:
    """entry ::= "*" | source_path"""
    if tokens.check("COMMA"):
        tokens.fail(
            "Empty entry in @context",
            hint="write a field path where the entry is missing, or remove the extra ','",
            start=tokens.position,
        )
    if tokens.check("STAR"):
        stars = tokens.consume("STARS")
        if len(stars.text) > 1 or tokens.check("DOT"):
            tokens.fail(
                "A @context entry cannot start with a pluck operator",
                hint="write '*' alone for every known value, or name the list before the "
                "pluck, e.g. 'paragraphs.*.summary'",
                start=stars.start,
                end=tokens.position + 1,
            )
        return "*"
    if not tokens.check("IDENT"):
        tokens.fail_here(
            "Expected a field path or '*' in @context",
            hint="write field paths such as 'heading' or 'paragraphs.*.summary'",
        )
    return parse_source_path(tokens)


def _parse_assignment(
    tokens: Tokenizer, name: Token, signatures: Signatures
) -> VariableAssignmentCommand:
    """variable_assignment ::= identifier "=" value"""
    equals = tokens.consume("EQUALS")
    problem = assembly_name_problem(name.text, signatures)
    if problem is not None:
        tokens.fail(problem[0], hint=problem[1], start=name.start, end=name.end)
    if tokens.at_space() or tokens.at_end():
        tokens.fail(
            "Space around '=' not allowed - use 'count=5' not 'count = 5'"
            if tokens.at_space()
            else f"Missing value for variable {name.text!r}",
            hint=f"write the value right after '=', e.g. '{name.text}=5' or '{name.text}=\"text\"'",
            start=equals.start,
            end=tokens.position + 1,
        )
    value, _ = parse_value(tokens, allow_variable=False)
    assert not isinstance(value, tuple)
    return VariableAssignmentCommand(variable_name=name.text, value=value)  # type: ignore[arg-type]


def _parse_execution(tokens: Tokenizer, name: Token, signatures: Signatures) -> ExecutionCommand:
    """execution_command ::= identifier "(" arguments ")" """
    signature = signatures.get(name.text)
    if signature is None:
        tokens.fail(
            f"Unknown command {name.text!r}",
            hint=suggest(
                name.text,
                list(signatures),
                fallback=_builtin_calls(signatures),
            ),
            start=name.start,
            end=name.end,
        )
    call = parse_arguments(tokens)
    bound = signature.bind(call.arguments, call.named_arguments)
    if not isinstance(bound, dict):
        start, end = call.span_of(bound.argument)
        tokens.fail(bound.message, hint=bound.hint, start=start, end=end)
    return ExecutionCommand(
        command_name=name.text, arguments=call.arguments, named_arguments=call.named_arguments
    )
