"""Paths and variable mapping blocks: ``a.b.c`` and ``@{{target=source, ...}}``."""

from __future__ import annotations

import re
from typing import Literal

from langtree.dsl._commands import Scalar, Span, VariableMapping, VariableReference
from langtree.dsl._paths import PLUCK_OPERATORS
from langtree.dsl._tokenizer import Token, Tokenizer
from langtree.dsl._values import parse_value

__all__ = ["parse_mapping_block", "parse_path", "parse_source_path"]

_PATH_EXAMPLES = {
    "destination": "'task.analyzer'",
    "inclusion": "'sections.paragraphs'",
    "target": "'prompt.context'",
    "source": "'sections.title'",
    "field": "'rating'",
}
_BOOLEAN = re.compile(r"(?:true|false)(?![A-Za-z0-9_.])")
"""``true``/``false`` as a whole source (``true.x`` stays a path)."""
_PLUCK_FORMS = (
    "use '.*.' (every value, None where one is missing), '.**.' (the values present) "
    "or '.***.' (every value present, all of one type)"
)


def parse_path(tokens: Tokenizer, *, what: str) -> tuple[str, Span]:
    """path ::= identifier ("." identifier)*   (no whitespace around dots)"""
    start = tokens.position
    path = _parse_dotted(tokens, what, start)
    if tokens.check("DOT"):
        _fail_pluck_outside_source(tokens, what)
    return path, tokens.span(start, tokens.position)


def parse_source_path(tokens: Tokenizer) -> str:
    """source_path ::= path ("." pluck "." path)*   pluck ::= "*" | "**" | "***" """
    start = tokens.position
    path = _parse_dotted(tokens, "source", start)
    while tokens.check("DOT"):
        path += _parse_pluck(tokens, path)
        path += _parse_dotted(tokens, "source", start, before=path)
    return path


def _parse_dotted(tokens: Tokenizer, what: str, start: int, *, before: str = "") -> str:
    """Dotted names, stopping before a '.' that a pluck operator ('*') follows.

    ``before`` is what the path holds already (up to a pluck), for messages."""
    example = _PATH_EXAMPLES[what]
    path = tokens.expect(
        "PATH", f"Expected a {what} path", hint=f"write a dotted path such as {example}"
    ).text
    if tokens.space_then("DOT"):
        _fail_space_around_dot(tokens, start)
    if tokens.check("DOT") and not tokens.source.startswith(".*", tokens.position):
        dot = tokens.consume("DOT")
        if tokens.space_then("IDENT") or tokens.space_then("STAR"):
            _fail_space_around_dot(tokens, start)
        if tokens.check("NUMBER") or tokens.source[tokens.position : tokens.position + 1].isdigit():
            word = tokens.next_word()
            tokens.fail(
                f"Path component {word.text!r} must start with a letter or '_'",
                hint="names in paths are Python identifiers, e.g. 'task.go_2'",
                start=word.start,
                end=word.end,
            )
        tokens.fail(
            f"Empty path component after {before + path + '.'!r}",
            hint=f"name a field after '.', or remove the trailing '.' (e.g. {example})",
            start=dot.start,
            end=dot.end,
        )
    return path


def _parse_pluck(tokens: Tokenizer, before: str) -> str:
    """pluck_step ::= "." ("*" | "**" | "***") "."   (then the field names to pluck)"""
    dot = tokens.consume("DOT")
    stars = tokens.consume("STARS")
    if len(stars.text) > len(PLUCK_OPERATORS):
        tokens.fail(
            f"Unknown pluck operator {'.' + stars.text + '.'!r}",
            hint=_PLUCK_FORMS,
            start=dot.start,
            end=stars.end + 1,
        )
    written = f"{before}.{stars.text}"
    if tokens.check("DOT"):
        tokens.consume("DOT")
        written += "."
    tokens.forbid_space_after(
        dot,
        "Space around '.' not allowed - use 'document.sections' not 'document . sections'",
        hint=f"write the pluck with no spaces, e.g. '{before}.{stars.text}.id'",
    )
    if not written.endswith(".") or not tokens.check("IDENT"):
        tokens.fail(
            f"Expected a field name to pluck after {written!r}",
            hint=f"name the field to take from each element, e.g. '{before}.{stars.text}.id'",
            start=dot.start,
            end=tokens.position,
        )
    return f".{stars.text}."


