"""What ``RunStructure.validate()`` says about some trees, in the forms the structure tests
compare: the diagnostics themselves, their ``(severity, message, hint)`` triples, the
line of a test file a diagnostic points at, and the span its marker stands under."""

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from langtree import RunStructure, StructureError, TreeNode
from langtree.errors import Diagnostic


def structure_of(
    *tasks: type[TreeNode], config: object = None, provider: object = None
) -> RunStructure:
    """A structure holding ``tasks``, made with ``config`` and ``provider``."""
    structure = RunStructure(config, provider)  # type: ignore[arg-type]
    for task in tasks:
        structure.add(task)
    return structure


def diagnostics(
    *tasks: type[TreeNode],
    config: object = None,
    provider: object = None,
    inputs: Mapping[object, object] | None = None,
) -> tuple[Diagnostic, ...]:
    """The errors of ``validate()``, or its warnings when there are no errors."""
    try:
        return structure_of(*tasks, config=config, provider=provider).validate(inputs)
    except StructureError as error:
        return error.diagnostics


def refused(
    *tasks: type[TreeNode],
    config: object = None,
    provider: object = None,
    inputs: Mapping[object, object] | None = None,
) -> tuple[Diagnostic, ...]:
    """The diagnostics of the StructureError ``validate()`` raises (the test fails if it
    raises none)."""
    structure = structure_of(*tasks, config=config, provider=provider)
    with pytest.raises(StructureError) as caught:
        structure.validate(inputs)
    return caught.value.diagnostics


def problems(
    *tasks: type[TreeNode],
    config: object = None,
    provider: object = None,
    inputs: Mapping[object, object] | None = None,
) -> list[tuple[str, str, str]]:
    """Each diagnostic of ``diagnostics()`` as ``(severity, message, hint)``."""
    found = diagnostics(*tasks, config=config, provider=provider, inputs=inputs)
    return [(d.severity, d.message, d.hint) for d in found]


def line_in(cls: type[TreeNode], snippet: str) -> int:
    """The line of the file defining ``cls`` where ``snippet`` first stands after the line
    ``class <name>(`` (the first such line: the class as written at module level)."""
    lines = Path(inspect.getsourcefile(cls) or "").read_text().splitlines()
    start = next(i for i, line in enumerate(lines, 1) if f"class {cls.__name__}(" in line)
    return next(i for i, line in enumerate(lines, 1) if i > start and snippet in line)


@dataclass(frozen=True, slots=True, kw_only=True)
class Mark:
    """Where a diagnostic's marker stands: a line of a file, its text, and the span under
    the marker (1-based column, length)."""

    line: int | None
    source_line: str
    column: int
    length: int


def mark_of(diagnostic: Diagnostic) -> Mark:
    """The mark ``diagnostic`` points at."""
    return Mark(
        line=diagnostic.line,
        source_line=diagnostic.source_line,
        column=diagnostic.column,
        length=diagnostic.length,
    )


def mark_in(cls: type[TreeNode], source_line: str, snippet: str) -> Mark:
    """A mark under the whole of ``snippet`` in ``source_line``: the line of the file
    defining ``cls`` where ``snippet`` first stands after ``class <name>(``."""
    return Mark(
        line=line_in(cls, snippet),
        source_line=source_line,
        column=source_line.index(snippet) + 1,
        length=len(snippet),
    )
