"""Defaults checked against their fields' types, and the validators that check values.

Pydantic does not validate defaults, so a default of the wrong type (``count: int =
Field(default="many")``) would pass every check and fail only when the run's result is
validated. Each default that makes a field known (DESIGN D2: not ``None``, or made by a
``default_factory``) is validated against the field's annotation with its constraints,
without touching the user's class. A node field's default may be partial, as for inputs:
the node's missing fields are generated, so only what the default holds must fit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, cast, get_origin

from pydantic import ConfigDict, TypeAdapter, ValidationError
from pydantic.errors import PydanticSchemaGenerationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticUndefined

from langtree.structure.types._annotations import render_type

__all__ = ["default_problem", "type_adapter"]

# Building a validator costs far more than using one, and the same annotations come
# back for every class and every run; an annotation that cannot be hashed (an
# unhashable ``Annotated`` metadata) is built each time.
_ADAPTERS: dict[object, TypeAdapter[Any]] = {}
_ARBITRARY = ConfigDict(arbitrary_types_allowed=True)


def type_adapter(annotation: object) -> TypeAdapter[Any]:
    """A validator for a field's annotation, built once per (hashable) annotation.

    A type pydantic has no schema for is checked with ``isinstance``: a field can only
    have it when its model allows arbitrary types.
    """
    try:
        adapter = _ADAPTERS.get(annotation)
    except TypeError:
        return _adapter(annotation)
    if adapter is None:
        adapter = _ADAPTERS[annotation] = _adapter(annotation)
    return adapter


def _adapter(annotation: object) -> TypeAdapter[Any]:
    try:
        return TypeAdapter(cast(Any, annotation))
    except PydanticSchemaGenerationError:
        return TypeAdapter(cast(Any, annotation), config=_ARBITRARY)


def default_problem(
    owner: str, name: str, info: FieldInfo, *, partial: bool
) -> tuple[str, str] | None:
    """Why the default of a field does not fit its type, as (message, hint).

    Args:
        owner: The class's name, as messages show it.
        name: The field's name.
        info: The field as pydantic holds it (its annotation, constraints and default).
        partial: Whether the field holds nodes, whose defaults may leave fields out.

    Returns:
        ``None`` when the field has no default that makes it known (none, ``None``, or a
        factory that needs the other fields' values), or when the default fits.
    """
    factory = info.default_factory
    if factory is None:
        value = info.default
        if value is None or value is PydanticUndefined or _plainly_fits(value, info):
            return None
    # A factory that takes the other fields' values cannot be called before they exist:
    # what it makes is not checked here.
    elif info.default_factory_takes_validated_data:
        return None
    else:
        try:
            value = cast(Callable[[], object], factory)()
        # The user's code: whatever it raises is reported with the field, not raised.
        except Exception as error:  # noqa: BLE001
            return _raised(f"field {name!r} of {owner!r}", info, error)
        if _plainly_fits(value, info):
            return None
    annotation: object = info.annotation
    if info.metadata:
        annotation = Annotated[(annotation, *info.metadata)]
    try:
        type_adapter(annotation).validate_python(value)
    except ValidationError as error:
        problems = [e for e in error.errors() if not (partial and e["type"] == "missing")]
        if problems:
            field = f"field {name!r} of {owner!r}"
            return _problem(field, info, value, problems, factory=factory is not None)
    return None


def _plainly_fits(value: object, info: FieldInfo) -> bool:
    """Whether the value fits without a validator: of the annotation's own class, or an
    empty list or dict for a list or dict type (no constraints either way)."""
    if info.metadata:
        return False
    annotation = info.annotation
    if type(value) is annotation:
        return True
    return type(value) in (list, dict) and not value and get_origin(annotation) is type(value)


def _problem(
    field: str, info: FieldInfo, value: object, problems: list[ErrorDetails], *, factory: bool
) -> tuple[str, str]:
    type_name = render_type(info.annotation)
    reasons = "; ".join(_reason(problem) for problem in problems)
    given = (
        f"The default_factory of {field} returns {value!r:.60}, which"
        if factory
        else f"The default of {field}, {value!r:.60},"
    )
    return (
        f"{given} does not fit its type ({type_name}): {reasons}",
        f"give the field a default of type {type_name}, or none to have it generated",
    )


def _raised(field: str, info: FieldInfo, error: Exception) -> tuple[str, str]:
    type_name = render_type(info.annotation)
    return (
        f"The default_factory of {field} raised {type(error).__name__}: {error!s:.200}",
        f"make it return a value of type {type_name} when called without arguments, or "
        "remove it to have the field generated",
    )


def _reason(problem: ErrorDetails) -> str:
    location = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in problem["loc"])
    return f"{location.lstrip('.')}: {problem['msg']}" if location else problem["msg"]
