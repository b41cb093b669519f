"""Converting a value to the type of the field it is mapped into, at run time.

`convert_value()` performs the conversions `langtree.structure.types._compatibility`
rates, and is a little more lenient than the check before the run: a model converts into
any ``dict[K, V]`` whose keys and values its dumped fields convert to, and an annotation it
does not know (a ``Callable``, a forward reference) takes the value unchanged.

A union target tries its members in priority order and keeps the first success:

1. the members the value already is an instance of (a ``bool`` is not an ``int`` here);
2. model classes; 3. ``int`` for integral numbers, ``bool`` for ``bool`` values;
4. ``float``, then ``bool``, then ``str``; 5. dicts, lists, tuples and sets; 6. the rest.

Under the ``exact`` strategy nothing converts: `check_exact()` validates the value
strictly against the target, as it is or in its JSON form (the run's values are plain
data, so a node is a dict and a tuple a list, as in JSON; an ``int`` is a valid ``float``,
as in JSON and in pydantic's strict mode), and the value is kept as it is.

Examples:
    >>> convert_value(1, bool | float, TypeMappingConfig())
    1.0
    >>> convert_value(["a", 2], list[str], TypeMappingConfig())
    ['a', '2']
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence, Set
from enum import Enum
from types import NoneType
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python

from langtree.errors import ConversionError
from langtree.structure.commands._assets import Asset
from langtree.structure.types._annotations import (
    SequenceKind,
    fixed_tuple_types,
    is_enum,
    is_model,
    item_type,
    literal_values,
    mapping_types,
    render_type,
    sequence_kind,
    strip_annotated,
    union_members,
)
from langtree.structure.types._defaults import type_adapter
from langtree.structure.types._type_config import TypeMappingConfig, ValidationStrategy

__all__ = ["accepts_none", "check_exact", "convert_value"]

# JSON's words and digits always read as bools; "yes"/"no"/"on"/"off" only without
# ``strict_bool_parsing``: they are English, not data.
_TRUE, _FALSE = frozenset({"true", "1"}), frozenset({"false", "0"})
_LENIENT_TRUE, _LENIENT_FALSE = frozenset({"yes", "on"}), frozenset({"no", "off"})
_CONTAINERS: dict[SequenceKind, Callable[[list[object]], object]] = {
    "list": list,
    "sequence": list,
    "tuple": tuple,
    "set": set,
    "frozenset": frozenset,
}
_REPR_LIMIT = 60


def convert_value(value: object, target: object, config: TypeMappingConfig) -> object:
    """Convert ``value`` to the ``target`` annotation.

    Args:
        value: The source field's value.
        target: The target field's annotation.
        config: Whether strings may be parsed, models and dicts converted, and which
            strings read as bools.

    Returns:
        ``value`` itself when it already has the target type (always, under the ``exact``
        strategy), otherwise the converted value.

    Raises:
        ConversionError: Naming the value, the target type and why it does not convert
            (under ``exact``: why it is not a value of the target type).
    """
    if config.validation_strategy is ValidationStrategy.EXACT:
        return check_exact(value, target)
    target = strip_annotated(target)
    if (members := union_members(target)) is not None:
        return _to_union(value, target, members, config)
    if (values := literal_values(target)) is not None:
        return _to_literal(value, target, values, config)
    # Unions and literals first: a value that is an instance of one member still goes
    # through the union's priority order, and a ``Literal`` is no class to test.
    if target is Any or target is object or _is_instance(value, target):
        return value
    if value is None:
        raise _failure(value, target, "None converts only to a type that allows None")
    return _to_type(value, target, config)


def accepts_none(target: object) -> bool:
    """Whether ``None`` is a value of the ``target`` annotation.

    Examples:
        >>> accepts_none(str | None), accepts_none(str)
        (True, False)
    """
    target = strip_annotated(target)
    if target in (Any, object, NoneType):
        return True
    if (members := union_members(target)) is not None:
        return any(accepts_none(member) for member in members)
    return None in (literal_values(target) or ())


def check_exact(value: object, target: object) -> object:
    """``value`` itself when it is a value of ``target`` with no conversion.

    The value is validated in pydantic's strict mode, where ``"1"`` is no ``int`` and
    ``1`` no ``str``: as it is, or else in its JSON form, since the run's values are plain
    data (a node is a dict, a tuple a list).

    Raises:
        ConversionError: Naming the value, the target type and pydantic's first complaint
            (about the JSON form, when the value has one).

    Examples:
        >>> check_exact([1, 2], tuple[int, int])
        [1, 2]
    """
    adapter = type_adapter(strip_annotated(target))
    try:
        # As it is first: a value of a class pydantic only checks with ``isinstance`` has no
        # JSON form, and one that passes here needs none.
        adapter.validate_python(value, strict=True)
        return value
    except ValidationError as error:
        complaint = error
    try:
        adapter.validate_json(to_json(value, inf_nan_mode="constants"), strict=True)
        return value
    except PydanticSerializationError:
        pass  # no JSON form: the complaint about the value as it is stands
    except ValidationError as error:
        complaint = error
    raise ConversionError(
        f"{_shown(value)} is not a value of {render_type(target)} (the exact strategy"
        f" converts nothing): {_first_complaint(complaint)}"
    ) from complaint


def _first_complaint(error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}" if where else f"{first['msg']}{more}"


def _to_type(value: object, target: object, config: TypeMappingConfig) -> object:
    if (scalar := _SCALARS.get(target)) is not None:
        return scalar(value, config)
    if (types_ := mapping_types(target)) is not None:
        return _to_mapping(value, target, types_, config)
    if (kind := sequence_kind(target)) is not None:
        return _to_sequence(value, target, kind, config)
    if is_model(target):
        return _to_model(value, target, config)
    if is_enum(target):
        return _to_enum(value, target, config)
    # A class with no rule of its own; an annotation that is no class (a ``Callable``,
    # a forward reference, a ``TypeVar``) keeps the value: nothing here could check it.
    if isinstance(target, type):
        return _from_json_form(value, target)
    return value


def _from_json_form(value: object, target: type) -> object:
    """A value of a class without a rule of its own (a date, a ``Decimal``, a ``UUID``)
    from its JSON form, the text ``model_dump(mode="json")`` gives it (and a transform
    reads), which is no string parsing: JSON has no other form for these values."""
    try:
        text = to_json(value)
    except PydanticSerializationError:
        raise _wrong_kind(value, target, f"a {target.__name__}") from None
    try:
        # Strict: the JSON form of the type itself validates (a date's ISO text), but no lax
        # reading does: an int is not taken for a Unix time and made a date.
        return type_adapter(target).validate_json(text, strict=True)
    except ValidationError as error:
        name = target.__name__
        reason = f"it is neither a {name} nor the JSON form of one ({_first_complaint(error)})"
        raise _failure(value, target, reason) from error


def _failure(value: object, target: object, reason: str) -> ConversionError:
    return ConversionError(f"cannot convert {_shown(value)} to {render_type(target)}: {reason}")


def _shown(value: object) -> str:
    shown = repr(value)
    return shown[: _REPR_LIMIT - 3] + "..." if len(shown) > _REPR_LIMIT else shown


def _wrong_kind(value: object, target: object, noun: str) -> ConversionError:
    return _failure(value, target, f"a value of type {type(value).__name__} is not {noun}")


def _is_instance(value: object, target: object) -> bool:
    """Whether ``value`` already is a ``target``; a bool is no int and an enum no str here."""
    if not isinstance(target, type) or target is Any:
        return False
    # ``bool`` is a subclass of ``int``, and a member of a ``str`` enum a ``str``; kept as
    # they are, a flag would stay ``True`` in an ``int`` field and a member would render
    # as ``Color.RED`` where its text belongs. They convert instead (``1``, ``"red"``).
    if (isinstance(value, bool) and target is int) or (isinstance(value, Enum) and target is str):
        return False
    return isinstance(value, target)


def _parsed(value: str, target: object, config: TypeMappingConfig) -> str:
    if not config.allow_string_parsing:
        raise _failure(value, target, "string parsing is disabled (allow_string_parsing=False)")
    # Stripped: a model's answer or a file's line often has a newline or spaces around
    # the number or word.
    return value.strip()


# --- Scalars -------------------------------------------------------------------------


def _to_str(value: object, config: TypeMappingConfig) -> str:
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, BaseModel):
        # A node or a collection becomes its JSON text, as the prompt shows it; non-ASCII
        # text stays readable instead of ``\u`` escapes.
        return json.dumps(value.model_dump(mode="json"), ensure_ascii=False)
    if not isinstance(value, Mapping | Sequence | Set) or isinstance(value, str | bytes):
        return str(value)
    try:
        return json.dumps(to_jsonable_python(value), ensure_ascii=False)
    except PydanticSerializationError as error:
        raise _failure(value, str, f"it has no JSON form ({error})") from error


def _to_int(value: object, config: TypeMappingConfig) -> int:
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        try:
            # ``round`` halves to even (2.5 → 2): the LOSSY level of ``float → int`` in
            # `langtree.structure.types._compatibility`. An infinity or NaN has no int.
            return round(value)
        except (OverflowError, ValueError) as error:
            raise _failure(value, int, "it is not a finite number") from error
    if not isinstance(value, str):
        raise _wrong_kind(value, int, "a number")
    text = _parsed(value, int, config)
    try:
        return int(text)
    except ValueError as error:
        raise _failure(value, int, "it is not an integer") from error


def _to_float(value: object, config: TypeMappingConfig) -> float:
    if not isinstance(value, int | float | str):
        raise _wrong_kind(value, float, "a number")
    number = _parsed(value, float, config) if isinstance(value, str) else value
    try:
        return float(number)
    except OverflowError as error:
        raise _failure(value, float, "it is too large for a float") from error
    except ValueError as error:
        raise _failure(value, float, "it is not a number") from error


def _to_bool(value: object, config: TypeMappingConfig) -> bool:
    # Only 0 and 1: any other number as a flag is a guess (UNSAFE in the check).
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if not isinstance(value, str):
        raise _failure(value, bool, "only 0, 1 and the strings for true and false convert")
    word = _parsed(value, bool, config).lower()
    true, false = _TRUE, _FALSE
    if not config.strict_bool_parsing:
        true, false = true | _LENIENT_TRUE, false | _LENIENT_FALSE
    if word in true or word in false:
        return word in true
    words = ", ".join(repr(word) for word in sorted(true | false))
    raise _failure(value, bool, f"it is not one of {words} (in any case)")


def _to_none(value: object, config: TypeMappingConfig) -> None:
    raise _failure(value, type(None), "only None is allowed")


_SCALARS: dict[object, Callable[[object, TypeMappingConfig], object]] = {
    str: _to_str,
    int: _to_int,
    float: _to_float,
    bool: _to_bool,
    type(None): _to_none,
}


def _to_enum(value: object, target: type[Enum], config: TypeMappingConfig) -> Enum:
    """By value, then by name; another enum's member by its value, then by its name.

    A member's own value (its JSON form, as a transform reads it) converts without
    string parsing; text that must be stripped or read as a name is parsed.
    """
    by_value: object = value
    name: object = value
    if isinstance(value, Enum):
        by_value, name = value.value, value.name
    # A member's own value converts even with string parsing off (the JSON form a
    # transform reads); only text that is no value is parsed (stripped, or a name).
    elif isinstance(value, str) and _member(target, value) is None:
        by_value = name = _parsed(value, target, config)
    member = _member(target, by_value)
    if member is None and isinstance(name, str) and name in target.__members__:
        member = target[name]
    if member is None:
        values = ", ".join(repr(each.value) for each in target)
        reason = f"it is neither a value ({values}) nor a name of {target.__name__}"
        raise _failure(value, target, reason)
    return member


def _member(target: type[Enum], value: object) -> Enum | None:
    """The member whose value is ``value``, if there is one."""
    try:
        return target(value)
    except ValueError:
        return None


# --- Models and containers -----------------------------------------------------------


def _to_model(value: object, target: type[BaseModel], config: TypeMappingConfig) -> BaseModel:
    if isinstance(value, str) and target is Asset:
        # An asset's text is a URL, a path or a data: URI, as in the inputs, not JSON.
        return _validated(value, target, lambda: target.model_validate(value))
    if isinstance(value, str):
        text = _parsed(value, target, config)
        return _validated(value, target, lambda: target.model_validate_json(text))
    if isinstance(value, Mapping | BaseModel) and not config.allow_treenode_dict_conversion:
        reason = "model ↔ dict conversion is disabled (allow_treenode_dict_conversion=False)"
        raise _failure(value, target, reason)
    if isinstance(value, BaseModel):
        # Through a dict: fields are matched by name, which is why one model class into
        # another is UNSAFE in the check.
        return _validated(value, target, lambda: target.model_validate(value.model_dump()))
    if isinstance(value, Mapping):
        return _validated(value, target, lambda: target.model_validate(dict(value)))
    raise _wrong_kind(value, target, "a mapping")


def _validated(
    value: object, target: type[BaseModel], validate: Callable[[], BaseModel]
) -> BaseModel:
    try:
        return validate()
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or target.__name__
        more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        raise _failure(value, target, f"{where}: {first['msg']}{more}") from error


def _to_mapping(
    value: object, target: object, types_: tuple[object, object], config: TypeMappingConfig
) -> dict[object, object]:
    if isinstance(value, BaseModel):
        if not config.allow_treenode_dict_conversion:
            reason = "model ↔ dict conversion is disabled (allow_treenode_dict_conversion=False)"
            raise _failure(value, target, reason)
        value = value.model_dump()
    elif isinstance(value, str):
        value = _json(value, target, dict, config)
    if not isinstance(value, Mapping):
        raise _wrong_kind(value, target, "a mapping")
    key_type, value_type = types_
    return {
        _item(key, key_type, value, target, config): _item(item, value_type, value, target, config)
        for key, item in value.items()
    }


def _to_sequence(
    value: object, target: object, kind: SequenceKind, config: TypeMappingConfig
) -> object:
    if isinstance(value, str):
        value = _json(value, target, list, config)
    if not isinstance(value, Sequence | Set) or isinstance(value, str | bytes):
        raise _wrong_kind(value, target, "a sequence")
    types_ = fixed_tuple_types(target)
    if types_ is not None and len(types_) != len(value):
        raise _failure(value, target, f"it has {len(value)} items, not {len(types_)}")
    types_ = types_ or (item_type(target),) * len(value)
    items = [_item(item, t, value, target, config) for item, t in zip(value, types_, strict=True)]
    try:
        # Items that cannot be hashed (dicts, lists) form no set: a ConversionError that
        # says so, not a TypeError from inside.
        return _CONTAINERS[kind](items)
    except TypeError as error:
        raise _failure(value, target, f"its items cannot form a {kind} ({error})") from error


def _item(
    item: object, item_target: object, value: object, target: object, config: TypeMappingConfig
) -> object:
    try:
        return convert_value(item, item_target, config)
    except ConversionError as error:
        raise _failure(value, target, f"an item does not convert: {error}") from error


def _json(value: str, target: object, kind: type, config: TypeMappingConfig) -> object:
    try:
        parsed: object = json.loads(_parsed(value, target, config))
    except json.JSONDecodeError as error:
        raise _failure(value, target, f"it is not valid JSON ({error})") from error
    if not isinstance(parsed, kind):
        reason = f"its JSON is of type {type(parsed).__name__}, not {kind.__name__}"
        raise _failure(value, target, reason)
    return parsed


# --- Unions and literals -------------------------------------------------------------


def _to_union(
    value: object, target: object, members: tuple[object, ...], config: TypeMappingConfig
) -> object:
    # ``sorted`` is stable: members of one priority keep the union's own order.
    ordered = sorted(members, key=lambda member: _priority(value, strip_annotated(member)))
    for member in ordered:
        try:
            return convert_value(value, member, config)
        except ConversionError:
            continue
    raise _failure(value, target, "no member of the union accepts it")


def _priority(value: object, member: object) -> tuple[int, int]:
    """The member's place in the union order of the module docstring."""
    if _is_instance(value, member):
        return (1, 0)
    if is_model(member):
        return (2, 0)
    integral = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if (member is int and integral and not isinstance(value, bool)) or (
        member is bool and isinstance(value, bool)
    ):
        return (3, 0)
    if member in (float, bool, str):
        return (4, (float, bool, str).index(member))
    if mapping_types(member) is not None or sequence_kind(member) is not None:
        return (5, 0)
    return (6, 0)


def _to_literal(
    value: object, target: object, allowed: tuple[object, ...], config: TypeMappingConfig
) -> object:
    # An option the value already is wins over one it converts to, wherever it stands:
    # 1 stays 1 in Literal["1", 1] and in Literal[True, 1] (1 == True, hence the type).
    for option in allowed:
        if type(value) is type(option) and value == option:
            return option
    for option in allowed:
        try:
            converted = convert_value(value, type(option), config)
        except ConversionError:
            continue
        # The type too: 1 == True == 1.0, but only one of them is the option.
        if type(converted) is type(option) and converted == option:
            return option
    options = ", ".join(repr(option) for option in allowed)
    raise _failure(value, target, f"it is not one of {options}")
