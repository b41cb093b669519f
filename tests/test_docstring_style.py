"""Docstrings are written in one style: Google sections with Markdown, as mkdocstrings
renders them for the API reference without rewriting them.

So no Sphinx roles (``:class:`X```, which Markdown shows as it is: write `` `X` ``), and
every doctest stands in an ``Examples:`` section, which griffe renders as code (in free
text, Markdown would read ``>>>`` as nested quotes).
"""

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "langtree"
ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):`")
MODULES = sorted(PACKAGE.rglob("*.py"))


def module_id(path: Path) -> str:
    return str(path.relative_to(PACKAGE))


def docstrings(path: Path) -> list[tuple[int, str]]:
    """Each docstring of a module (its own, its classes' and functions'), with its line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node)
            if text is not None:
                found.append((node.body[0].lineno, text))
    return found


@pytest.mark.parametrize("path", MODULES, ids=module_id)
def test_no_sphinx_roles(path: Path) -> None:
    lines = path.read_text().splitlines()

    roles = [
        f"{number}: {line.strip()}" for number, line in enumerate(lines, 1) if ROLE.search(line)
    ]

    assert roles == []


def doctests_outside_examples(text: str) -> list[str]:
    """The ``>>>`` lines of a docstring that stand outside an ``Examples:`` section."""
    outside = []
    in_examples = False
    for line in text.splitlines():
        if line and not line[0].isspace():
            in_examples = line.rstrip() == "Examples:"
        if line.lstrip().startswith(">>>") and not in_examples:
            outside.append(line.strip())
    return outside


@pytest.mark.parametrize("path", MODULES, ids=module_id)
def test_doctests_stand_in_examples_sections(path: Path) -> None:

    outside = [
        f"{line}: {doctest}"
        for line, text in docstrings(path)
        for doctest in doctests_outside_examples(text)
    ]

    assert outside == []
