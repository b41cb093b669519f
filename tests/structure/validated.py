"""What ``RunStructure.validate()`` says about some trees, in the forms the structure tests
compare: the diagnostics themselves, their ``(severity, message, hint)`` triples, and the
line of a test file a diagnostic points at."""

import inspect
from collections.abc import Mapping
from pathlib import Path

from langtree import RunStructure, StructureError, TreeNode
from langtree.errors import Diagnostic


def diagnostics(
    *tasks: type[TreeNode],
    config: object = None,
    provider: object = None,
    inputs: Mapping[object, object] | None = None,
) -> tuple[Diagnostic, ...]:
    """The errors of ``validate()``, or its warnings when there are no errors."""
    structure = RunStructure(config, provider)  # type: ignore[arg-type]
    for task in tasks:
        structure.add(task)
    try:
        return structure.validate(inputs)
    except StructureError as error:
        return error.diagnostics


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
