"""Whether a literal a mapping sends (``value.status="draft"``) fits its target field.

A literal is a known value, so its own value is checked, not its type: it fits when
Pydantic validates it against the target's annotation in strict mode (``3`` fits a
``float``, ``"3"`` does not fit an ``int``, ``true`` does not fit an ``int``), or when
it is the value of one of an ``Enum`` target's members (``"draft"`` fits
``Status.DRAFT``). The validation strategy does not loosen this: a literal can always
be written in the target's own type.
"""

from __future__ import annotations

from enum import Enum

from pydantic import ValidationError

from langtree.dsl import Scalar, format_value
from langtree.structure.types._annotations import render_type
from langtree.structure.types._defaults import type_adapter

__all__ = ["literal_problem"]


def literal_problem(literal: Scalar, target_path: str, target: object) -> tuple[str, str] | None:
    """The message and hint when ``literal`` cannot be written into ``target``.

    Args:
        literal: The literal a mapping sends.
        target_path: The target field's path, e.g. ``"task.review.count"``.
        target: The type each write of the target field receives.

    Returns:
        ``None`` when the literal fits, else the diagnostic's message and hint.
    """
    if _fits(literal, target):
        return None
    text = format_value(literal)
    return (
        f"Literal {text} in variable mapping does not fit {target_path} ({render_type(target)})",
        _hint(target),
    )


def _hint(target: object) -> str:
    if isinstance(target, type) and issubclass(target, Enum):
        values = ", ".join(_member_text(member) for member in target)
        return f"write one of the values of {target.__name__}: {values}"
    return f"write a value of type {render_type(target)}, or map a field that holds one"


def _member_text(member: Enum) -> str:
    value = member.value
    return format_value(value) if isinstance(value, str | int | float | bool) else repr(value)


def _fits(literal: Scalar, target: object) -> bool:
    adapter = type_adapter(target)
    try:
        adapter.validate_python(literal, strict=True)
        return True
    except ValidationError:
        pass
    try:
        member = adapter.validate_python(literal)
    except ValidationError:
        return False
    # Strict mode wants the member itself; a literal names it by its value.
    return isinstance(member, Enum) and type(member.value) is type(literal)
