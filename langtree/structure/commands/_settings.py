"""Each node's execution settings: modifier, model (``llm``), resampling (``resample``,
``@resampled``), with arguments resolved through assembly variables (DESIGN D1, D12, D13),
and what its steps' context holds (``@context``, `langtree.structure.commands._context`).

Model inheritance: a node uses its own ``llm(...)``, else its parent's model; an
``llm(..., override=true)`` higher up wins over everything below it. An ``llm``/
``resample`` in a field's description applies to that field's step; in a class's
docstring, also to the step of a node field of the class that is generated whole
(`NodeSettings.declared`). A ``transform(...)`` in a field's description makes the field
a transform (`langtree.structure.commands._transforms`). Each command is known by its kind
(`langtree.structure.call_commands`), which also says where it may stand.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from enum import Enum

from langtree.dsl import (
    AggregationFunction,
    ExecutionCommand,
    Modifier,
    NodeModifierCommand,
    ResamplingCommand,
    Value,
    VariableReference,
    suggest,
)
from langtree.errors import Diagnostic
from langtree.structure.call_commands._kind import CommandKind, FieldCall
from langtree.structure.call_commands._llm_command import LLM
from langtree.structure.call_commands._placement import check_placement, without_effect
from langtree.structure.call_commands._resample_command import RESAMPLE
from langtree.structure.call_commands._table import calls, command_kinds, kind_of
from langtree.structure.commands._context import ContextPath, declared_context, fields_hint
from langtree.structure.commands._transforms import Transform
from langtree.structure.commands._variables import AssemblyVariables, Definition
from langtree.structure.tree._registry import NodeRegistry
from langtree.structure.tree._tree import Node, NodeCommand, NodeField
from langtree.structure.tree._tree_node import display_name
from langtree.structure.types._annotations import render_type

__all__ = ["ModelChoice", "NodeSettings", "compute_settings"]

_NUMERIC_AGGREGATIONS = frozenset({"mean", "median", "sum", "min", "max"})


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelChoice:
    """An ``llm(...)`` choice: the model key and whether it overrides the subtree."""

    key: str
    override: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeSettings:
    """How one node's steps run.

    Attributes:
        modifier: ``sequential`` or ``parallel``.
        model: The model key for the node's steps (``None``: the provider's default).
        resample: How many times the node's steps run (1: once).
        field_models: Models chosen in field descriptions, by field.
        field_resample: Resample counts set in field descriptions, by field.
        aggregations: ``@resampled`` functions, by field.
        field_transforms: The fields computed by ``transform(...)``, with their transforms.
        context: The entries ``@context[...]`` declares for the context of the node's
            steps, in order (``None``: every known value of the node).
        declared: The kinds of the commands the class's docstring holds that shape the
            model step (``llm``, ``resample``): a node field of this class that a step
            would generate whole gets a step of its own with them (see
            `langtree.structure.planning._steps`).
    """

    modifier: Modifier
    model: str | None = None
    resample: int = 1
    field_models: dict[str, str] = field(default_factory=dict)
    field_resample: dict[str, int] = field(default_factory=dict)
    aggregations: dict[str, AggregationFunction] = field(default_factory=dict)
    field_transforms: dict[str, Transform] = field(default_factory=dict)
    context: tuple[ContextPath, ...] | None = None
    declared: frozenset[CommandKind] = frozenset()


def compute_settings(
    registry: NodeRegistry,
    variables: AssemblyVariables,
    *,
    default_modifier: Modifier,
    models: Collection[str] | None,
) -> tuple[dict[str, NodeSettings], list[Diagnostic]]:
    """Settle every node's settings, parents first, with diagnostics for what is wrong."""
    builder = _SettingsBuilder(registry, variables, default_modifier, models)
    for node in registry:
        builder.settle(node)
    return builder.settings, builder.diagnostics


