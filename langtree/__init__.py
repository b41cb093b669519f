"""LangTree: structured LLM generation described as a tree of Pydantic models."""

from langtree._version import __version__ as __version__
from langtree.api import RunStructure
from langtree.errors import (
    CommandParseError,
    CommandTextTypeError,
    Diagnostic,
    ExecutionError,
    LangTreeError,
    MissingVariablesError,
    StructureError,
)
from langtree.prompts.estimate import Cost, Prompts
from langtree.prompts.preview import StepPrompt
from langtree.runtime.calls.provider import LLMProvider, ModelConfig
from langtree.runtime.datasets.dataset import RowResult
from langtree.runtime.durable.cache import ResponseCache
from langtree.runtime.durable.journal import JournalWriteError
from langtree.runtime.faults.failure import RunInterrupted, RunLimitError, StepFailedError
from langtree.runtime.faults.rate_limit import RateLimit
from langtree.runtime.faults.retry import RetryPolicy
from langtree.runtime.observe.result import RunResult
from langtree.runtime.observe.usage import UsageLimits
from langtree.structure.call_commands.table import parse_command
from langtree.structure.commands.assets import Asset
from langtree.structure.planning.plan import ExecutionPlan, PlanStep
from langtree.structure.tree.registry import NodeRegistry
from langtree.structure.tree.tree import Node, NodeField
from langtree.structure.tree.tree_node import TreeNode
from langtree.structure.types.type_config import TypeMappingConfig, ValidationStrategy

__all__ = [
    "Asset",
    "CommandParseError",
    "CommandTextTypeError",
    "Cost",
    "Diagnostic",
    "ExecutionError",
    "ExecutionPlan",
    "JournalWriteError",
    "LLMProvider",
    "LangTreeError",
    "MissingVariablesError",
    "ModelConfig",
    "Node",
    "NodeField",
    "NodeRegistry",
    "PlanStep",
    "Prompts",
    "RateLimit",
    "ResponseCache",
    "RetryPolicy",
    "RowResult",
    "RunInterrupted",
    "RunLimitError",
    "RunResult",
    "RunStructure",
    "StepFailedError",
    "StepPrompt",
    "StructureError",
    "TreeNode",
    "TypeMappingConfig",
    "UsageLimits",
    "ValidationStrategy",
    "parse_command",
]
