"""Where a class's docstring and field descriptions stand in its source file."""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass

from pydantic import BaseModel

__all__ = ["Origin", "class_origins"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Origin:
    """Where a text (a docstring, or one field's description) comes from.

    Attributes:
        class_name: The class's qualified name.
        field_name: The field, or ``None`` for the class docstring.
        file: The source file, when Python knows it (not for classes made in a REPL).
        line: The file line holding the text's first line, when known.
    """

    class_name: str
    field_name: str | None = None
    file: str | None = None
    line: int | None = None

    def file_line(self, text_line: int) -> int | None:
        """The file line of a line of the text (1 = its first line), when known."""
        return None if self.line is None else self.line + text_line - 1

    def describe(self, text_line: int = 1) -> str:
        """``Class.field (file:line)``, as far as it is known."""
        owner = self.class_name + (f".{self.field_name}" if self.field_name else "")
        line = self.file_line(text_line)
        return f"{owner} ({self.file}:{line})" if self.file and line else owner


def class_origins(cls: type[BaseModel]) -> dict[str | None, Origin]:
    """The origin of a class's docstring (key ``None``) and of each field's description."""
    file, node, first_line = _class_source(cls)
    lines = _text_lines(node, first_line) if node is not None else {}
    return {
        key: Origin(class_name=cls.__qualname__, field_name=key, file=file, line=lines.get(key))
        for key in (None, *cls.model_fields)
    }


def _class_source(cls: type) -> tuple[str | None, ast.ClassDef | None, int]:
    try:
        file = inspect.getsourcefile(cls)
        source, first_line = inspect.getsourcelines(cls)
    except (OSError, TypeError):
        return None, None, 0
    tree = ast.parse(textwrap.dedent("".join(source)))
    node = tree.body[0] if tree.body else None
    return file, node if isinstance(node, ast.ClassDef) else None, first_line


def _text_lines(node: ast.ClassDef, first_line: int) -> dict[str | None, int]:
    """File lines of the docstring and of each field's description (or annotation)."""
    offset = first_line - 1
    lines: dict[str | None, int] = {}
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        lines[None] = body[0].lineno + offset
    for statement in body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            lines[statement.target.id] = _description_line(statement) + offset
    return lines


def _description_line(statement: ast.AnnAssign) -> int:
    value = statement.value
    if isinstance(value, ast.Call):
        for keyword in value.keywords:
            if keyword.arg == "description":
                return keyword.value.lineno
    return statement.lineno