class _SettingsBuilder:
    def __init__(
        self,
        registry: NodeRegistry,
        variables: AssemblyVariables,
        default_modifier: Modifier,
        models: Collection[str] | None,
    ) -> None:
        self.registry = registry
        self.variables = variables
        self.default_modifier = default_modifier
        self.models = models
        self.settings: dict[str, NodeSettings] = {}
        self.overrides: dict[str, str | None] = {}
        self.diagnostics: list[Diagnostic] = []

    def settle(self, node: Node) -> None:
        parent = self.settings.get(node.parent) if node.parent else None
        inherited_override = self.overrides.get(node.parent) if node.parent else None
        self.diagnostics += check_placement(node)
        own_model = _first_call(node.commands, LLM)
        choice = self._model_choice(own_model, node) if own_model else None
        self.overrides[node.tag] = inherited_override or (
            choice.key if choice and choice.override else None
        )
        model = inherited_override or (choice.key if choice else parent.model if parent else None)
        resample = self._resample(node.commands, node) or 1
        field_resample = self._field_resample(node)
        context, context_diagnostics = declared_context(self.registry, node)
        self.diagnostics += context_diagnostics
        self.settings[node.tag] = NodeSettings(
            modifier=self._modifier(node),
            model=model,
            resample=resample,
            field_models=self._field_models(node, inherited_override),
            field_resample=field_resample,
            aggregations=self._aggregations(node, resample > 1, field_resample),
            field_transforms=self._field_transforms(node),
            context=context,
            declared=frozenset(
                kind
                for kind in command_kinds().values()
                if kind.shapes_step and calls(node.commands, kind)
            ),
        )

    # -- modifier -----------------------------------------------------------------------

    def _modifier(self, node: Node) -> Modifier:
        modifiers = [c for c in node.commands if isinstance(c.command, NodeModifierCommand)]
        for extra in modifiers[1:]:
            self.diagnostics.append(
                extra.diagnostic(
                    f"{display_name(node.node_class)!r} has more than one node modifier",
                    hint="keep one of @sequential, @parallel or together",
                )
            )
        for node_field in node.fields:
            for misplaced in node_field.commands:
                if isinstance(misplaced.command, NodeModifierCommand):
                    self.diagnostics.append(
                        misplaced.diagnostic(
                            "A node modifier belongs in the class docstring, not in a field's "
                            "description",
                            hint=f"move it to the docstring of {display_name(node.node_class)!r}",
                        )
                    )
        if not modifiers:
            return self.default_modifier
        command = modifiers[0].command
        assert isinstance(command, NodeModifierCommand)
        return command.modifier

    # -- execution commands ---------------------------------------------------------------

    def _arguments(self, node_command: NodeCommand, node: Node) -> dict[str, Value] | None:
        """The call's arguments by parameter, variables resolved and checked."""
        command = node_command.command
        assert isinstance(command, ExecutionCommand)
        kind = kind_of(command)
        bound = kind.signature.bind(command.arguments, command.named_arguments)
        assert isinstance(bound, dict), "the parser checked the call"
        resolved: dict[str, Value] = {}
        for parameter in kind.signature.parameters:
            argument = bound[parameter.name]
            value = self.variables.resolve(node.tag, argument)
            if value is None:
                assert isinstance(argument, VariableReference)
                self.diagnostics.append(_unknown_variable(node_command, argument.name, node))
                return None
            literal = value.value if isinstance(value, Definition) else value
            problem = parameter.check(kind.name, literal)
            if problem is not None:
                message, hint = _from_variable(problem, value)
                self.diagnostics.append(node_command.diagnostic(message, hint=hint))
                return None
            resolved[parameter.name] = literal
        return resolved

    def _model_choice(self, node_command: NodeCommand, node: Node) -> ModelChoice | None:
        arguments = self._arguments(node_command, node)
        if arguments is None:
            return None
        key, override = arguments["model_key"], arguments["override"]
        assert isinstance(key, str)
        if self.models is not None and key not in self.models:
            self.diagnostics.append(
                node_command.diagnostic(
                    f"Model {key!r} is not in the provider", hint=_models_hint(key, self.models)
                )
            )
        return ModelChoice(key=key, override=bool(override))

    def _resample(self, commands: tuple[NodeCommand, ...], node: Node) -> int | None:
        call = _first_call(commands, RESAMPLE)
        arguments = self._arguments(call, node) if call else None
        if arguments is None:
            return None
        count = arguments["n_times"]
        assert isinstance(count, int)
        return count

    def _field_models(self, node: Node, inherited_override: str | None) -> dict[str, str]:
        models = {}
        for node_field in node.fields:
            call = _first_call(node_field.commands, LLM)
            choice = self._model_choice(call, node) if call else None
            if choice is not None:
                models[node_field.name] = inherited_override or choice.key
        return models

    def _field_resample(self, node: Node) -> dict[str, int]:
        counts = {}
        for node_field in node.fields:
            count = self._resample(node_field.commands, node)
            if count is not None:
                counts[node_field.name] = count
        return counts

    def _field_transforms(self, node: Node) -> dict[str, Transform]:
        """The fields that a command computes (``transform(...)``), with how."""
        transforms = {}
        for kind in command_kinds().values():
            for node_field in node.fields:
                found = self._computed(kind, node, node_field)
                if isinstance(found, Transform):
                    transforms[node_field.name] = found
                elif found is not None:
                    self.diagnostics += found
        return transforms

    def _computed(
        self, kind: CommandKind, node: Node, node_field: NodeField
    ) -> Transform | list[Diagnostic] | None:
        """How the field's command of ``kind`` computes it (``None``: it does not)."""
        call = _first_call(node_field.commands, kind) if kind.computes is not None else None
        arguments = self._arguments(call, node) if call is not None else None
        if kind.computes is None or call is None or arguments is None:
            return None
        found = kind.computes(
            FieldCall(
                registry=self.registry,
                node=node,
                node_field=node_field,
                call=call,
                arguments=arguments,
            )
        )
        # A command beside it that it leaves without effect (check_placement() reports it)
        # keeps the field from being computed: the structure does not validate anyway.
        if isinstance(found, Transform) and without_effect(kind, node, node_field):
            return []
        return found

    # -- @resampled -----------------------------------------------------------------------

    def _aggregations(
        self, node: Node, node_resampled: bool, field_resample: dict[str, int]
    ) -> dict[str, AggregationFunction]:
        aggregations: dict[str, AggregationFunction] = {}
        for node_command in node.all_commands:
            command = node_command.command
            if not isinstance(command, ResamplingCommand):
                continue
            if self._aggregation_fits(node_command, node):
                aggregations[command.field_name] = command.aggregation_function
                if not node_resampled and field_resample.get(command.field_name, 1) == 1:
                    self.diagnostics.append(
                        node_command.diagnostic(
                            f"@resampled[{command.field_name}] has no effect: nothing resamples "
                            f"{display_name(node.node_class)!r}",
                            hint="add '! resample(n)' with n > 1 to the node or the field, or "
                            "remove the command",
                            warning=True,
                        )
                    )
        return aggregations

    def _aggregation_fits(self, node_command: NodeCommand, node: Node) -> bool:
        command = node_command.command
        assert isinstance(command, ResamplingCommand)
        node_field = node.field(command.field_name)
        span = command.field_span
        if node_field is None:
            self.diagnostics.append(
                node_command.diagnostic(
                    f"@resampled names {command.field_name!r}, which is not a field of "
                    f"{display_name(node.node_class)!r}",
                    hint=fields_hint(command.field_name, node),
                    span=span,
                )
            )
            return False
        enum = node_field.shape.enum if not node_field.shape.list_depth else None
        if enum is None:
            self.diagnostics.append(
                node_command.diagnostic(
                    f"@resampled needs an Enum field; {command.field_name!r} is "
                    f"{render_type(node_field.annotation)}",
                    hint="give the field an Enum type, or remove the command",
                    span=span,
                )
            )
            return False
        numeric = command.aggregation_function in _NUMERIC_AGGREGATIONS
        others = _non_numeric(enum) if numeric else []
        if others:
            self.diagnostics.append(
                node_command.diagnostic(
                    f"@resampled[{command.field_name}]->{command.aggregation_function} needs an "
                    f"Enum with numeric values; {enum.__name__} has {', '.join(others)}",
                    hint="use 'mode', or give every member an int or float value",
                )
            )
            return False
        return True


