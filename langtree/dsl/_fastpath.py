"""A regex fast path for the commonest commands: single-line ``@each``/``@all``.

Most commands in real trees are one-line ``@each``/``@all`` commands written in strict
form. One regular expression recognises them and builds the command directly; anything
else (another command type, several lines, a space inside, any error) returns ``None``,
and the full parser handles it and produces the error. A test checks that both agree.
"""

from __future__ import annotations

import re

from langtree.dsl._commands import AllCommand, EachCommand, Span, VariableMapping

__all__ = ["parse_fast"]

_PATH = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_MAPPING = rf"{_PATH}(?:=(?:{_PATH}|\*))?"
_COMMAND = re.compile(
    rf"""[ \t]*![ \t]*@(?P<kind>each|all)?
    (?:\[(?P<inclusion>{_PATH})\])?
    ->(?P<destination>{_PATH})
    @\{{\{{(?P<mappings>{_MAPPING}(?:,{_MAPPING})*),?\}}\}}
    (?P<star>\*)?
    [ \t]*+(?:\#(?P<comment>[^\r\n]*+))?""",
    re.VERBOSE,
)
_BOOLEANS = ("true", "false")
_MAPPING_PART = re.compile(rf"(?P<target>{_PATH})(?:=(?P<source>{_PATH}|\*))?")


def parse_fast(text: str, first_line: int) -> EachCommand | AllCommand | None:
    """The command, when ``text`` is a valid single-line ``@each``/``@all``; else ``None``."""
    match = _COMMAND.fullmatch(text)
    if match is None:
        return None
    kind = match["kind"]
    each = kind == "each"
    if (each and not match["star"]) or (not each and match["inclusion"] is not None):
        return None
    mappings = _mappings(match, first_line)
    if not _mappings_fit(mappings, each=each):
        return None
    comment = (match["comment"] or "").strip() or None
    destination_span = _span(first_line, match.start("destination"), match.end("destination"))
    if each:
        return EachCommand(
            inclusion_path=match["inclusion"],
            destination_path=match["destination"],
            mappings=mappings,
            comment=comment,
            inclusion_span=_span(first_line, match.start("inclusion"), match.end("inclusion"))
            if match["inclusion"]
            else None,
            destination_span=destination_span,
        )
    return AllCommand(
        destination_path=match["destination"],
        mappings=mappings,
        has_multiplicity=match["star"] is not None,
        comment=comment,
        destination_span=destination_span,
    )


def _mappings(match: re.Match[str], first_line: int) -> tuple[VariableMapping, ...]:
    offset = match.start("mappings")
    mappings = []
    for part in _MAPPING_PART.finditer(match["mappings"]):
        start, end = offset + part.start(), offset + part.end()
        mappings.append(
            VariableMapping(
                target_path=part["target"],
                source_path=part["source"],
                span=_span(first_line, start, end),
            )
        )
    return tuple(mappings)


def _mappings_fit(mappings: tuple[VariableMapping, ...], *, each: bool) -> bool:
    if any(mapping.source_path in _BOOLEANS for mapping in mappings):
        return False  # a literal: the full parser reads it
    wildcards = sum(mapping.is_wildcard for mapping in mappings)
    implicit = sum(mapping.is_implicit for mapping in mappings)
    if wildcards and (each or len(mappings) > 1):
        return False
    return implicit in (0, len(mappings))


def _span(line: int, start: int, end: int) -> Span:
    return Span(line=line, column=start + 1, length=end - start)
