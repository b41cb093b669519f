"""Whether a field's type can be mapped into another field's type, and how safely.

Before any model call LangTree checks every ``value`` mapping of every command
(``{{value.config=settings}}``): the source field's annotation must convert to the target
field's annotation at a level the `ValidationStrategy` allows. The levels, from
best to worst (``Annotated`` metadata is ignored, ``List[X]`` is ``list[X]``):

- **IDENTICAL**: equal types; ``X → X | None``; ``Any → Any``.
- **SAFE**: ``int → float``; subclass → base class; anything but ``None`` → ``str``
  (collections and models as JSON); ``Enum → str``; ``Literal`` → the type of its
  values; anything → ``Any``; ``list ↔ tuple ↔ Sequence`` and ``set → list``;
  ``dict ↔ Mapping``; a model → ``dict[K, V]`` when ``allow_treenode_dict_conversion``
  and its ``model_dump()`` already fits: keys accept ``str`` and every field's type is a
  ``V`` without conversion (``V`` is ``Any``, the field type or a base of it; nested
  models into a fitting dict) — so ``Config → dict`` is SAFE, but
  ``Config → dict[str, str]`` is FORBIDDEN unless every field is a ``str``.
- **LOSSY**: ``float → int`` (``round``: halves to even); ``bool → int | float`` (a flag
  becomes a number); ``X | None → X`` (a ``None`` does not convert); ``list → set``
  (duplicates go); ``str → int | float | bool | Enum | dict | list | model`` when
  ``allow_string_parsing`` (parsing may fail); ``dict → model`` when
  ``allow_treenode_dict_conversion`` (validation may fail); ``X → Literal[...]`` and
  ``int → Enum`` with ``int`` values (the value must be one of them); a sequence into a
  fixed-length ``tuple[X, Y]`` (the length must match).
- **UNSAFE**: one model class → a different model class (through a dict);
  ``int | float → bool`` (only 0 and 1 convert); one ``Enum`` → another (by value or
  name); ``Any → X`` (the source is unknown).
- **FORBIDDEN**: structurally incompatible (``list → dict``, ``int → list``, a model →
  ``int``, ``X → None``, …), and the conversions a configuration disables.

Containers take the worst level of their container and element conversions. A union
source takes the worst level over its members (each must fit); a union target takes the
best level over its members (one must fit).

The strategies allow: ``strict`` identical and safe mappings; ``permissive`` also lossy
ones and ``development`` also unsafe ones, with a warning. ``exact`` allows no conversion
at all (`needs_no_conversion()`): the source's values must already be values of the
target type — equal types, a target that adds members to a union (``X → X | None``), a
target ``Any`` or ``object`` at any depth (``list[str] → list[Any]``), a ``Literal``
into the type of its values or a ``Literal`` that holds them. Any other mapping, a safe
one too (``int → float``, ``Enum → str``, ``list → tuple``), is an error under ``exact``.

Examples:
    >>> compatibility(int, float | None, TypeMappingConfig())
    <CompatibilityLevel.SAFE: 1>
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from enum import Enum, IntEnum
from types import NoneType
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from langtree.structure.types._annotations import (
    SequenceKind,
    fixed_tuple_types,
    is_class,
    is_model,
    item_type,
    literal_values,
    mapping_types,
    render_type,
    sequence_kind,
    strip_annotated,
    strip_optional,
    union_members,
)
from langtree.structure.types._type_config import TypeMappingConfig, ValidationStrategy

__all__ = [
    "CompatibilityLevel",
    "TypeProblem",
    "check_mapping",
    "compatibility",
    "needs_no_conversion",
]


class CompatibilityLevel(IntEnum):
    """How safely a source type converts to a target type; greater is worse."""

    IDENTICAL = 0
    SAFE = 1
    LOSSY = 2
    UNSAFE = 3
    FORBIDDEN = 4

    @property
    def label(self) -> str:
        """The level's lower-case name, as it reads in messages."""
        return self.name.lower()

    def allowed_by(self, strategy: ValidationStrategy) -> bool:
        """Whether a mapping at this level passes under ``strategy``.

        Examples:
            >>> CompatibilityLevel.LOSSY.allowed_by(ValidationStrategy.PERMISSIVE)
            True
        """
        return self <= _WORST_ALLOWED[strategy]


