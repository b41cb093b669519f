"""Stage 4 of the pipeline: running steps on LangChain chat models."""

from langtree.runtime.cache import CacheReport, ResponseCache
from langtree.runtime.events import RunEvent, RunFinished, StepFailed, StepFinished, ValueMapped
from langtree.runtime.failure import RunInterrupted, RunLimitError, StepFailedError
from langtree.runtime.faults import ErrorClassifier, FailureKind
from langtree.runtime.journal import JournalReport, JournalWriteError
from langtree.runtime.methods import MethodChoice
from langtree.runtime.progress_bar import ProgressBar
from langtree.runtime.provenance import ProvenanceRecord, UnknownPathError
from langtree.runtime.provider import LLMProvider, ModelConfig, ModelSource
from langtree.runtime.result import RunResult, SkippedInstance, TraceRecord, TransformRecord
from langtree.runtime.retry import RetryPolicy
from langtree.runtime.salvage import SalvageReport, salvage_journal
from langtree.runtime.settings import RunOptions
from langtree.runtime.usage import RunUsage, Usage, UsageLimits

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
