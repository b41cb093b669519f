"""A warning where a line of prompt text holds something that looks like a command.

Only a line whose first non-blank character is ``!`` is a command; anything after other
text (``Summarise the text. ! @all->...``) goes to the model as prompt text. What "looks
like a command" means is `langtree.dsl._extraction.find_stray_commands()`'s rule.
"""

from __future__ import annotations

from collections.abc import Iterator

from langtree.dsl import Extraction, find_stray_commands
from langtree.errors import Diagnostic
from langtree.structure.call_commands._table import call_signatures
from langtree.structure.tree._origins import Origin
from langtree.structure.tree._registry import NodeRegistry

__all__ = ["check_stray_commands"]

_SHOWN = 40
"""How much of a stray command the message quotes."""


def check_stray_commands(registry: NodeRegistry) -> Iterator[Diagnostic]:
    """Warn about every command-like text after other text, in every node's texts."""
    for holder in registry.texts():
        yield from _warnings(holder.extraction, holder.origin)


def _warnings(extraction: Extraction, origin: Origin) -> Iterator[Diagnostic]:
    for stray in find_stray_commands(extraction, signatures=call_signatures()):
        shown = stray.text if len(stray.text) <= _SHOWN else stray.text[: _SHOWN - 3] + "..."
        yield origin.diagnostic(
            f"{shown!r} follows other text on its line, so it is prompt text, not a command",
            hint="put the command on a line of its own",
            text_line=stray.line,
            column=stray.column,
            source_line=extraction.source_lines[stray.line - 1],
            length=len(stray.text),
            warning=True,
        )
