"""Stage 4 of the pipeline: running steps on LangChain chat models."""

from langtree.runtime.failure import StepFailedError
from langtree.runtime.provenance import ProvenanceRecord, UnknownPathError
from langtree.runtime.provider import LLMProvider, ModelSource
from langtree.runtime.result import RunResult, SkippedInstance, TraceRecord

__all__ = [
    "LLMProvider",
    "ModelSource",
    "ProvenanceRecord",
    "RunResult",
    "SkippedInstance",
    "StepFailedError",
    "TraceRecord",
    "UnknownPathError",
]
