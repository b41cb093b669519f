"""The texts of a node class: its docstring and its fields' descriptions, with commands.

They are read as the author wrote them (`written_texts()`):
pydantic holds the descriptions without their commands.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from langtree.dsl import Extraction, extract_commands
from langtree.errors import CommandParseError, Diagnostic
from langtree.structure.call_commands._table import call_signatures
from langtree.structure.tree._origins import Origin, class_origins
from langtree.structure.tree._tree_node import written_texts

__all__ = ["ClassText", "class_parse_diagnostics", "parse_error_diagnostic", "read_class_texts"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassText:
    """One text of a class (docstring or field description), split into commands and prose."""

    origin: Origin
    extraction: Extraction


def read_class_texts(cls: type[BaseModel]) -> tuple[ClassText, ...]:
    """Extract the commands of a class's docstring and of each field's description.

    Returns:
        The docstring's text first, then one per field in declaration order.

    Raises:
        CommandParseError: A command is invalid; the error names the class, the field
            and the file line.
    """
    return tuple(_read(text, origin) for text, origin in _texts(cls))


def class_parse_diagnostics(cls: type[BaseModel]) -> list[Diagnostic]:
    """Every syntax error in a class's texts (the first of each text), as diagnostics."""
    diagnostics = []
    for text, origin in _texts(cls):
        try:
            extract_commands(text, signatures=call_signatures())
        except CommandParseError as error:
            diagnostics.append(parse_error_diagnostic(error, origin))
    return diagnostics


def _texts(cls: type[BaseModel]) -> list[tuple[str | None, Origin]]:
    origins = class_origins(cls)
    written = written_texts(cls)
    descriptions = [(written.descriptions[name], origins[name]) for name in cls.model_fields]
    return [(written.docstring, origins[None]), *descriptions]


def _read(text: str | None, origin: Origin) -> ClassText:
    try:
        extraction = extract_commands(text, signatures=call_signatures())
    except CommandParseError as error:
        raise error.with_location(origin.describe(error.line)) from None
    return ClassText(origin=origin, extraction=extraction)


def parse_error_diagnostic(error: CommandParseError, origin: Origin) -> Diagnostic:
    """Turn a parse error in one of ``origin``'s texts into a `Diagnostic`."""
    return origin.diagnostic(
        error.message,
        hint=error.hint,
        text_line=error.line,
        column=error.column,
        source_line=error.source_line,
        length=error.length,
    )
