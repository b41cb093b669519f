"""Stage 4 of the pipeline: running steps on LangChain chat models."""

from langtree.runtime.provider import LLMProvider, ModelSource

__all__ = ["LLMProvider", "ModelSource"]
