"""The commands that parse tests expect, each built in one call: the mappings as
``to(target, source)``, the commands as ``sends(...)`` and ``each(...)``."""

from langtree.dsl import AllCommand, EachCommand, VariableMapping


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