_WORST_ALLOWED = {
    ValidationStrategy.EXACT: CompatibilityLevel.IDENTICAL,
    ValidationStrategy.STRICT: CompatibilityLevel.SAFE,
    ValidationStrategy.PERMISSIVE: CompatibilityLevel.LOSSY,
    ValidationStrategy.DEVELOPMENT: CompatibilityLevel.UNSAFE,
}
# Strictest first: the first strategy on the ladder that allows a level is the one a
# hint suggests.
_LADDER = sorted(ValidationStrategy, key=lambda strategy: _WORST_ALLOWED[strategy])
IDENTICAL, SAFE, LOSSY, UNSAFE, FORBIDDEN = CompatibilityLevel


# --- Levels --------------------------------------------------------------------------

_Level = CompatibilityLevel | None
_Rule = Callable[[object, object, TypeMappingConfig], _Level]
_ORDERED: frozenset[SequenceKind] = frozenset({"list", "tuple", "sequence"})


def compatibility(source: object, target: object, config: TypeMappingConfig) -> CompatibilityLevel:
    """How safely values of the ``source`` annotation convert to the ``target`` one.

    Args:
        source: The source field's annotation (``Model.model_fields[name].annotation``).
        target: The target field's annotation.
        config: The settings that enable or disable string parsing and model ↔ dict.

    Returns:
        The level from the table in this module's docstring.
    """
    source, target = strip_annotated(source), strip_annotated(target)
    for rule in _RULES:
        if (level := rule(source, target, config)) is not None:
            return level
    return FORBIDDEN


def _worst(levels: Iterable[CompatibilityLevel]) -> CompatibilityLevel:
    return max(levels, default=IDENTICAL)


def _best(levels: Iterable[CompatibilityLevel]) -> CompatibilityLevel:
    return min(levels, default=FORBIDDEN)


def _equal_or_any(source: object, target: object, _: TypeMappingConfig) -> _Level:
    if source == target:
        return IDENTICAL
    if target is Any or target is object:
        return SAFE
    return UNSAFE if source is Any else None


def _source_union(source: object, target: object, config: TypeMappingConfig) -> _Level:
    members = union_members(source)
    return None if members is None else _worst(compatibility(m, target, config) for m in members)


def _source_literal(source: object, target: object, config: TypeMappingConfig) -> _Level:
    values = literal_values(source)
    if values is None:
        return None
    # At best SAFE: a ``Literal`` is never the type it converts into, even where every
    # value stays as it is.
    return _worst(max(SAFE, _value_level(value, target, config)) for value in values)


def _value_level(value: object, target: object, config: TypeMappingConfig) -> CompatibilityLevel:
    if (members := union_members(target)) is not None:
        return _best(_value_level(value, member, config) for member in members)
    if (allowed := literal_values(target)) is not None:
        return SAFE if (type(value), value) in {(type(a), a) for a in allowed} else FORBIDDEN
    return compatibility(type(value), target, config)


def _target_union(source: object, target: object, config: TypeMappingConfig) -> _Level:
    members = union_members(target)
    return None if members is None else _best(compatibility(source, m, config) for m in members)


def _none(source: object, target: object, _: TypeMappingConfig) -> _Level:
    if source is NoneType:
        return LOSSY
    return FORBIDDEN if target is NoneType else None


def _target_literal(source: object, target: object, config: TypeMappingConfig) -> _Level:
    values = literal_values(target)
    if values is None:
        return None
    if not is_class(source) or is_model(source):
        return FORBIDDEN
    level = _best(compatibility(source, type(value), config) for value in values)
    # At least LOSSY: whether the value is one of the literal's is known only at run
    # time.
    return FORBIDDEN if level is FORBIDDEN else max(level, LOSSY)


def _to_string(source: object, target: object, _: TypeMappingConfig) -> _Level:
    return SAFE if target is str else None


def _from_text(source: object, target: object, config: TypeMappingConfig) -> _Level:
    """``str → int | float | bool | Enum | dict | list | model``: parsed, when allowed."""
    if source is not str or not _parses_into(target):
        return None
    return LOSSY if config.allow_string_parsing else FORBIDDEN


