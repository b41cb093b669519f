"""A run's settings, given as a dict, a `TypeMappingConfig`, or ``None``.

``RunStructure({"validation_strategy": "permissive", "default_modifier": "parallel"})``:
the type mapping settings (`TYPE_MAPPING_KEYS`), ``default_modifier`` (DESIGN D1), and
what the prompts hold and where (`PromptShape`, the template, the budgets). Unknown names
are errors that suggest the closest known one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, TypeVar

from langtree.dsl import Modifier, suggest
from langtree.errors import Diagnostic, StructureError
from langtree.structure.types._type_config import TYPE_MAPPING_KEYS, TypeMappingConfig

__all__ = [
    "CONFIG_KEYS",
    "ConfigInput",
    "FieldDescriptions",
    "Outline",
    "PromptShape",
    "StructureConfig",
]

_MODIFIERS: dict[str, Modifier] = {
    "sequential": "sequential",
    "parallel": "parallel",
    "together": "parallel",
}
CONFIG_KEYS: frozenset[str] = TYPE_MAPPING_KEYS | {
    "default_modifier",
    "prompt_template",
    "instructions",
    "outline",
    "field_descriptions",
    "token_budget",
    "on_error",
}
_Choice = TypeVar("_Choice", bound=str)
_ON_ERROR: tuple[Literal["raise", "continue"], ...] = ("raise", "continue")
_INSTRUCTIONS: tuple[Literal["human", "system"], ...] = ("human", "system")

Outline: TypeAlias = Literal["path", "root", "node"]
FieldDescriptions: TypeAlias = Literal["text", "schema"]
_OUTLINES: tuple[Outline, ...] = ("path", "root", "node")
_FIELD_DESCRIPTIONS: tuple[FieldDescriptions, ...] = ("text", "schema")


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptShape:
    """Which texts of the classes a step's prompt carries (see docs/prompts.md, "Lean
    prompts").

    Attributes:
        outline: The levels whose texts lead to the step's node: ``"path"`` (the
            default) every level from the root task down (DESIGN D10); ``"root"`` the
            root task's text, then the node's; ``"node"`` the node's text alone.
        field_descriptions: Where the step's own fields are described: ``"text"`` (the
            default) under their headings in the prompt and in the output schema;
            ``"schema"`` in the output schema alone, which the model receives with every
            call. A field whose section the schema cannot carry as it reads in the
            prompt keeps it: one whose description uses a ``{variable}``, and one that
            holds nodes.
    """

    outline: Outline = "path"
    field_descriptions: FieldDescriptions = "text"


ConfigInput: TypeAlias = "Mapping[str, object] | TypeMappingConfig | StructureConfig | None"


@dataclass(frozen=True, slots=True, kw_only=True)
class StructureConfig:
    """The settings that the structure stage uses.

    Attributes:
        type_mapping: How ``value`` mappings are checked and converted.
        default_modifier: The modifier of a node that declares none (D1).
        prompt_template: Jinja2 source for the step messages (``None``: the default);
            compiled by the prompt stage.
        instructions: Where the default templates put a step's instructions (the texts
            of its classes): ``"human"`` (the default) in the human message with the
            context, ``"system"`` in the system message, the same bytes for every call of
            a step, so that providers can cache that prefix; the human message then holds
            the context and the request.
        shape: Which texts of the classes a step's prompt carries (``outline`` and
            ``field_descriptions``).
        token_budget: The most prompt tokens per step, by model key (``"*"``: every
            other model); a single number applies to every model.
        on_error: What a step instance that fails after its retries does: ``"raise"``
            (the default) stops the run with its ``StepFailedError``; ``"continue"``
            skips the instances that depend on it, finishes the rest, and lists the
            failures in ``RunResult.errors``.
    """

    type_mapping: TypeMappingConfig = field(default_factory=TypeMappingConfig)
    default_modifier: Modifier = "sequential"
    prompt_template: str | None = None
    instructions: Literal["human", "system"] = "human"
    shape: PromptShape = field(default_factory=PromptShape)
    token_budget: Mapping[str, int] = field(default_factory=dict)
    on_error: Literal["raise", "continue"] = "raise"

    def budget_for(self, model_key: str | None) -> int | None:
        """The token budget of a step that uses ``model_key`` (``None``: none set)."""
        return self.token_budget.get(model_key or "*", self.token_budget.get("*"))

    @classmethod
    def create(
        cls, config: ConfigInput, *, other_keys: frozenset[str] = frozenset()
    ) -> StructureConfig:
        """Read the settings in any of their accepted forms.

        Args:
            config: The settings.
            other_keys: Names of settings that a later stage reads (the run's); they are
                not unknown, and are suggested for a misspelt name.

        Raises:
            StructureError: With one diagnostic per unknown name or bad value.

        Examples:
            >>> StructureConfig.create({"default_modifier": "together"}).default_modifier
            'parallel'
        """
        if config is None:
            return cls()
        if isinstance(config, StructureConfig):
            return config
        if isinstance(config, TypeMappingConfig):
            return cls(type_mapping=config)
        if not isinstance(config, Mapping):
            raise StructureError([_not_a_config(config)])
        return cls._from_mapping(config, CONFIG_KEYS | other_keys)

    @classmethod
    def _from_mapping(cls, config: Mapping[str, object], known: frozenset[str]) -> StructureConfig:
        problems = [_unknown(key, known) for key in config if key not in known]
        modifier = _modifier(config.get("default_modifier", "sequential"))
        if modifier is None:
            problems.append(_bad_modifier(config["default_modifier"]))
        template = config.get("prompt_template")
        if template is not None and not isinstance(template, str):
            problems.append(_bad_template(template))
        choose = functools.partial(_choice, config, problems=problems)
        instructions = choose("instructions", _INSTRUCTIONS)
        if template is not None and config.get("instructions") in _INSTRUCTIONS:
            problems.append(_instructions_with_template())
        outline = choose("outline", _OUTLINES)
        descriptions = choose("field_descriptions", _FIELD_DESCRIPTIONS)
        budget = _budget(config.get("token_budget"))
        if budget is None:
            problems.append(_bad_budget(config["token_budget"]))
        on_error = choose("on_error", _ON_ERROR)
        type_settings = {k: v for k, v in config.items() if k in TYPE_MAPPING_KEYS}
        try:
            type_mapping = TypeMappingConfig.from_mapping(type_settings)
        except StructureError as error:
            problems.extend(error.diagnostics)
            type_mapping = TypeMappingConfig()
        if problems:
            raise StructureError(problems)
        assert modifier is not None
        return cls(
            type_mapping=type_mapping,
            default_modifier=modifier,
            prompt_template=template if isinstance(template, str) else None,
            instructions=instructions,
            shape=PromptShape(outline=outline, field_descriptions=descriptions),
            token_budget=budget or {},
            on_error=on_error,
        )


def _choice(
    config: Mapping[str, object],
    key: str,
    choices: tuple[_Choice, ...],
    *,
    problems: list[Diagnostic],
) -> _Choice:
    """The setting ``key`` as one of ``choices`` (the first is its default); a value that
    is none of them adds a diagnostic to ``problems`` and gives the default."""
    value = config.get(key, choices[0])
    chosen = next((choice for choice in choices if choice == value), None)
    if chosen is None:
        problems.append(_bad_choice(key, choices, value))
        return choices[0]
    return chosen


def _bad_choice(key: str, choices: tuple[str, ...], value: object) -> Diagnostic:
    listed = ", ".join(repr(choice) for choice in choices[:-1]) + f" or {choices[-1]!r}"
    close = suggest(str(value), choices, fallback="") if isinstance(value, str) else ""
    return Diagnostic(
        severity="error",
        message=f"{key!r} must be {listed}, got {value!r}",
        hint=f"{close + ' ' if close else ''}{_CHOICE_HINTS[key]}",
    )


_CHOICE_HINTS = {
    "instructions": "pass 'human' (the default: instructions and context in one message) or "
    "'system' (instructions in the system message, the same for every call of a step)",
    "outline": "pass 'path' (the default: every level from the root task down), 'root' (the "
    "root task's text, then the node's) or 'node' (the node's text alone)",
    "field_descriptions": "pass 'text' (the default: in the prompt and in the output schema) "
    "or 'schema' (in the output schema alone)",
    "on_error": "pass 'raise' (the default: a failed step stops the run) or 'continue' "
    "(finish the other steps and list the failures in result.errors)",
}
"""How to fix each setting that takes one of a few names."""


def _modifier(value: object) -> Modifier | None:
    return _MODIFIERS.get(value.lower()) if isinstance(value, str) else None


def _not_a_config(config: object) -> Diagnostic:
    return Diagnostic(
        severity="error",
        message="RunStructure's config must be a dict, a TypeMappingConfig or None, "
        f"got {config!r}",
        hint="pass the settings by name, e.g. RunStructure({'validation_strategy': 'strict'})",
    )


def _unknown(key: str, known: frozenset[str]) -> Diagnostic:
    listed = ", ".join(repr(name) for name in sorted(known))
    return Diagnostic(
        severity="error",
        message=f"Unknown setting {key!r}",
        hint=suggest(str(key), sorted(known), fallback=f"the settings are {listed}"),
    )


def _bad_modifier(value: object) -> Diagnostic:
    close = suggest(str(value).lower().lstrip("@"), sorted(_MODIFIERS), fallback="")
    return Diagnostic(
        severity="error",
        message=f"'default_modifier' must be 'sequential' or 'parallel', got {value!r}",
        hint=f"{close + ' ' if close else ''}pass 'sequential' (the default) or 'parallel'",
    )


def _bad_template(value: object) -> Diagnostic:
    return Diagnostic(
        severity="error",
        message=f"'prompt_template' must be Jinja2 source text, got {type(value).__name__}",
        hint="pass the template's text, e.g. Path('step.jinja').read_text()",
    )


def _instructions_with_template() -> Diagnostic:
    return Diagnostic(
        severity="error",
        message="'instructions' chooses between LangTree's default templates, and "
        "'prompt_template' replaces them",
        hint="drop 'instructions' and put {{ instructions }} and {{ context }} where your "
        "template wants them (see docs/prompts.md, 'Instructions in the system message')",
    )


def _budget(value: object) -> dict[str, int] | None:
    """A budget setting as {model key: tokens}; ``None`` when it is malformed."""
    if value is None:
        return {}
    if _tokens(value):
        return {"*": value}  # type: ignore[dict-item]
    if isinstance(value, Mapping) and all(
        isinstance(key, str) and _tokens(tokens) for key, tokens in value.items()
    ):
        return dict(value)
    return None


def _tokens(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _bad_budget(value: object) -> Diagnostic:
    return Diagnostic(
        severity="error",
        message=f"'token_budget' must be a positive number of tokens or a dict of them by "
        f"model key, got {value!r}",
        hint="e.g. RunStructure({'token_budget': 4000}) or "
        "RunStructure({'token_budget': {'fast': 4000, '*': 16000}})",
    )
