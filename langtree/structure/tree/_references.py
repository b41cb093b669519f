"""Forward references in node classes: completing the classes, naming what does not resolve.

Pydantic leaves a class *incomplete* when an annotation names something not defined yet
(``items: list["Item"]`` above ``class Item``, or a module whose names pydantic cannot
see) and completes it on first use. LangTree completes each class before reading its
fields, the way pydantic would (from the class's module and the namespace it was defined
in), so that the tree sees the real types. A name that still does not resolve is reported
on the field whose type uses it, also when it hides in another model that the field uses.
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ForwardRef, get_args

from pydantic import BaseModel
from pydantic.errors import PydanticUndefinedAnnotation

from langtree.structure.types._annotations import is_model, literal_values, strip_annotated

__all__ = ["Unresolved", "complete", "unresolved_fields", "unresolved_name"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Unresolved:
    """Names a field's type uses that are not defined.

    Attributes:
        field_name: The field of the class being read.
        names: The undefined names, in the order they appear.
        owner: The model whose annotation holds them (the class itself, or a model that
            the field's type uses).
        owner_field: The field of ``owner`` whose annotation holds them.
    """

    field_name: str
    names: tuple[str, ...]
    owner: type[BaseModel]
    owner_field: str


def complete(model: type[BaseModel]) -> bool:
    """Complete ``model`` if pydantic left it incomplete; whether it is complete now."""
    if not model.__pydantic_complete__:
        model.model_rebuild(raise_errors=False, _parent_namespace_depth=0)
    return model.__pydantic_complete__


def unresolved_fields(
    model: type[BaseModel], *, read_elsewhere: frozenset[type] = frozenset()
) -> list[Unresolved]:
    """The fields of an incomplete ``model`` whose types use names that are not defined.

    Args:
        model: A class that `complete()` could not complete.
        read_elsewhere: Models whose own fields are checked on their own (the tree's
            node classes), not through the fields that use them.
    """
    found = []
    seen = {model, *read_elsewhere}
    for name, info in model.model_fields.items():
        missing = list(_missing(info.annotation, model, name, seen))
        if missing:
            owner, owner_field = missing[0][0], missing[0][1]
            names = tuple(dict.fromkeys(m[2] for m in missing if m[0] is owner))
            found.append(
                Unresolved(field_name=name, names=names, owner=owner, owner_field=owner_field)
            )
    return found


def unresolved_name(model: type[BaseModel]) -> str | None:
    """The first name pydantic reports undefined when it completes ``model``, if any."""
    try:
        model.model_rebuild(_parent_namespace_depth=0)
    except PydanticUndefinedAnnotation as error:
        return error.name
    return None


def _missing(
    annotation: object, owner: type[BaseModel], field: str, seen: set[type]
) -> Iterator[tuple[type[BaseModel], str, str]]:
    """(owner, field, name) for each undefined name the annotation uses."""
    annotation = strip_annotated(annotation)
    if isinstance(annotation, str | ForwardRef):
        text = annotation if isinstance(annotation, str) else annotation.__forward_arg__
        yield from ((owner, field, name) for name in _undefined_names(text, owner))
        return
    if literal_values(annotation) is not None:
        return
    if is_model(annotation) and annotation not in seen:
        seen.add(annotation)
        if not complete(annotation):
            for name, info in annotation.model_fields.items():
                yield from _missing(info.annotation, annotation, name, seen)
    for argument in get_args(annotation):
        yield from _missing(argument, owner, field, seen)


def _undefined_names(text: str, owner: type[BaseModel]) -> list[str]:
    """The names in a forward reference that neither ``owner``'s namespaces nor builtins hold."""
    try:
        expression = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return [text]
    known = _namespace(owner)
    names = dict.fromkeys(n.id for n in ast.walk(expression) if isinstance(n, ast.Name))
    return [name for name in names if name not in known and not hasattr(builtins, name)]


def _namespace(owner: type[BaseModel]) -> set[str]:
    """The names pydantic resolves ``owner``'s annotations in."""
    module = sys.modules.get(owner.__module__)
    names = set(vars(module)) if module is not None else set()
    names |= set(owner.__pydantic_parent_namespace__ or {})
    return names | set(vars(owner)) | {owner.__name__}
