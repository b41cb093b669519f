"""A griffe extension for the API reference: docstring markup that Markdown lacks.

LangTree's docstrings hold doctests (``>>> ...`` and their output) as plain paragraphs,
which pytest's ``--doctest-modules`` runs, and Sphinx roles such as
``:class:`~langtree.runtime.result.RunResult```. Markdown would render the doctests as
text (and read ``[x]`` in them as links) and the roles literally, so before mkdocstrings
renders a docstring this extension wraps each doctest in a ``pycon`` code block and turns
each role into inline code (``RunResult``). The docstrings themselves are not changed.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:class|meth|func|attr|mod|exc|data|obj):`(~?)([^`]+)`")


def _role(match: re.Match[str]) -> str:
    name = match[2].split(".")[-1] if match[1] else match[2]
    return f"`{name}`"


def fence_doctests(text: str) -> str:
    """``text`` with every bare doctest block (``>>>`` to the next blank line) fenced."""
    lines = text.splitlines()
    out: list[str] = []
    in_fence = False
    in_doctest = False
    for line in lines:
        stripped = line.strip()
        if in_doctest and not stripped:
            out.append(line[: len(line) - len(line.lstrip())] + "```")
            in_doctest = False
        if stripped.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and not in_doctest and stripped.startswith(">>>"):
            out.append(line[: len(line) - len(line.lstrip())] + "```pycon")
            in_doctest = True
        out.append(line)
    if in_doctest:
        out.append("```")
    return "\n".join(out)


class DocstringMarkup(griffe.Extension):
    """Fence bare doctests and render Sphinx roles in every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(_role, fence_doctests(obj.docstring.value))
