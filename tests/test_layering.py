"""The pipeline's stages import only earlier stages (dsl → structure → prompts → runtime).

Every import counts: at the top of a module or inside a function, and ``import langtree``
or ``from langtree import ...`` too, which loads the package root and with it every
stage the root exports (``api`` and all before it).
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "langtree"

STAGES = {
    "version": 0,
    "errors": 0,
    "display": 0,
    "local_files": 0,
    "dsl": 1,
    "structure": 2,
    "prompts": 3,
    "runtime": 4,
    "testing": 5,
    "models": 5,
    "api": 6,
    "cli": 7,
    "ray": 7,
    "__main__": 7,
}


def stage_of(module: str) -> int:
    """The stage of a ``langtree`` module name; the package root is the latest stage it
    imports."""
    parts = module.split(".")
    if len(parts) == 1:
        return max(map(stage_of, imported_modules(PACKAGE / "__init__.py")))
    # A module's stage is its name without the underscore that marks it private.
    name = parts[1]
    return STAGES[name if name in STAGES else name.removeprefix("_")]


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return {name for name in names if name == "langtree" or name.startswith("langtree.")}


def package_modules() -> list[Path]:
    return sorted(
        path
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).parts != ("__init__.py",)
    )


@pytest.mark.parametrize("path", package_modules(), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_module_imports_no_later_stage(path: Path) -> None:
    module = "langtree." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
    own = stage_of(module)

    later = sorted(name for name in imported_modules(path) if stage_of(name) > own)

    assert later == [], f"{module} imports later stages: {later}"


def test_no_relative_imports() -> None:
    relative = [
        str(path.relative_to(PACKAGE))
        for path in package_modules()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.level > 0
    ]

    assert relative == []


def test_the_package_root_is_the_stage_of_the_api() -> None:
    assert stage_of("langtree") == STAGES["api"]


def test_imports_inside_functions_and_of_the_package_root_are_seen(tmp_path: Path) -> None:
    module = tmp_path / "late.py"
    module.write_text(
        "def build():\n"
        "    from langtree import RunStructure\n"
        "    import langtree.runtime.engine._engine\n"
        "    return RunStructure\n"
    )

    assert imported_modules(module) == {"langtree", "langtree.runtime.engine._engine"}
