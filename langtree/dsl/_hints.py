"""Hints that name the fix: "did you mean ...?" for misspelled names."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

__all__ = ["suggest"]


def suggest(word: str, candidates: Sequence[str], *, fallback: str) -> str:
    """Suggest the closest candidate to a misspelled word, or return ``fallback``.

    Examples:
        >>> suggest("@seqential", ["@sequential", "@parallel"], fallback="")
        "did you mean '@sequential'?"
    """
    matches = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return f"did you mean {matches[0]!r}?" if matches else fallback
