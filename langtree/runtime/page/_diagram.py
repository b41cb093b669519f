"""The plan as a diagram the page draws without JavaScript: an inline SVG laid out here.

Mermaid (what `ExecutionPlan.to_mermaid()` writes) needs a script, which a page that works
offline from a file cannot fetch. The layout is simple and needs none: a step's row is
its depth (0 when it depends on nothing, else one more than its deepest prerequisite),
steps of a row stand left to right in plan order, each row centred, and an arrow runs
from each prerequisite to the step that waits for it. Labels are monospaced, so a box
is made as wide as its longest line: no label is cut.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from langtree.runtime.page._saved import SavedPlanStep

__all__ = ["LINE_HEIGHT", "Box", "Diagram", "Edge", "made_by", "plan_diagram", "waits_for"]

CHAR_WIDTH = 7.5
"""Pixels per character of the labels' 12px monospaced font (the widest common ones
measure 7.2), so that a label fits its box whichever font the browser picks."""

LINE_HEIGHT = 16
_PAD_X = 10
_PAD_Y = 8
_GAP_X = 24
_GAP_Y = 44
_MARGIN = 12


@dataclass(frozen=True, slots=True, kw_only=True)
class Box:
    """One step's box: its top-left corner, its size and its lines of text."""

    step_id: str
    x: float
    y: float
    width: float
    height: float
    lines: tuple[str, ...]
    failed: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Edge:
    """An arrow from a prerequisite's box (``start``) to the step that waits for it."""

    start: str
    end: str
    x1: float
    y1: float
    x2: float
    y2: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagram:
    """The boxes and arrows of a plan, and the size of the drawing."""

    width: float
    height: float
    boxes: tuple[Box, ...]
    edges: tuple[Edge, ...]


def plan_diagram(steps: Sequence[SavedPlanStep], failed: frozenset[str]) -> Diagram:
    """The diagram of a plan's steps; those in ``failed`` are marked.

    A prerequisite that is not a step of the plan (a damaged file) gets no arrow.
    """
    rows = _rows(steps)
    sized = [[_sized(number, step, failed) for number, step in row] for row in rows]
    width = max((_row_width(row) for row in sized), default=0.0) + 2 * _MARGIN
    boxes: list[Box] = []
    top = float(_MARGIN)
    for row in sized:
        left = (width - _row_width(row)) / 2
        for box in row:
            boxes.append(replace(box, x=left, y=top))
            left += box.width + _GAP_X
        top += max(box.height for box in row) + _GAP_Y
    placed = {box.step_id: box for box in boxes}
    edges = tuple(
        _edge(placed[dep], placed[step.id])
        for step in steps
        for dep in step.depends_on
        if dep in placed
    )
    height = top - _GAP_Y + _MARGIN if boxes else 0.0
    return Diagram(width=width, height=height, boxes=tuple(boxes), edges=edges)


def made_by(step: SavedPlanStep) -> str:
    """What produces a step's fields: a transform, or a model and how many samples."""
    if step.transform is not None:
        return f"transform: {step.transform}"
    model = f"model: {step.model}" if step.model else "default model"
    return f"{model} × {step.resample} samples" if step.resample > 1 else model


def _rows(steps: Sequence[SavedPlanStep]) -> list[list[tuple[int, SavedPlanStep]]]:
    """The steps (numbered from 1, in plan order) in rows by depth. A prerequisite not
    met before its step (only in a damaged file: a plan lists prerequisites first)
    counts as depth 0, so that no loop can come of it."""
    depth: dict[str, int] = {}
    rows: dict[int, list[tuple[int, SavedPlanStep]]] = {}
    for number, step in enumerate(steps, start=1):
        depth[step.id] = max((depth.get(dep, 0) + 1 for dep in step.depends_on), default=0)
        rows.setdefault(depth[step.id], []).append((number, step))
    return [rows[level] for level in sorted(rows)]


def _sized(number: int, step: SavedPlanStep, failed: frozenset[str]) -> Box:
    lines = (f"{number}. {step.element_path}", ", ".join(step.fields), made_by(step))
    return Box(
        step_id=step.id,
        x=0.0,
        y=0.0,
        width=max(len(line) for line in lines) * CHAR_WIDTH + 2 * _PAD_X,
        height=len(lines) * LINE_HEIGHT + 2 * _PAD_Y,
        lines=lines,
        failed=step.id in failed,
    )


def _row_width(row: Sequence[Box]) -> float:
    return sum(box.width for box in row) + _GAP_X * (len(row) - 1)


def _edge(start: Box, end: Box) -> Edge:
    return Edge(
        start=start.step_id,
        end=end.step_id,
        x1=start.x + start.width / 2,
        y1=start.y + start.height,
        x2=end.x + end.width / 2,
        y2=end.y,
    )


def waits_for(steps: Sequence[SavedPlanStep]) -> Mapping[str, str]:
    """What each step waits for, as the numbers of its prerequisites in plan order (from
    1), by id; a prerequisite that is not a step of the plan (a damaged file) by its id."""
    numbers = {step.id: str(number) for number, step in enumerate(steps, start=1)}
    return {step.id: ", ".join(numbers.get(dep, dep) for dep in step.depends_on) for step in steps}
