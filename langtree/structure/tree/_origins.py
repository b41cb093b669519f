"""Where a class's docstring and field descriptions stand in its source file."""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import os
import re
from dataclasses import dataclass

from pydantic import BaseModel

from langtree.errors import Diagnostic
from langtree.structure.tree._tree_node import display_name

__all__ = ["Origin", "class_origins"]

_STRING_START = re.compile(r"[rRuU]?(?:\"\"\"|\'\'\'|\"|\')")


@dataclass(frozen=True, slots=True, kw_only=True)
class Origin:
    """Where a text (a docstring, or one field's description) comes from.

    Attributes:
        class_name: The class's qualified name.
        field_name: The field, or ``None`` for the class docstring.
        file: The source file, when Python knows it (not for classes made in a REPL).
        line: The file line holding the text's first line, when known.
        column: The file column (0-based) where the text's first line starts, just after
            the opening quotes; the text's other lines are whole file lines.
    """

    class_name: str
    field_name: str | None = None
    file: str | None = None
    line: int | None = None
    column: int = 0

    def file_line(self, text_line: int) -> int | None:
        """The file line of a line of the text (1 = its first line), when known."""
        return None if self.line is None else self.line + text_line - 1

    def file_column(self, text_line: int, column: int) -> int:
        """The file column of a 1-based column on a line of the text."""
        return column + self.column if text_line == 1 else column

    def diagnostic(
        self,
        message: str,
        *,
        hint: str,
        text_line: int,
        column: int,
        source_line: str,
        length: int = 1,
        warning: bool = False,
    ) -> Diagnostic:
        """A diagnostic at a line and column of the text, placed in the file when known.

        With a file whose line holds the text's line as written, the line and column are
        the file's and the line shown is the file's own. Otherwise (no file; a text with
        escapes, or not written as one string literal) they count within the text and
        the text's line ``source_line`` is shown, at the file line where the text starts.
        """
        line = self.file_line(text_line)
        file_text = self._file_text(line, text_line, source_line)
        if file_text is not None:
            column, source_line = self.file_column(text_line, column), file_text
        elif self.line is not None:
            line = self.line
        return Diagnostic(
            severity="warning" if warning else "error",
            message=message,
            hint=hint,
            class_name=self.class_name,
            field_name=self.field_name,
            file=self.file,
            line=line or text_line,
            column=column,
            source_line=source_line,
            length=length,
        )

    def _file_text(self, line: int | None, text_line: int, source_line: str) -> str | None:
        """The file's line, when it holds the text's line exactly where expected."""
        if not (self.file and line):
            return None
        file_text = linecache.getline(self.file, line).rstrip("\r\n")
        start = self.column if text_line == 1 else 0
        return file_text if file_text[start:].startswith(source_line) else None

    def describe(self, text_line: int = 1) -> str:
        """``Class.field (file:line)``, as far as it is known."""
        owner = self.class_name + (f".{self.field_name}" if self.field_name else "")
        line = self.file_line(text_line)
        return f"{owner} ({self.file}:{line})" if self.file and line else owner


def class_origins(cls: type[BaseModel]) -> dict[str | None, Origin]:
    """The origin of a class's docstring (key ``None``) and of each field's description.

    A field inherited from a base class has the base class's origin.
    """
    origins = {
        key: Origin(class_name=display_name(cls), field_name=key)
        for key in (None, *cls.model_fields)
    }
    owners = [base for base in cls.__mro__ if _defines_fields(base)]
    for owner in reversed(owners):
        file, places = _class_places(owner)
        for key, (line, column) in places.items():
            if key in origins and (key is not None or owner is cls):
                origins[key] = Origin(
                    class_name=display_name(owner) if key is not None else display_name(cls),
                    field_name=key,
                    file=file,
                    line=line,
                    column=column,
                )
    return origins


def _defines_fields(cls: type) -> bool:
    """Whether ``cls`` is a user's model class (not pydantic's or LangTree's own bases)."""
    return (
        isinstance(cls, type)
        and issubclass(cls, BaseModel)
        and cls.__module__.split(".")[0] not in ("pydantic", "langtree")
    )


def _class_places(cls: type) -> tuple[str | None, dict[str | None, tuple[int, int]]]:
    """The file, and the (line, column) of the docstring and each field's description."""
    try:
        file = inspect.getsourcefile(cls)
    except (OSError, TypeError):
        return None, {}
    if file is None:
        return None, {}
    lines = linecache.getlines(file)
    node = _class_index(file, _version(file, lines)).get(cls.__qualname__)
    if node is None:
        return file, {}
    places = {
        key: (value.lineno, _text_column(value, lines)) for key, value in _text_nodes(node).items()
    }
    places.setdefault(None, (node.lineno, 0))
    return file, places


def _version(file: str, lines: list[str]) -> tuple[int, int]:
    """What identifies the file's current text cheaply: its size and modification time."""
    try:
        status = os.stat(file)
    except OSError:
        return (sum(map(len, lines)), 0)
    return (status.st_size, status.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _class_index(file: str, version: tuple[int, int]) -> dict[str, ast.ClassDef]:
    """Every class statement of a file by qualified name (the first one of each name).

    Parsing a file once for all its classes keeps a module of many classes linear.
    """
    try:
        tree = ast.parse("".join(linecache.getlines(file)), filename=file)
    except (SyntaxError, ValueError):
        return {}
    index: dict[str, ast.ClassDef] = {}
    _index_classes(tree.body, "", index)
    return index


def _index_classes(statements: list[ast.stmt], prefix: str, index: dict[str, ast.ClassDef]) -> None:
    for statement in statements:
        if isinstance(statement, ast.ClassDef):
            index.setdefault(prefix + statement.name, statement)
            _index_classes(statement.body, f"{prefix}{statement.name}.", index)
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            _index_classes(statement.body, f"{prefix}{statement.name}.<locals>.", index)
        else:
            for child in ast.iter_child_nodes(statement):
                if isinstance(child, ast.stmt):
                    _index_classes([child], prefix, index)


def _text_nodes(node: ast.ClassDef) -> dict[str | None, ast.expr]:
    """The docstring's node, and each field's description node (or its statement's)."""
    texts: dict[str | None, ast.expr] = {}
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        texts[None] = body[0].value
    for statement in body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            texts[statement.target.id] = _description_node(statement)
    return texts


def _description_node(statement: ast.AnnAssign) -> ast.expr:
    value = statement.value
    if isinstance(value, ast.Call):
        for keyword in value.keywords:
            if keyword.arg == "description":
                return keyword.value
    return statement.target


def _text_column(value: ast.expr, lines: list[str]) -> int:
    """Where a plain string literal's text starts (after prefix and quotes), else 0."""
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return 0
    line = lines[value.lineno - 1]
    column = len(line.encode()[: value.col_offset].decode(errors="replace"))
    match = _STRING_START.match(line, column)
    return match.end() if match else 0