def _parses_into(target: object) -> bool:
    if mapping_types(target) is not None or sequence_kind(target) is not None:
        return True
    if is_model(target) or target in (int, float, bool):
        return True
    return is_class(target) and issubclass(target, Enum)


def _to_mapping(source: object, target: object, config: TypeMappingConfig) -> _Level:
    target_types = mapping_types(target)
    if target_types is None:
        return None
    if is_model(source):
        fits = config.allow_treenode_dict_conversion and _dumps_into(source, *target_types)
        return SAFE if fits else FORBIDDEN
    source_types = mapping_types(source)
    if source_types is None:
        return FORBIDDEN
    # ``dict`` and ``Mapping`` differ in their class only: SAFE, not IDENTICAL.
    same = (get_origin(source) or source) == (get_origin(target) or target)
    pairs = zip(source_types, target_types, strict=True)
    return _worst([IDENTICAL if same else SAFE, *(compatibility(s, t, config) for s, t in pairs)])


def _to_sequence(source: object, target: object, config: TypeMappingConfig) -> _Level:
    target_kind = sequence_kind(target)
    if target_kind is None:
        return None
    source_kind = sequence_kind(source)
    if source_kind is None:
        return FORBIDDEN
    return max(_container_level(source_kind, target_kind), _items_level(source, target, config))


def _container_level(source: SequenceKind, target: SequenceKind) -> CompatibilityLevel:
    if source == target:
        return IDENTICAL
    # Into a set, the order and the duplicates go; out of one, every item is kept.
    return LOSSY if source in _ORDERED and target not in _ORDERED else SAFE


def _items_level(source: object, target: object, config: TypeMappingConfig) -> CompatibilityLevel:
    targets, sources = fixed_tuple_types(target), fixed_tuple_types(source)
    if targets is None:
        return compatibility(item_type(source), item_type(target), config)
    if sources is not None:
        if len(sources) != len(targets):
            return FORBIDDEN
        return _worst(compatibility(s, t, config) for s, t in zip(sources, targets, strict=True))
    item = item_type(source)
    # A sequence of any length into a fixed tuple: the length is known only at run time.
    return max(LOSSY, _worst(compatibility(item, t, config) for t in targets))


def _to_model(source: object, target: object, config: TypeMappingConfig) -> _Level:
    if not is_model(target):
        return None
    if mapping_types(source) is not None:
        return LOSSY if config.allow_treenode_dict_conversion else FORBIDDEN
    if is_model(source):
        return SAFE if issubclass(source, target) else UNSAFE
    return FORBIDDEN


def _between_classes(source: object, target: object, config: TypeMappingConfig) -> _Level:
    if not (is_class(source) and is_class(target)):
        return None
    # ``bool`` before ``int``: a bool is an int to ``issubclass``, and would otherwise be
    # SAFE as a subclass.
    if issubclass(source, bool) and target in (int, float):
        return LOSSY
    if issubclass(source, int | float) and target is bool:
        return UNSAFE
    # SAFE as in JSON and in pydantic, which take an int for a float; an int beyond
    # 2**53 becomes the nearest float, a loss this table accepts.
    if issubclass(source, int) and target is float:
        return SAFE
    if source is float and target is int:
        return LOSSY
    if issubclass(target, Enum):
        return _to_enum(source, target)
    return SAFE if issubclass(source, target) else None


def _to_enum(source: type, target: type[Enum]) -> _Level:
    if issubclass(source, Enum):
        return UNSAFE
    # The exact type: an enum of int values takes no bool, and one of str values no
    # subclass of str.
    return LOSSY if any(type(member.value) is source for member in target) else None


