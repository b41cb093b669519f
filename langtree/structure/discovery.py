"""Find the node classes in a Python file, a folder of files, or an importable module."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from langtree.errors import LangTreeError
from langtree.structure.tree_node import TreeNode

__all__ = ["load_modules", "node_classes"]


def load_modules(target: str) -> list[ModuleType]:
    """Import a ``.py`` file, every ``.py`` file under a folder, or a dotted module name.

    Raises:
        LangTreeError: Nothing exists at ``target``.
    """
    path = Path(target)
    if path.is_dir():
        return [_load_file(file) for file in sorted(path.rglob("*.py"))]
    if path.suffix == ".py":
        if not path.is_file():
            raise LangTreeError(f"No such file: {target!r}")
        return [_load_file(path)]
    try:
        return [importlib.import_module(target)]
    except ModuleNotFoundError as error:
        if error.name and (target == error.name or target.startswith(f"{error.name}.")):
            raise LangTreeError(f"No file or importable module named {target!r}") from None
        raise


def _load_file(path: Path) -> ModuleType:
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    name = f"_langtree_file_{digest}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def node_classes(module: ModuleType) -> list[type[TreeNode]]:
    """The ``TreeNode`` subclasses defined in a module, nested ones included, in order."""
    found: list[type[TreeNode]] = []
    pending: list[object] = list(vars(module).values())
    while pending:
        value = pending.pop(0)
        if not (isinstance(value, type) and issubclass(value, TreeNode)) or value is TreeNode:
            continue
        if value.__module__ == module.__name__ and value not in found:
            found.append(value)
            pending.extend(vars(value).values())
    return found
