"""The tree a run's page shows: each task, its nodes down to every list element, and at
each node its values (with what wrote them), its step instances (with their calls), its
transforms, and what failed or was skipped there.

Node instances are known by their paths (``task.report.sections[1]``); a value's field
path is its node's path, a dot and the field (`langtree.runtime.observe._provenance`), so the
tree is put together from the paths alone, with every ancestor of a path in it even
when nothing was called or written there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import count
from typing import Literal, TypeVar

from langtree.runtime.page._saved import (
    SavedCall,
    SavedError,
    SavedRun,
    SavedSkip,
    SavedTransform,
    SavedWrite,
)

__all__ = ["Failure", "Instance", "NodeView", "RunTree", "TaskView", "Value", "run_tree"]

InstanceStatus = Literal["ok", "retried", "failed"]

_DIGITS = re.compile(r"(\d+)")

_Record = TypeVar("_Record", SavedTransform, SavedError, SavedSkip)


@dataclass(frozen=True, slots=True, kw_only=True)
class Instance:
    """One step instance (one sample of it, for a resampled step) and its calls.

    Attributes:
        anchor: The page's id of the instance.
        call: The journal's key of the call (``None`` for a saved result).
        calls: Its calls in the order they finished: the first attempt, then retries.
    """

    anchor: str
    step_id: str
    node_path: str
    sample: int
    call: str | None
    calls: tuple[SavedCall, ...]

    @property
    def status(self) -> InstanceStatus:
        """``failed``: its last call gave no accepted answer; ``retried``: it took
        several calls; ``ok``: one call."""
        if self.calls[-1].error is not None:
            return "failed"
        return "retried" if len(self.calls) > 1 else "ok"

    @property
    def latency(self) -> float:
        """Seconds its calls took together."""
        return sum(call.latency for call in self.calls)


@dataclass(frozen=True, slots=True, kw_only=True)
class Value:
    """A field's value and every write of it, newest (the value held) first."""

    field: str
    path: str
    writes: tuple[SavedWrite, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeView:
    """One node instance and what happened there.

    Attributes:
        depth: How far below its task it lies (0: the task's own node).
        failed: Whether something failed or was skipped here or below.
    """

    anchor: str
    path: str
    depth: int
    values: tuple[Value, ...]
    instances: tuple[Instance, ...]
    transforms: tuple[SavedTransform, ...]
    errors: tuple[SavedError, ...]
    skipped: tuple[SavedSkip, ...]
    failed: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskView:
    """A root task: its values as JSON data and its tree of nodes.

    Attributes:
        values: The task's values (``None``: a journal, which keeps none).
        invalid: Why its values do not validate (``None``: they do).
        nodes: Its nodes in tree order, its own node first.
    """

    anchor: str
    tag: str
    values: object
    invalid: str | None
    nodes: tuple[NodeView, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """One entry of the page's list of failures: what failed, and where on the page."""

    anchor: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RunTree:
    """The tasks of a run, and every failure in them."""

    tasks: tuple[TaskView, ...]
    failures: tuple[Failure, ...]
    failed_steps: frozenset[str]


def run_tree(run: SavedRun) -> RunTree:
    """The tree of a run's tasks and nodes, and its failures."""
    return _TreeBuilder(run).build()


def parent_path(path: str) -> str | None:
    """The node a node path lies in (``None`` for a root task, ``task.<name>``).

    Examples:
        >>> parent_path("task.report.sections[1]")
        'task.report'
        >>> parent_path("task.report") is None
        True
    """
    head, dot, _ = path.rpartition(".")
    return head if dot and "." in head else None


def natural_key(path: str) -> tuple[str | int, ...]:
    """A sort key that puts ``items[2]`` before ``items[10]``."""
    parts = _DIGITS.split(path)
    return tuple(int(part) if index % 2 else part for index, part in enumerate(parts))


class _TreeBuilder:
    def __init__(self, run: SavedRun) -> None:
        self.run = run
        self.numbers = count(1)
        self.instances = _instances(run.trace)
        self.values = _values(run.provenance)
        self.transforms = _by_node(run.transforms)
        self.errors = _by_node(run.errors)
        self.skipped = _by_node(run.skipped)
        self.children = _children(
            [*self.instances, *self.values, *self.transforms, *self.errors, *self.skipped]
        )

    def build(self) -> RunTree:
        tags = dict.fromkeys([*self.run.tasks, *self.run.invalid, *self.children.get(None, [])])
        tasks = tuple(self._task(tag) for tag in tags)
        return RunTree(
            tasks=tasks,
            failures=tuple(_failures(tasks)),
            failed_steps=frozenset(_failed_steps(tasks)),
        )

    def _task(self, tag: str) -> TaskView:
        anchor = f"t{next(self.numbers)}"
        values = self.run.tasks.get(tag, self.run.partial.get(tag))
        return TaskView(
            anchor=anchor,
            tag=tag,
            values=values,
            invalid=self.run.invalid.get(tag),
            nodes=self._nodes(tag),
        )

    def _nodes(self, tag: str) -> tuple[NodeView, ...]:
        """The task's nodes in tree order; a node has failed when something failed in
        it or in a node below it, so that is settled from the deepest nodes up."""
        order = _tree_order(tag, self.children)
        failed: dict[str, bool] = {}
        for path, _ in reversed(order):
            below = any(failed[child] for child in self.children.get(path, []))
            failed[path] = below or self._failed_here(path)
        return tuple(self._node(path, depth, failed[path]) for path, depth in order)

    def _failed_here(self, path: str) -> bool:
        calls = self.instances.get(path, [])
        return bool(
            self.errors.get(path)
            or self.skipped.get(path)
            or any(group[-1].error is not None for group in calls)
        )

    def _node(self, path: str, depth: int, failed: bool) -> NodeView:
        return NodeView(
            anchor=f"n{next(self.numbers)}",
            path=path,
            depth=depth,
            values=tuple(self.values.get(path, [])),
            instances=tuple(self._instance(calls) for calls in self.instances.get(path, [])),
            transforms=tuple(self.transforms.get(path, [])),
            errors=tuple(self.errors.get(path, [])),
            skipped=tuple(self.skipped.get(path, [])),
            failed=failed,
        )

    def _instance(self, calls: tuple[SavedCall, ...]) -> Instance:
        first = calls[0]
        return Instance(
            anchor=f"i{next(self.numbers)}",
            step_id=first.step_id,
            node_path=first.node_path,
            sample=first.sample,
            call=first.call,
            calls=calls,
        )


def _instances(trace: Sequence[SavedCall]) -> dict[str, list[tuple[SavedCall, ...]]]:
    """The calls of each step instance, by node path, instances in the order of their
    first calls."""
    calls: dict[tuple[str, str, int, str | None], list[SavedCall]] = {}
    for call in trace:
        calls.setdefault((call.step_id, call.node_path, call.sample, call.call), []).append(call)
    by_node: dict[str, list[tuple[SavedCall, ...]]] = {}
    for group in calls.values():
        by_node.setdefault(group[0].node_path, []).append(tuple(group))
    return by_node


def _values(writes: Sequence[SavedWrite]) -> dict[str, list[Value]]:
    """Each field's value with its writes newest first, by node path, fields in the order
    of their first writes."""
    by_path: dict[str, list[SavedWrite]] = {}
    for write in writes:
        by_path.setdefault(write.path, []).append(write)
    by_node: dict[str, list[Value]] = {}
    for path, history in by_path.items():
        node, _, name = path.rpartition(".")
        value = Value(field=name, path=path, writes=tuple(reversed(history)))
        by_node.setdefault(node, []).append(value)
    return by_node


def _by_node(records: Iterable[_Record]) -> dict[str, list[_Record]]:
    by_node: dict[str, list[_Record]] = {}
    for record in records:
        by_node.setdefault(record.node_path, []).append(record)
    return by_node


def _children(paths: Iterable[str]) -> Mapping[str | None, list[str]]:
    """The nodes below each node (``None``: the root tasks), every ancestor of a path
    included, each once, in the order first met."""
    children: dict[str | None, dict[str, None]] = {}
    for path in paths:
        node: str | None = path
        while node is not None:
            parent = parent_path(node)
            if node in children.setdefault(parent, {}):
                break
            children[parent][node] = None
            node = parent
    return {parent: list(nodes) for parent, nodes in children.items()}


def _tree_order(tag: str, children: Mapping[str | None, list[str]]) -> list[tuple[str, int]]:
    """The paths below a task and their depths, each before the paths below it, siblings
    in natural order (without recursion: a tree may be deeper than Python's stack)."""
    order: list[tuple[str, int]] = []
    stack = [(tag, 0)]
    while stack:
        path, depth = stack.pop()
        order.append((path, depth))
        below = sorted(children.get(path, []), key=natural_key, reverse=True)
        stack.extend((child, depth + 1) for child in below)
    return order


def _failures(tasks: Sequence[TaskView]) -> Iterable[Failure]:
    for task in tasks:
        if task.invalid is not None:
            yield Failure(anchor=task.anchor, text=f"{task.tag} does not validate")
        for node in task.nodes:
            for instance in node.instances:
                if instance.status == "failed":
                    yield Failure(
                        anchor=instance.anchor, text=f"{instance.step_id} at {node.path} failed"
                    )
            for skip in node.skipped:
                yield Failure(
                    anchor=node.anchor,
                    text=f"{skip.step_id} at {node.path} skipped, because of {skip.because}",
                )


def _failed_steps(tasks: Sequence[TaskView]) -> Iterable[str]:
    for task in tasks:
        for node in task.nodes:
            yield from (i.step_id for i in node.instances if i.status == "failed")
            yield from (error.step_id for error in node.errors)
            yield from (skip.step_id for skip in node.skipped)