# The first rule that answers decides, so the order matters. Equal types first.
# Unions and literals are taken apart before the rules for single types: a union
# source before a union target, so that each source member meets the whole target
# union (``int | None → float | None`` is SAFE; the other way round neither
# ``float`` nor ``None`` would take all of ``int | None``). ``None`` before ``str``:
# "anything but None → str". The rule for a ``str`` target before those for
# containers and classes: any other value converts to its text (collections and
# models to JSON); then a ``str`` source, which parses into any of them or none.
_RULES: tuple[_Rule, ...] = (
    _equal_or_any,
    _source_union,
    _source_literal,
    _target_union,
    _none,
    _target_literal,
    _to_string,
    _from_text,
    _to_mapping,
    _to_sequence,
    _to_model,
    _between_classes,
)


def _dumps_into(model: type[BaseModel], key: object, value: object) -> bool:
    """Whether ``model.model_dump()`` is already a ``dict[key, value]``, unconverted."""
    annotations = [field.annotation for field in model.model_fields.values()]
    # ``model_dump()``'s keys are the fields' names: text.
    return _dumps_as(str, key) and all(_dumps_as(a, value) for a in annotations)


def _dumps_as(source: object, target: object) -> bool:
    source, target = strip_annotated(source), strip_annotated(target)
    if (settled := _settled_as_subset(source, target, _dumps_as)) is not None:
        return settled
    if is_model(source):
        types_ = mapping_types(target)
        return types_ is not None and _dumps_into(source, *types_)
    if (values := literal_values(source)) is not None:
        return isinstance(target, type) and all(isinstance(value, target) for value in values)
    if is_class(source) and is_class(target):
        return issubclass(source, target)
    return _argument_wise(source, target, _dumps_as)


def needs_no_conversion(source: object, target: object) -> bool:
    """Whether every value of the ``source`` annotation already is a value of ``target``,
    so that nothing converts (what the ``exact`` strategy allows).

    Examples:
        >>> needs_no_conversion(list[str], list[Any]), needs_no_conversion(int, float)
        (True, False)
    """
    source, target = strip_annotated(source), strip_annotated(target)
    if (settled := _settled_as_subset(source, target, needs_no_conversion)) is not None:
        return settled
    if (values := literal_values(source)) is not None:
        return all(_is_value_of(value, target) for value in values)
    return _argument_wise(source, target, needs_no_conversion)


def _settled_as_subset(
    source: object, target: object, relation: Callable[[object, object], bool]
) -> bool | None:
    """What every "each value of ``source`` already is a value of ``target``" relation
    decides alike (``None``: the relation's own rules decide): equal types, a target
    ``Any`` or ``object``, and unions, whose values are their members' values, so a union
    source needs ``relation`` to hold for every member and a union target for one."""
    if source == target or target is Any or target is object:
        return True
    if (members := union_members(source)) is not None:
        return all(relation(member, target) for member in members)
    if (members := union_members(target)) is not None:
        return any(relation(source, member) for member in members)
    return None


def _argument_wise(
    source: object, target: object, relation: Callable[[object, object], bool]
) -> bool:
    """Whether two generic types have one origin and ``relation`` holds argument by
    argument (``list[A]`` and ``list[B]`` when it holds for ``A`` and ``B``)."""
    source_args, target_args = get_args(source), get_args(target)
    return (
        get_origin(source) == get_origin(target) is not None
        and len(source_args) == len(target_args)
        and all(relation(s, t) for s, t in zip(source_args, target_args, strict=True))
    )


def _is_value_of(value: object, target: object) -> bool:
    """Whether a ``Literal``'s value is a value of ``target`` as it is (``True`` is no ``int``)."""
    if (allowed := literal_values(target)) is not None:
        return (type(value), value) in {(type(option), option) for option in allowed}
    return type(value) is target


# --- Problems ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TypeProblem:
    """A value mapping whose types need more conversion than the strategy allows silently.

    Attributes:
        level: How safely the source type converts to the target type.
        is_warning: ``True`` when the strategy allows the conversion (the caller warns),
            ``False`` when it rejects it (the caller reports an error).
        message: What is wrong, with both paths and both types.
        hint: How to fix it.
    """

    level: CompatibilityLevel
    is_warning: bool
    message: str
    hint: str


