"""Stage 3 of the pipeline: step prompts, assembled and counted."""

from langtree.prompts._asset_files import DEFAULT_MAX_ASSET_BYTES, AssetFiles
from langtree.prompts._attachments import (
    ASSET_TOKENS,
    AssetCollector,
    AssetSource,
    AssetSources,
    check_asset_files,
    check_given_assets,
    lacked_input,
    lacked_inputs,
    unsupported_assets,
    without_asset_bytes,
)
from langtree.prompts._dataflow import EXTERNAL, write_iterations
from langtree.prompts._estimate import DEFAULT_MODEL_KEY, Cost, Prompts
from langtree.prompts._feedback import (
    NO_OUTPUT,
    TEXT_INSTEAD_OF_TOOL_CALL,
    cut_off_error,
    feedback_message,
    invalid_tool_arguments,
    no_tool_call,
    not_a_message,
    not_an_object,
    not_json,
    other_tools_called,
    problem_text,
)
from langtree.prompts._given_inputs import check_given_inputs
from langtree.prompts._json_form import add_instructions, asks_for_json, json_instructions
from langtree.prompts._preview import PromptBuilder, PromptSetup, StepPrompt, preview_prompts
from langtree.prompts._schedule import CommandReadiness, dry_run, step_writes
from langtree.prompts._schema_text import tool_name, tool_schema
from langtree.prompts._state import (
    Address,
    MissingValue,
    RunState,
    copied,
    elements,
    fill_defaults,
    instance_text,
    to_plain,
)
from langtree.prompts._template import (
    DEFAULT_TEMPLATE,
    LEAN_TEMPLATE,
    SYSTEM_INSTRUCTIONS_TEMPLATE,
    StepTemplate,
    template_source,
)
from langtree.prompts._tokens import PromptTokens, count_tokens
from langtree.prompts._values import Pending, contains_pending, json_data, unicode_problem

__all__ = [
    "ASSET_TOKENS",
    "DEFAULT_MAX_ASSET_BYTES",
    "DEFAULT_MODEL_KEY",
    "DEFAULT_TEMPLATE",
    "EXTERNAL",
    "LEAN_TEMPLATE",
    "NO_OUTPUT",
    "SYSTEM_INSTRUCTIONS_TEMPLATE",
    "TEXT_INSTEAD_OF_TOOL_CALL",
    "Address",
    "AssetCollector",
    "AssetFiles",
    "AssetSource",
    "AssetSources",
    "CommandReadiness",
    "Cost",
    "MissingValue",
    "Pending",
    "PromptBuilder",
    "PromptSetup",
    "PromptTokens",
    "Prompts",
    "RunState",
    "StepPrompt",
    "StepTemplate",
    "add_instructions",
    "asks_for_json",
    "check_asset_files",
    "check_given_assets",
    "check_given_inputs",
    "contains_pending",
    "copied",
    "count_tokens",
    "cut_off_error",
    "dry_run",
    "elements",
    "feedback_message",
    "fill_defaults",
    "instance_text",
    "invalid_tool_arguments",
    "json_data",
    "json_instructions",
    "lacked_input",
    "lacked_inputs",
    "no_tool_call",
    "not_a_message",
    "not_an_object",
    "not_json",
    "other_tools_called",
    "preview_prompts",
    "problem_text",
    "step_writes",
    "template_source",
    "to_plain",
    "tool_name",
    "tool_schema",
    "unicode_problem",
    "unsupported_assets",
    "without_asset_bytes",
    "write_iterations",
]
