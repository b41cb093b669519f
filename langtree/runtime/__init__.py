"""Stage 4 of the pipeline: running steps on LangChain chat models."""

from langtree.runtime.calls.methods import MethodChoice
from langtree.runtime.calls.provider import LLMProvider, ModelConfig, ModelSource
from langtree.runtime.durable.cache import CacheReport, ResponseCache
from langtree.runtime.durable.journal import JournalReport, JournalWriteError
from langtree.runtime.durable.salvage import SalvageReport, salvage_journal
from langtree.runtime.faults.failure import RunInterrupted, RunLimitError, StepFailedError
from langtree.runtime.faults.faults import ErrorClassifier, FailureKind
from langtree.runtime.faults.retry import RetryPolicy
from langtree.runtime.observe.events import (
    RunEvent,
    RunFinished,
    StepFailed,
    StepFinished,
    ValueMapped,
)
from langtree.runtime.observe.progress_bar import ProgressBar
from langtree.runtime.observe.provenance import ProvenanceRecord, UnknownPathError
from langtree.runtime.observe.result import RunResult, SkippedInstance, TraceRecord, TransformRecord
from langtree.runtime.observe.usage import RunUsage, Usage, UsageLimits
from langtree.runtime.settings import RunOptions

__all__ = [
    "CacheReport",
    "ErrorClassifier",
    "FailureKind",
    "JournalReport",
    "JournalWriteError",
    "LLMProvider",
    "MethodChoice",
    "ModelConfig",
    "ModelSource",
    "ProgressBar",
    "ProvenanceRecord",
    "ResponseCache",
    "RetryPolicy",
    "RunEvent",
    "RunFinished",
    "RunInterrupted",
    "RunLimitError",
    "RunOptions",
    "RunResult",
    "RunUsage",
    "SalvageReport",
    "SkippedInstance",
    "StepFailed",
    "StepFailedError",
    "StepFinished",
    "TraceRecord",
    "TransformRecord",
    "UnknownPathError",
    "Usage",
    "UsageLimits",
    "ValueMapped",
    "salvage_journal",
]