def check_mapping(
    source_path: str,
    source: object,
    target_path: str,
    target: object,
    config: TypeMappingConfig,
) -> TypeProblem | None:
    """Check one ``value`` mapping from a source field to a target field.

    Args:
        source_path: The source field's path, e.g. ``"task.source.settings"``.
        source: The source field's annotation.
        target_path: The target field's path, e.g. ``"task.target.config"``.
        target: The target field's annotation.
        config: The run's type mapping settings.

    Returns:
        ``None`` when the mapping is IDENTICAL or SAFE (under ``exact``: when nothing
        converts), or validation is disabled; a warning when the strategy allows a LOSSY
        or UNSAFE level; otherwise an error.
    """
    if not config.enable_type_validation:
        return None
    level = compatibility(source, target, config)
    if _passes(source, target, level, config):
        return None
    strategy = config.validation_strategy
    allowed = level.allowed_by(strategy)
    verdict = "allowed" if allowed else "not allowed"
    message = (
        f"Type incompatibility in variable mapping from {source_path} ({render_type(source)})"
        f" to {target_path} ({render_type(target)}):"
        f" {level.label} conversion {verdict} by {strategy.value} strategy"
    )
    if _only_none_fails(source, target, config):
        hint = _none_hint(target, allowed=allowed)
    else:
        hint = _WARNING_HINT if allowed else _error_hint(source, target, config)
    return TypeProblem(level=level, is_warning=allowed, message=message, hint=hint)


def _passes(
    source: object, target: object, level: CompatibilityLevel, config: TypeMappingConfig
) -> bool:
    """Whether a mapping at ``level`` passes without a word under the config's strategy."""
    if config.validation_strategy is ValidationStrategy.EXACT:
        return level is IDENTICAL or needs_no_conversion(source, target)
    return level <= SAFE


def _only_none_fails(source: object, target: object, config: TypeMappingConfig) -> bool:
    """Whether the mapping would pass but for a ``None`` of the source the target refuses."""
    inner, optional = strip_optional(source)
    if not optional or compatibility(NoneType, target, config) <= SAFE:
        return False
    return _passes(inner, target, compatibility(inner, target, config), config)


def _none_hint(target: object, *, allowed: bool) -> str:
    optional = f"{render_type(target)} | None"
    if allowed:
        return (
            f"a None from the source stops the run with an ExecutionError; declare the target"
            f" as {optional} to pass it on"
        )
    return (
        f"the source may be None, which {render_type(target)} does not accept: declare the"
        f" target as {optional}, or give the source a type without None"
    )


_WARNING_HINT = (
    "values that do not convert raise ConversionError at run time;"
    " change the field types to make the conversion safe"
)


def _error_hint(source: object, target: object, config: TypeMappingConfig) -> str:
    settings = _settings_allowing(source, target, config)
    if settings is None and is_model(source) and mapping_types(target) is not None:
        return (
            f"declare the target as dict[str, Any] (model_dump() keeps each field's own type)"
            f" or as {render_type(source)}"
        )
    if settings is None:
        names = f"{render_type(source)} cannot be converted to {render_type(target)}"
        return f"change the field types: {names} (see langtree.structure.types._compatibility)"
    return f"change the field types, or allow the conversion with RunStructure({settings!r})"


def _settings_allowing(
    source: object, target: object, config: TypeMappingConfig
) -> dict[str, object] | None:
    """The setting changes that let the mapping pass, or ``None`` if none can."""
    # Both settings on, then each turned off on its own: a setting is suggested only
    # when the mapping needs it (turning it off makes the level worse).
    full = replace(config, allow_string_parsing=True, allow_treenode_dict_conversion=True)
    level = compatibility(source, target, full)
    if level is FORBIDDEN:
        return None
    settings: dict[str, object] = {}
    if not config.allow_string_parsing:
        without = replace(full, allow_string_parsing=False)
        if compatibility(source, target, without) > level:
            settings["allow_string_parsing"] = True
    if not config.allow_treenode_dict_conversion:
        without = replace(full, allow_treenode_dict_conversion=False)
        if compatibility(source, target, without) > level:
            settings["allow_treenode_dict_conversion"] = True
    if not level.allowed_by(config.validation_strategy):
        # The strictest strategy that allows the level, not simply ``development``.
        loosest = next(s for s in _LADDER if level.allowed_by(s))
        settings["validation_strategy"] = loosest.value
    return settings
