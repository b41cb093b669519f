"""Find the node classes in a Python file, a folder of files, or an importable module.

Finding them means importing the user's modules. A module that does not import (a syntax
error, an exception while its code runs, a module it imports that is missing) is a
problem in the user's tree: `load_modules()` raises a `StructureError` that
points at the line of that module that failed, as for any other problem in the tree.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import linecache
import sys
import traceback
from pathlib import Path
from types import ModuleType

from langtree.errors import Diagnostic, LangTreeError, StructureError
from langtree.structure.tree._tree_node import TreeNode

__all__ = ["load_modules", "node_classes"]


def load_modules(target: str) -> list[ModuleType]:
    """Import a ``.py`` file, every ``.py`` file under a folder, or a dotted module name.

    Each is imported as Python runs it: a file with its own folder first on the import
    path (``python tree.py``), so that it imports the modules beside it; a dotted name
    with the working folder first (``python -m``), so that a module there is found
    whatever started the process (the ``langtree`` script puts its own folder there).
    The folders stay on the path: the modules may import more while they run.

    Raises:
        LangTreeError: Nothing exists at ``target``.
        StructureError: A module does not import (every such module of a folder is
            reported), at the line of the module that failed.
    """
    path = Path(target)
    if path.is_dir():
        return _load_files(sorted(path.rglob("*.py")))
    if path.suffix == ".py":
        if not path.is_file():
            raise LangTreeError(f"No such file: {target!r}")
        return _load_files([path])
    _put_first_on_path(Path.cwd())
    try:
        return [importlib.import_module(target)]
    except ModuleNotFoundError as error:
        if error.name and (target == error.name or target.startswith(f"{error.name}.")):
            raise LangTreeError(f"No file or importable module named {target!r}") from None
        raise StructureError([_import_problem(error, None)]) from None
    # The user's module may raise any type while it runs: each is reported where it rose.
    except Exception as error:  # noqa: BLE001
        raise StructureError([_import_problem(error, None)]) from None


def _load_files(paths: list[Path]) -> list[ModuleType]:
    modules: list[ModuleType] = []
    problems: list[Diagnostic] = []
    for path in paths:
        try:
            modules.append(_load_file(path))
        # As in load_modules: whatever a module raises is reported, and the next loaded.
        except Exception as error:  # noqa: BLE001
            problems.append(_import_problem(error, path))
    if problems:
        raise StructureError(problems)
    return modules


def _put_first_on_path(folder: Path) -> None:
    """Put ``folder`` first on the import path (a folder on it already stays where it is)."""
    entry = str(folder.resolve())
    if entry not in sys.path:
        sys.path.insert(0, entry)


def _load_file(path: Path) -> ModuleType:
    _put_first_on_path(path.parent)
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    name = f"_langtree_file_{digest}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _import_problem(error: Exception, path: Path | None) -> Diagnostic:
    """Why a module did not import, at its syntax error or at its line that raised."""
    if isinstance(error, SyntaxError) and error.filename and error.lineno:
        return _syntax_problem(error)
    described = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    message = f"Importing the module raised {described}"
    hint = "the module must import without errors: LangTree imports it to find its tasks"
    if isinstance(error, ModuleNotFoundError) and error.name:
        hint = f"install {error.name!r}, or run langtree where it can be imported (PYTHONPATH)"
    frame = _failing_frame(error)
    if frame is None or frame.lineno is None:
        file = str(path.resolve()) if path is not None else None
        return Diagnostic(severity="error", message=message, hint=hint, file=file, line=1)
    source_line = linecache.getline(frame.filename, frame.lineno).rstrip()
    column, length = _span(source_line, frame)
    return Diagnostic(
        severity="error",
        message=message,
        hint=hint,
        file=frame.filename,
        line=frame.lineno,
        column=column,
        length=length,
        source_line=source_line,
    )


def _syntax_problem(error: SyntaxError) -> Diagnostic:
    column = max(1, error.offset or 1)
    one_line = error.end_lineno == error.lineno and error.end_offset is not None
    return Diagnostic(
        severity="error",
        message=f"{type(error).__name__}: {error.msg}",
        hint="fix the Python syntax: LangTree imports the module to find its tasks",
        file=error.filename,
        line=error.lineno,
        column=column,
        length=max(1, (error.end_offset or 0) - column) if one_line else 1,
        source_line=(error.text or "").rstrip(),
    )


def _failing_frame(error: Exception) -> traceback.FrameSummary | None:
    """The deepest frame of ``error`` in the file of the module that was imported.

    That module's top-level code is the first ``<module>`` frame; a line deeper in the
    same file (a function it called) says more than the call, a line inside a library
    it called says less.
    """
    frames = traceback.extract_tb(error.__traceback__)
    module_file = next((frame.filename for frame in frames if frame.name == "<module>"), None)
    found = [frame for frame in frames if frame.filename == module_file]
    return found[-1] if found else None


def _span(source_line: str, frame: traceback.FrameSummary) -> tuple[int, int]:
    """The 1-based column and the length of the failing expression on its line."""
    start, end = frame.colno, frame.end_colno
    if start is None or end is None or frame.end_lineno != frame.lineno:
        stripped = source_line.lstrip()
        return len(source_line) - len(stripped) + 1, max(1, len(stripped))
    encoded = source_line.encode()  # the positions count bytes of UTF-8
    column = len(encoded[:start].decode(errors="replace")) + 1
    return column, max(1, len(encoded[start:end].decode(errors="replace")))


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
