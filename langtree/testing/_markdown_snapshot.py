"""``PromptSnapshot``: a syrupy extension that keeps each snapshot in a Markdown file.

Imported only by the ``prompt_snapshot`` fixture of LangTree's pytest plugin, since syrupy
is a test dependency of the user's, not of LangTree.
"""

from __future__ import annotations

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

__all__ = ["PromptSnapshot"]


class PromptSnapshot(SingleFileSnapshotExtension):
    """One ``.md`` file per snapshot, written as text, under ``__snapshots__/<test file>/``."""

    file_extension = "md"
    _write_mode = WriteMode.TEXT
