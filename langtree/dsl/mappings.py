"""Paths and variable mapping blocks: ``a.b.c`` and ``@{{target=source, ...}}``."""

from __future__ import annotations

from typing import Literal

from langtree.dsl.commands import Span, VariableMapping
from langtree.dsl.tokenizer import Token, Tokenizer

__all__ = ["parse_mapping_block", "parse_path"]

_PATH_EXAMPLES = {
    "destination": "'task.analyzer'",
    "inclusion": "'sections.paragraphs'",
    "target": "'prompt.context'",
    "source": "'sections.title'",
    "field": "'rating'",
}


def parse_path(tokens: Tokenizer, *, what: str) -> tuple[str, Span]:
    """path ::= identifier ("." identifier)*   (no whitespace around dots)"""
    start = tokens.position
    example = _PATH_EXAMPLES[what]
    path = tokens.expect(
        "PATH", f"Expected a {what} path", hint=f"write a dotted path such as {example}"
    ).text
    if tokens.space_then("DOT"):
        _fail_space_around_dot(tokens, start)
    if tokens.check("DOT"):
        dot = tokens.consume("DOT")
        if tokens.space_then("IDENT"):
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
            f"Empty path component after {path + '.'!r}",
            hint=f"name a field after '.', or remove the trailing '.' (e.g. {example})",
            start=dot.start,
            end=dot.end,
        )
    return path, tokens.span(start, tokens.position)


def _fail_space_around_dot(tokens: Tokenizer, start: int) -> None:
    end = tokens.position
    while tokens.check("SPACE") or tokens.check("DOT") or tokens.check("IDENT"):
        tokens.consume(next(name for name in ("SPACE", "DOT", "IDENT") if tokens.check(name)))
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
    tokens.skip_layout()
    if tokens.check("RBRACES"):
        tokens.fail(
            "Variable mappings cannot be empty",
            hint="map at least one value, e.g. '@{{prompt.context=summary}}'",
            start=opening.start,
            end=tokens.position + 2,
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
    if tokens.space_then("AT") or tokens.space_then("LBRACES"):
        tokens.fail(
            "Space before '{{' not allowed - use 'task@{{' not 'task @{{'",
            hint="write '@{{' right after the destination",
            start=tokens.position,
            end=tokens.position + 1,
        )
    at = tokens.expect(
        "AT",
        "Expected '@{{' after the destination",
        hint="add the variable mappings, e.g. '->task.target@{{prompt.context=summary}}'",
    )
    if tokens.at_space():
        tokens.fail(
            "Space before '{{' not allowed - use 'task@{{' not 'task @{{'",
            hint="write '@{{' with no space",
            start=at.start,
            end=tokens.position + 1,
        )
    return tokens.expect(
        "LBRACES", "Expected '{{' after '@'", hint="write '@{{' before the mappings"
    )


def _parse_mapping(tokens: Tokenizer, command: str) -> VariableMapping:
    """mapping ::= path ("=" (path | "*"))?"""
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
    source = _parse_source(tokens, command, equals)
    return VariableMapping(
        target_path=target, source_path=source, span=tokens.span(start, tokens.position)
    )


def _parse_source(tokens: Tokenizer, command: str, equals: Token) -> str:
    """source ::= path | "*" """
    if tokens.check("STAR"):
        star = tokens.consume("STAR")
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
    return parse_path(tokens, what="source")[0]


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
