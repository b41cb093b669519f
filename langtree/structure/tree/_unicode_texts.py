"""An error where a docstring or description holds a lone surrogate.

A lone surrogate (``"\\ud800"``, as a bad decode with ``surrogateescape`` leaves) is not
Unicode text: no prompt that shows it can be encoded for a provider, so the run would fail
at its first call. ``validate()`` reports it at the character instead. (Python already
refuses such a docstring when the class is created; descriptions reach LangTree as given.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from langtree.dsl import Extraction
from langtree.errors import Diagnostic
from langtree.structure.tree._origins import Origin
from langtree.structure.tree._registry import NodeRegistry

__all__ = ["check_unicode_texts"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def check_unicode_texts(registry: NodeRegistry) -> Iterator[Diagnostic]:
    """An error for the first lone surrogate of every node's texts."""
    for holder in registry.texts():
        yield from _problem(holder.extraction, holder.origin)


def _problem(extraction: Extraction, origin: Origin) -> Iterator[Diagnostic]:
    for number, line in enumerate(extraction.source_lines, start=1):
        found = _SURROGATE.search(line)
        if found is not None:
            shown = line.encode("utf-8", "backslashreplace").decode("utf-8")
            yield origin.diagnostic(
                f"The text holds a lone surrogate ({found.group()!a}), which is not Unicode "
                "text and cannot be sent to a model",
                hint="decode the text with errors='strict' or 'replace', or remove the character",
                text_line=number,
                column=found.start() + 1,
                source_line=shown,
                length=1,
            )
            return