def _fail_pluck_outside_source(tokens: Tokenizer, what: str) -> None:
    """A pluck operator after a target, destination or inclusion path."""
    start = tokens.position
    end = start + 1
    while tokens.source.startswith("*", end):
        end += 1
    operator = "." + tokens.source[start + 1 : end] + "."
    hint = (
        "pluck on the right of '=', e.g. 'value.ids=items.*.id'"
        if what == "target"
        else "name the list itself here, and pluck in a mapping's source, "
        "e.g. '@{{value.ids=items.*.id}}'"
    )
    article = "an" if what[0] in "aeiou" else "a"
    tokens.fail(
        f"Pluck operator {operator!r} can only stand in a mapping's source, "
        f"not in {article} {what} path",
        hint=hint,
        start=start,
        end=end + 1,
    )


def _fail_space_around_dot(tokens: Tokenizer, start: int) -> None:
    end = tokens.position
    parts = ("SPACE", "DOT", "IDENT", "STARS")
    while any(tokens.check(name) for name in parts):
        tokens.consume(next(name for name in parts if tokens.check(name)))
    written = tokens.source[start : tokens.position]
    tokens.fail(
        "Space around '.' not allowed - use 'document.sections' not 'document . sections'",
        hint=f"write {''.join(written.split())!r}",
        start=start,
        end=max(end + 1, tokens.position),
    )


def parse_mapping_block(
    tokens: Tokenizer, *, command: Literal["@each", "@all"]
) -> tuple[VariableMapping, ...]:
    """mapping_block ::= "@{{" WS* mapping (WS* "," WS* mapping)* WS* ","? WS* "}}" """
    opening = _parse_block_opening(tokens)
    tokens.forbid_empty(
        "RBRACES",
        opening,
        "Variable mappings cannot be empty",
        hint="map at least one value, e.g. '@{{prompt.context=summary}}'",
    )
    mappings = [_parse_mapping(tokens, command)]
    while True:
        tokens.skip_layout()
        if not tokens.check("COMMA"):
            break
        tokens.consume("COMMA")
        tokens.skip_layout()
        if tokens.check("RBRACES"):
            break
        mappings.append(_parse_mapping(tokens, command))
    tokens.expect_closing("RBRACES", opening)
    _check_mapping_kinds(tokens, mappings)
    return tuple(mappings)


def _parse_block_opening(tokens: Tokenizer) -> Token:
    """block_opening ::= "@{{"   (right after the destination)"""
    tokens.forbid_space_before(
        "AT",
        "LBRACES",
        message="Space before '{{' not allowed - use 'task@{{' not 'task @{{'",
        hint="write '@{{' right after the destination",
    )
    at = tokens.expect(
        "AT",
        "Expected '@{{' after the destination",
        hint="add the variable mappings, e.g. '->task.target@{{prompt.context=summary}}'",
    )
    tokens.forbid_space_after(
        at,
        "Space before '{{' not allowed - use 'task@{{' not 'task @{{'",
        hint="write '@{{' with no space",
    )
    return tokens.expect(
        "LBRACES", "Expected '{{' after '@'", hint="write '@{{' before the mappings"
    )


