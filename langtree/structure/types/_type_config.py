"""A run's type mapping settings: how strictly ``value`` mappings are checked and converted.

``RunStructure({"validation_strategy": "permissive", "allow_string_parsing": False})`` or
``RunStructure(TypeMappingConfig(validation_strategy=ValidationStrategy.DEVELOPMENT))``;
what each strategy allows is in `langtree.structure.types._compatibility`.

``ValidationStrategy.EXACT`` is the strict mode of the path-expression specification: no
implicit coercion at all. It is a strategy rather than a separate flag because it is one
more step on the same ladder (exact < strict < permissive < development): a flag beside
the strategy would allow contradictions such as "no conversion, but lossy ones with a
warning".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from enum import StrEnum

from langtree.dsl import suggest
from langtree.errors import Diagnostic, StructureError

__all__ = ["TYPE_MAPPING_KEYS", "TypeMappingConfig", "ValidationStrategy"]


class ValidationStrategy(StrEnum):
    """How much conversion a mapping may need before LangTree rejects it.

    ``STRICT`` (the default) allows identical and safe conversions, ``PERMISSIVE`` also
    lossy ones and ``DEVELOPMENT`` also unsafe ones, each with a warning; ``EXACT`` allows
    no conversion: the source's values must already be values of the target's type, and
    at run time each value is checked as it is, never converted.
    """

    STRICT = "strict"
    PERMISSIVE = "permissive"
    DEVELOPMENT = "development"
    EXACT = "exact"


@dataclass(frozen=True, slots=True, kw_only=True)
class TypeMappingConfig:
    """The type mapping settings of a run.

    Attributes:
        validation_strategy: The worst level a mapping may have (see
            `langtree.structure.types._compatibility`); ``exact`` allows no conversion.
        allow_string_parsing: Whether ``str`` may become a number, bool, enum, dict or list.
        allow_treenode_dict_conversion: Whether models and dicts may convert into each other.
        strict_bool_parsing: Read only ``"true"/"false"/"1"/"0"`` as bools, not also
            ``"yes"/"no"/"on"/"off"``.
        enable_type_validation: Whether mappings are checked before the run at all.
    """

    validation_strategy: ValidationStrategy = ValidationStrategy.STRICT
    allow_string_parsing: bool = True
    allow_treenode_dict_conversion: bool = True
    strict_bool_parsing: bool = True
    enable_type_validation: bool = True

    @classmethod
    def from_mapping(cls, settings: Mapping[str, object]) -> TypeMappingConfig:
        """Read the settings' dict form, e.g. ``{"validation_strategy": "permissive"}``.

        Args:
            settings: Setting names (see `TYPE_MAPPING_KEYS`) and their values; a
                strategy may be a `ValidationStrategy` or its name in any case.

        Raises:
            StructureError: With a diagnostic for each unknown name and each value of the
                wrong kind.

        Examples:
            >>> settings = {"validation_strategy": "Permissive", "allow_string_parsing": False}
            >>> TypeMappingConfig.from_mapping(settings).validation_strategy
            <ValidationStrategy.PERMISSIVE: 'permissive'>
        """
        problems = [p for key, value in settings.items() if (p := _setting_problem(key, value))]
        if problems:
            raise StructureError(problems)
        defaults = cls()
        strategy = _strategy(settings.get("validation_strategy", defaults.validation_strategy))
        return cls(
            validation_strategy=strategy or defaults.validation_strategy,
            allow_string_parsing=_flag(settings, "allow_string_parsing"),
            allow_treenode_dict_conversion=_flag(settings, "allow_treenode_dict_conversion"),
            strict_bool_parsing=_flag(settings, "strict_bool_parsing"),
            enable_type_validation=_flag(settings, "enable_type_validation"),
        )


TYPE_MAPPING_KEYS: frozenset[str] = frozenset(field.name for field in fields(TypeMappingConfig))


def _setting_problem(key: str, value: object) -> Diagnostic | None:
    if key not in TYPE_MAPPING_KEYS:
        valid = ", ".join(repr(name) for name in sorted(TYPE_MAPPING_KEYS))
        hint = f"{_did_you_mean(key, TYPE_MAPPING_KEYS)}the settings are {valid}"
        return _problem(f"unknown type mapping setting {key!r}", hint)
    if key != "validation_strategy":
        if isinstance(value, bool):
            return None
        message = f"{key!r} must be true or false, got {value!r}"
        return _problem(message, f"pass True or False, e.g. RunStructure({{{key!r}: False}})")
    if _strategy(value) is not None:
        return None
    names = [strategy.value for strategy in ValidationStrategy]
    message = f"'validation_strategy' must be one of {', '.join(map(repr, names))}, got {value!r}"
    hint = f"{_did_you_mean(value, names)}pass a ValidationStrategy or the name of one"
    return _problem(message, hint)


def _did_you_mean(word: object, choices: Iterable[str]) -> str:
    close = suggest(str(word).lower(), sorted(choices), fallback="")
    return f"{close} " if close else ""


def _problem(message: str, hint: str) -> Diagnostic:
    return Diagnostic(severity="error", message=message, hint=hint)


def _strategy(value: object) -> ValidationStrategy | None:
    if isinstance(value, ValidationStrategy):
        return value
    by_name = {strategy.value: strategy for strategy in ValidationStrategy}
    return by_name.get(value.lower()) if isinstance(value, str) else None


def _flag(settings: Mapping[str, object], name: str) -> bool:
    value = settings.get(name, True)
    return value if isinstance(value, bool) else True
