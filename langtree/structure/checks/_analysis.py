"""Everything LangTree can check before a model call, in one pass over the added tasks.

Only the plan depends on what the caller supplies: `replan()` drafts it again for
given inputs and keeps every other result.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, replace

from langtree.errors import Diagnostic
from langtree.structure._config import Outline, StructureConfig
from langtree.structure.call_commands._transform_targets import check_transform_targets
from langtree.structure.checks._scopes import check_scopes
from langtree.structure.checks._stray_commands import check_stray_commands
from langtree.structure.checks._whole_nodes import check_whole_nodes
from langtree.structure.commands._assets import check_assets
from langtree.structure.commands._command_keys import check_command_cycles
from langtree.structure.commands._deliveries import check_deliveries, prompted_fields
from langtree.structure.commands._flows import Flow, resolve_flows
from langtree.structure.commands._placeholders import check_placeholders
from langtree.structure.commands._settings import NodeSettings, compute_settings
from langtree.structure.commands._variables import AssemblyVariables
from langtree.structure.planning._known import KnownFields, known_fields
from langtree.structure.planning._plan import ExecutionPlan, build_plan
from langtree.structure.planning._steps import StepDraft, draft_steps
from langtree.structure.tree._registry import FieldKey, NodeRegistry
from langtree.structure.tree._unicode_texts import check_unicode_texts
from langtree.structure.types._value_types import check_value_types

__all__ = ["Analysis", "analyse", "prompt_variable_names", "replan"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Analysis:
    """The checked tree: data flows, node settings, the plan, and every diagnostic.

    Attributes:
        checks: The diagnostics that do not depend on what the caller supplies (every
            one but the plan's).
        diagnostics: Every diagnostic, the plan's included, sorted by location.
    """

    flows: tuple[Flow, ...]
    outline: Outline
    variables: AssemblyVariables
    settings: dict[str, NodeSettings]
    plan: ExecutionPlan
    checks: tuple[Diagnostic, ...]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """The diagnostics that are errors."""
        return tuple(d for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        """The diagnostics that are warnings."""
        return tuple(d for d in self.diagnostics if d.severity == "warning")


def analyse(
    registry: NodeRegistry,
    config: StructureConfig,
    *,
    models: Collection[str] | None,
    earlier: list[Diagnostic],
) -> Analysis:
    """Run every rule and draft the plan with nothing supplied by the caller.

    Args:
        registry: The nodes of the added tasks.
        config: The run's settings.
        models: The provider's model keys, or ``None`` when no provider is known yet.
        earlier: Diagnostics found while the tasks were added.
    """
    flows, diagnostics = resolve_flows(registry)
    variables = AssemblyVariables(registry)
    settings, setting_diagnostics = compute_settings(
        registry, variables, default_modifier=config.default_modifier, models=models
    )
    diagnostics += variables.diagnostics + setting_diagnostics + earlier
    diagnostics += check_scopes(registry, flows)
    diagnostics += check_stray_commands(registry)
    diagnostics += check_unicode_texts(registry)
    diagnostics += check_placeholders(registry, prompt_variable_names(flows), variables)
    diagnostics += check_value_types(flows, config.type_mapping)
    diagnostics += check_command_cycles(registry, flows)
    transforms = {
        FieldKey(tag, name): transform
        for tag, setting in settings.items()
        for name, transform in setting.field_transforms.items()
    }
    diagnostics += check_transform_targets(registry, flows, transforms)
    checked = Analysis(
        flows=tuple(flows),
        outline=config.shape.outline,
        variables=variables,
        settings=settings,
        plan=ExecutionPlan(steps=()),
        checks=tuple(diagnostics),
        diagnostics=(),
    )
    return replan(checked, registry, {})


def replan(analysis: Analysis, registry: NodeRegistry, supplied: KnownFields) -> Analysis:
    """The analysis with its plan drafted anew for the fields the caller supplies.

    Args:
        analysis: The analysis of ``registry``.
        registry: The nodes of the added tasks.
        supplied: Fields the caller supplies, by node tag.
    """
    flows = list(analysis.flows)
    known = known_fields(registry, flows, supplied)
    drafts = draft_steps(registry, known, analysis.settings)
    plan, plan_diagnostics = build_plan(
        registry, drafts, flows, prompt_variable_names(flows), analysis.outline
    )
    plan_diagnostics += check_whole_nodes(registry, drafts)
    plan_diagnostics += check_deliveries(registry, flows, prompted_fields(drafts))
    plan_diagnostics += check_assets(registry, _generated_by_node(drafts))
    diagnostics = sorted(set(analysis.checks + tuple(plan_diagnostics)), key=lambda d: d.sort_key)
    return replace(analysis, plan=plan, diagnostics=tuple(diagnostics))


def _generated_by_node(drafts: list[StepDraft]) -> dict[str, tuple[str, ...]]:
    """The fields the steps generate, by node tag; a split step's lie inside a node
    another step generates whole, whose fields are all of it (asset fields are reported
    once, at the step whose field a value would make descended into)."""
    generated: dict[str, tuple[str, ...]] = {}
    for draft in (draft for draft in drafts if draft.creator is None):
        generated[draft.node_tag] = generated.get(draft.node_tag, ()) + draft.fields
    return generated


def prompt_variable_names(flows: list[Flow]) -> dict[str, set[str]]:
    """The names that ``prompt`` mappings make resolvable, by destination node tag.

    Several sources for one name also make ``{name_1}``, ``{name_2}``... resolvable.
    """
    counts: Counter[tuple[str, str]] = Counter()
    for flow in flows:
        if flow.destination is None:
            continue
        for mapping_flow in flow.mappings:
            if mapping_flow.scope == "prompt":
                counts[(flow.destination.node.tag, mapping_flow.name)] += 1
    names: dict[str, set[str]] = {}
    for (tag, name), count in counts.items():
        numbered = {f"{name}_{index}" for index in range(1, count + 1)} if count > 1 else set()
        names.setdefault(tag, set()).update({name} | numbered)
    return names