def _parse_mapping(tokens: Tokenizer, command: str) -> VariableMapping:
    """mapping ::= path ("=" (path | "*" | literal))?"""
    start = tokens.position
    if tokens.check("EQUALS"):
        tokens.fail(
            "Empty variable name in mapping",
            hint="write the target before '=', e.g. 'prompt.context=summary'",
            start=start,
        )
    if tokens.check("STAR"):
        tokens.fail(
            "Wildcard (*) can only be the source of a mapping",
            hint="write it after '=', e.g. 'prompt.context=*'",
            start=start,
        )
    target, _ = parse_path(tokens, what="target")
    tokens.skip_layout()
    if not tokens.check("EQUALS"):
        return VariableMapping(
            target_path=target, source_path=None, span=tokens.span(start, start + len(target))
        )
    equals = tokens.consume("EQUALS")
    tokens.skip_layout()
    if _starts_literal(tokens):
        literal = _parse_literal(tokens)
        return VariableMapping(
            target_path=target,
            source_path=None,
            literal=literal,
            span=tokens.span(start, tokens.position),
        )
    source = _parse_source(tokens, command, equals)
    return VariableMapping(
        target_path=target, source_path=source, span=tokens.span(start, tokens.position)
    )


def _starts_literal(tokens: Tokenizer) -> bool:
    """Whether a literal (or a list or object written as one) stands after '='."""
    rest = tokens.source[tokens.position : tokens.position + 1]
    return (
        tokens.check("STRING")
        or tokens.check("NUMBER")
        or rest in ("'", '"', "[", "{", "-")
        or rest.isdigit()
        or _BOOLEAN.match(tokens.source, tokens.position) is not None
    )


def _parse_literal(tokens: Tokenizer) -> Scalar:
    """literal ::= string_literal | number_literal | "true" | "false" """
    if tokens.source.startswith(("[", "{"), tokens.position):
        tokens.fail(
            "A mapping's literal is a quoted string, a number, true or false, "
            "not a list or an object",
            hint="send a list or an object from a field, e.g. a transform field that builds it",
            start=tokens.position,
            end=tokens.position + 1,
        )
    value, _ = parse_value(tokens, allow_variable=False)
    assert not isinstance(value, VariableReference)
    return value


def _parse_source(tokens: Tokenizer, command: str, equals: Token) -> str:
    """source ::= source_path | "*" """
    if tokens.check("STAR"):
        star = tokens.consume("STAR")
        if tokens.check("STAR") or tokens.check("DOT"):
            tokens.fail_through(
                star,
                "A source path cannot start with a pluck operator",
                hint="name the list to pluck from first, e.g. 'items.*.id'",
            )
        if command == "@each":
            tokens.fail(
                "@each commands cannot use wildcard (*) in variable mappings",
                hint="name the source field, e.g. 'value.item=items', "
                "or use '@all' to send the whole node",
                start=star.start,
            )
        return "*"
    if not tokens.check("IDENT"):
        tokens.fail(
            "Empty source path in mapping",
            hint="write the source after '=', e.g. 'prompt.context=summary'",
            start=equals.start,
        )
    return parse_source_path(tokens)


def _check_mapping_kinds(tokens: Tokenizer, mappings: list[VariableMapping]) -> None:
    """All mappings are implicit, or all explicit; a wildcard stands alone."""
    wildcard = next((m for m in mappings if m.is_wildcard), None)
    if wildcard is not None and len(mappings) > 1:
        _fail_at_mapping(
            tokens,
            wildcard,
            "Wildcard (*) cannot be used with multiple variable mappings",
            hint="send the whole node in a command of its own, e.g. '@{{prompt.context=*}}'",
        )
    implicit = [m for m in mappings if m.is_implicit]
    if implicit and len(implicit) < len(mappings):
        _fail_at_mapping(
            tokens,
            implicit[0],
            "Cannot mix implicit and explicit variable mappings",
            hint=f"write every mapping as 'target=source', e.g. "
            f"'{implicit[0].target_path}={implicit[0].resolved_source_path}'",
        )


def _fail_at_mapping(
    tokens: Tokenizer, mapping: VariableMapping, message: str, *, hint: str
) -> None:
    assert mapping.span is not None
    start = tokens.offset_of(mapping.span)
    tokens.fail(message, hint=hint, start=start, end=start + mapping.span.length)
