"""Stage 4 of the pipeline: running steps on LangChain chat models."""

from langtree.runtime._settings import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    RUN_SETTING_KEYS,
    RunOptions,
    RunSettings,
    setting_problems,
)
from langtree.runtime.calls._built_models import ChatRunnable
from langtree.runtime.calls._chat_base import RequestedOutput, StructuredChatModel, requested_output
from langtree.runtime.calls._metadata import NODE_PATH_KEY
from langtree.runtime.calls._methods import METHOD_CHOICES, Method, MethodChoice
from langtree.runtime.calls._provider import LLMProvider, ModelConfig, ModelSource, model_check
from langtree.runtime.calls._provider_strings import is_provider_string, provider_string_problems
from langtree.runtime.calls._schema import schema_tokens
from langtree.runtime.datasets._dataset import (
    RowResult,
    Rows,
    dataset_options,
    listed_positions,
    run_dataset,
)
from langtree.runtime.datasets._shared import SharedCalls
from langtree.runtime.durable._cache import CacheReport, ResponseCache
from langtree.runtime.durable._journal import Journal, JournalReport, JournalWriteError
from langtree.runtime.durable._salvage import SalvageReport, salvage_journal
from langtree.runtime.engine._arguments import checked_config, checked_variables
from langtree.runtime.engine._engine import execute
from langtree.runtime.engine._loop import iterate_async, iterate_sync, run_async
from langtree.runtime.engine._precheck import check_asset_support
from langtree.runtime.engine._runnable import DEFAULT_NAME, RunInputs, run_runnable
from langtree.runtime.engine._setup import RunSetup, RunWatch, require_provider, run_interruptible
from langtree.runtime.faults._failure import (
    Diagnosis,
    RunInterrupted,
    RunLimitError,
    StepFailedError,
)
from langtree.runtime.faults._faults import ErrorClassifier, FailureKind
from langtree.runtime.faults._rate_limit import RateBuckets, RateLimit, RateLimiter
from langtree.runtime.faults._retry import RetryPolicy
from langtree.runtime.observe._events import (
    EventSink,
    RunEvent,
    RunFinished,
    StepFailed,
    StepFinished,
    ValueMapped,
    stream_events,
)
from langtree.runtime.observe._progress import RunProgress
from langtree.runtime.observe._progress_bar import LiveLine, ProgressBar
from langtree.runtime.observe._provenance import ProvenanceRecord, UnknownPathError
from langtree.runtime.observe._result import (
    RunResult,
    SkippedInstance,
    TraceRecord,
    TransformRecord,
)
from langtree.runtime.observe._usage import RunUsage, Usage, UsageLimits, run_tokens
from langtree.runtime.page._files import DEFAULT_MAX_RUN_BYTES, read_run, write_page

__all__ = [
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_RUN_BYTES",
    "DEFAULT_NAME",
    "METHOD_CHOICES",
    "NODE_PATH_KEY",
    "RUN_SETTING_KEYS",
    "CacheReport",
    "ChatRunnable",
    "Diagnosis",
    "ErrorClassifier",
    "EventSink",
    "FailureKind",
    "Journal",
    "JournalReport",
    "JournalWriteError",
    "LLMProvider",
    "LiveLine",
    "Method",
    "MethodChoice",
    "ModelConfig",
    "ModelSource",
    "ProgressBar",
    "ProvenanceRecord",
    "RateBuckets",
    "RateLimit",
    "RateLimiter",
    "RequestedOutput",
    "ResponseCache",
    "RetryPolicy",
    "RowResult",
    "Rows",
    "RunEvent",
    "RunFinished",
    "RunInputs",
    "RunInterrupted",
    "RunLimitError",
    "RunOptions",
    "RunProgress",
    "RunResult",
    "RunSettings",
    "RunSetup",
    "RunUsage",
    "RunWatch",
    "SalvageReport",
    "SharedCalls",
    "SkippedInstance",
    "StepFailed",
    "StepFailedError",
    "StepFinished",
    "StructuredChatModel",
    "TraceRecord",
    "TransformRecord",
    "UnknownPathError",
    "Usage",
    "UsageLimits",
    "ValueMapped",
    "check_asset_support",
    "checked_config",
    "checked_variables",
    "dataset_options",
    "execute",
    "is_provider_string",
    "iterate_async",
    "iterate_sync",
    "listed_positions",
    "model_check",
    "provider_string_problems",
    "read_run",
    "requested_output",
    "require_provider",
    "run_async",
    "run_dataset",
    "run_interruptible",
    "run_runnable",
    "run_tokens",
    "salvage_journal",
    "schema_tokens",
    "setting_problems",
    "stream_events",
    "write_page",
]
