"""Colour on the terminal: only on one that shows it, and never when ``NO_COLOR`` is set.

The convention of https://no-color.org: any non-empty ``NO_COLOR`` turns colour off;
``TERM=dumb`` and output that is not a terminal (a file, a pipe, a test) get none either.
"""

from __future__ import annotations

import os
from typing import Literal, TextIO

__all__ = ["Colour", "colours", "painted"]

Colour = Literal["green", "red", "yellow", "dim"]

_CODES: dict[Colour, str] = {"green": "32", "red": "31", "yellow": "33", "dim": "2"}


def colours(stream: TextIO) -> bool:
    """Whether ``stream`` shows colour."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return stream.isatty()


def painted(text: str, colour: Colour, *, on: bool) -> str:
    """``text`` in ``colour`` when ``on``, else as it is.

    Examples:
        >>> painted("3 failed", "red", on=True)
        '\\x1b[31m3 failed\\x1b[0m'
        >>> painted("3 failed", "red", on=False)
        '3 failed'
    """
    return f"\x1b[{_CODES[colour]}m{text}\x1b[0m" if on else text
