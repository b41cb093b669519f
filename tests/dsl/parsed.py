"""What ``parse_command`` makes of a text, in the forms the DSL tests compare: the
commands it parses to, each built in one call (the mappings as ``to(target, source)``, the
commands as ``sends(...)`` and ``each(...)``), and the error it raises."""

from collections.abc import Callable

import pytest

from langtree import CommandParseError, parse_command
from langtree.dsl import AllCommand, CommandTextTypeError, EachCommand, VariableMapping


def parse_error(text: str) -> CommandParseError:
    """The error ``parse_command(text)`` raises (the test fails if it parses)."""
    with pytest.raises(CommandParseError) as caught:
        parse_command(text)
    return caught.value


def text_type_error(read: Callable[[str], object], text: object) -> CommandTextTypeError:
    """The error ``read(text)`` raises for a ``text`` that is not a str."""
    with pytest.raises(CommandTextTypeError) as caught:
        read(text)  # type: ignore[arg-type]
    return caught.value


def to(target: str, source: str | None = None) -> VariableMapping:
    """The mapping ``target=source``; without a source, the implicit ``{{target}}``."""
    return VariableMapping(target_path=target, source_path=source)


def sends(
    destination: str, *mappings: VariableMapping, star: bool = False, comment: str | None = None
) -> AllCommand:
    """``! @all->destination@{{mappings}}``, with ``*`` after it when ``star``."""
    return AllCommand(
        destination_path=destination, mappings=mappings, has_multiplicity=star, comment=comment
    )


def each(
    inclusion: str | None, destination: str, *mappings: VariableMapping, comment: str | None = None
) -> EachCommand:
    """``! @each[inclusion]->destination@{{mappings}}*`` (an @each always ends in ``*``)."""
    return EachCommand(
        inclusion_path=inclusion,
        destination_path=destination,
        mappings=mappings,
        comment=comment,
    )
