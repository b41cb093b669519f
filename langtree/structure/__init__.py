"""Stage 2 of the pipeline: node classes, their texts, validation and the execution plan."""

from langtree.structure._config import ConfigInput, Outline, PromptShape, StructureConfig
from langtree.structure._structure import TreeStructure
from langtree.structure.call_commands._table import call_signatures, parse_command
from langtree.structure.checks._analysis import Analysis, prompt_variable_names
from langtree.structure.commands._assets import Asset, AssetKind, asset_field_names, holds_asset
from langtree.structure.commands._command_keys import (
    command_blockers,
    flow_reads,
    flow_writes,
    index_keys,
    source_reads,
)
from langtree.structure.commands._context import ContextPath
from langtree.structure.commands._deliveries import (
    EntryReaders,
    entry_readers,
    in_context,
    leaf_destination,
    prompted_fields,
)
from langtree.structure.commands._element_flows import element_levels
from langtree.structure.commands._flows import Flow, MappingFlow, TargetScope
from langtree.structure.commands._placeholders import (
    PLACEHOLDER,
    TEMPLATE_VARIABLES,
    find_placeholders,
)
from langtree.structure.commands._transforms import Transform, compiled
from langtree.structure.planning._known import (
    KnownFields,
    field_holder,
    input_only,
    known_fields,
    supplied_fields,
)
from langtree.structure.planning._plan import ExecutionPlan, PlanStep
from langtree.structure.tree._discovery import load_modules, node_classes
from langtree.structure.tree._registry import FieldKey, NodeRegistry
from langtree.structure.tree._texts import class_parse_diagnostics
from langtree.structure.tree._tree import (
    Node,
    NodeField,
    node_diagnostic,
    task_tag,
    title_from_name,
)
from langtree.structure.tree._tree_node import TreeNode, display_name, written_texts
from langtree.structure.types._annotations import item_type, render_type, strip_optional
from langtree.structure.types._conversion import accepts_none, convert_value
from langtree.structure.types._defaults import type_adapter
from langtree.structure.types._type_config import TypeMappingConfig, ValidationStrategy

__all__ = [
    "PLACEHOLDER",
    "TEMPLATE_VARIABLES",
    "Analysis",
    "Asset",
    "AssetKind",
    "ConfigInput",
    "ContextPath",
    "EntryReaders",
    "ExecutionPlan",
    "FieldKey",
    "Flow",
    "KnownFields",
    "MappingFlow",
    "Node",
    "NodeField",
    "NodeRegistry",
    "Outline",
    "PlanStep",
    "PromptShape",
    "StructureConfig",
    "TargetScope",
    "Transform",
    "TreeNode",
    "TreeStructure",
    "TypeMappingConfig",
    "ValidationStrategy",
    "accepts_none",
    "asset_field_names",
    "call_signatures",
    "class_parse_diagnostics",
    "command_blockers",
    "compiled",
    "convert_value",
    "display_name",
    "element_levels",
    "entry_readers",
    "field_holder",
    "find_placeholders",
    "flow_reads",
    "flow_writes",
    "holds_asset",
    "in_context",
    "index_keys",
    "input_only",
    "item_type",
    "known_fields",
    "leaf_destination",
    "load_modules",
    "node_classes",
    "node_diagnostic",
    "parse_command",
    "prompt_variable_names",
    "prompted_fields",
    "render_type",
    "source_reads",
    "strip_optional",
    "supplied_fields",
    "task_tag",
    "title_from_name",
    "type_adapter",
    "written_texts",
]
