"""Stage 3 of the pipeline: step prompts, assembled and counted."""

__all__ = []
