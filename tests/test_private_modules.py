"""Every module is private; each package's ``__init__`` is its public surface.

A module's file name starts with an underscore, except a package's ``__init__`` and
``__main__`` and the few public modules users import by name (`PUBLIC_MODULES`). A
package's ``__init__`` lists what it offers in a sorted ``__all__``. Inside a stage,
modules import each other's private modules; across stages, and in the examples and the
docs, code imports only public names. Tests and benchmarks may reach a private module, as
they check or measure it from inside.
"""

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_public_api import isort_order

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "langtree"

PUBLIC_MODULES = {
    "errors.py": "the exception tree, which every stage raises from",
    "ray.py": "runs on a Ray cluster, an optional extra the package root does not import",
    "testing/pytest_plugin.py": "the pytest plugin, named by the package's entry point",
}
"""The public modules besides the packages' ``__init__``, each with why it is public."""

ROOT_BASE = {"langtree._version", "langtree._display", "langtree._local_files"}
"""The root's private modules that every stage may import: the version, the Markdown and
HTML helpers of every display, and the bounded reading of local files."""

EXAMPLES = sorted((ROOT / "examples").rglob("*.py"))
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
DOC_IMPORT = re.compile(r"^[ \t]*from (langtree[\w.]*) import (\([^)]*\)|.*)$", re.MULTILINE)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_private(module: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in module.split("."))


def stage(module: str) -> str:
    """``structure`` for ``langtree.structure.tree._tree``; ``""`` for the root's modules."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (PACKAGE / parts[-1]).is_dir() else ""


def package_modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def imports(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """Every import of a ``langtree`` module in ``path``: line, module, names."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("langtree"):
            yield node.lineno, node.module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("langtree"):
                    yield node.lineno, alias.name, []


def public_surface(module: str) -> list[str]:
    return list(importlib.import_module(module).__all__)


def test_every_module_is_private_but_the_public_ones() -> None:
    public = sorted(
        str(path.relative_to(PACKAGE))
        for path in package_modules()
        if not path.name.startswith("_")
    )

    assert public == sorted(PUBLIC_MODULES)


@pytest.mark.parametrize(
    "module",
    sorted(
        module_name(path)
        for path in package_modules()
        if path.name == "__init__.py" or str(path.relative_to(PACKAGE)) in PUBLIC_MODULES
    ),
)
def test_a_public_module_lists_its_names_sorted(module: str) -> None:
    loaded = importlib.import_module(module)
    names = list(loaded.__all__)

    assert names == sorted(set(names), key=isort_order)
    assert [name for name in names if not hasattr(loaded, name)] == []


@pytest.mark.parametrize("path", package_modules(), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_a_module_imports_only_public_names_of_other_stages(path: Path) -> None:
    own = stage(module_name(path))
    reached = [
        f"line {line}: {module}"
        for line, module, _ in imports(path)
        if is_private(module) and stage(module) != own and module not in ROOT_BASE
    ]

    assert reached == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: str(path.relative_to(ROOT)))
def test_the_examples_import_only_public_names(path: Path) -> None:
    reached = [
        f"line {line}: {module} {names}"
        for line, module, names in imports(path)
        if is_private(module) or set(names) - set(public_surface(module))
    ]

    assert reached == []


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_the_docs_import_only_public_names(document: Path) -> None:
    reached = []
    for found in DOC_IMPORT.finditer(document.read_text()):
        module = found.group(1)
        listed = found.group(2).partition("#")[0].strip().strip("()")
        imported = set(re.findall(r"(\w+)(?:\s+as\s+\w+)?", listed))
        if is_private(module) or imported - set(public_surface(module)):
            reached.append(found.group(0).strip())

    assert reached == []