def _first_call(commands: tuple[NodeCommand, ...], kind: CommandKind) -> NodeCommand | None:
    """The first call of ``kind`` among ``commands`` (`check_placement()` reports the
    others)."""
    found = calls(commands, kind)
    return found[0] if found else None


def _non_numeric(enum: type[Enum]) -> list[str]:
    """The members whose value is no number, as ``NAME='value'``."""
    return [
        f"{member.name}={member.value!r}"
        for member in enum
        if not isinstance(member.value, int | float) or isinstance(member.value, bool)
    ]


def _unknown_variable(node_command: NodeCommand, name: str, node: Node) -> Diagnostic:
    return node_command.diagnostic(
        f"Unknown assembly variable {name!r}: neither {display_name(node.node_class)!r} nor a "
        "node above it defines it",
        hint=f"define it with '! {name}=...' in this node or one above it, or pass a literal",
    )


def _from_variable(problem: tuple[str, str], value: Value | Definition) -> tuple[str, str]:
    """An argument problem, reworded when the value came from an assembly variable."""
    if not isinstance(value, Definition):
        return problem
    where = value.command.origin.describe(value.command.extracted.line)
    return (
        f"{problem[0]} (the value of assembly variable {value.name!r})",
        f"{problem[1]}: change '! {value.name}=...' in {where}, or pass a literal",
    )


def _models_hint(key: str, models: Collection[str]) -> str:
    if not models:
        return "the provider lists no models: add one to it"
    available = ", ".join(repr(model) for model in models)
    close = suggest(key, list(models), fallback="")
    return f"{close + ' ' if close else ''}the provider's models are {available}"
