"""An order that respects every "waits for" edge, and the cycles that prevent one.

The plan orders its steps with it (`langtree.structure.planning._plan`), and the commands are
checked with it for cycles among themselves (`langtree.structure.commands._command_keys`).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Hashable, Iterable, Mapping
from typing import TypeVar

__all__ = ["topological_order"]

_Id = TypeVar("_Id", bound=Hashable)


def topological_order(
    ids: Iterable[_Id], waits_for: Mapping[_Id, Iterable[_Id]]
) -> tuple[list[_Id], list[list[_Id]]]:
    """Kahn's algorithm, ties in the order of ``ids``; what is left over holds the cycles.

    Args:
        ids: Everything to order, in the order ties are broken.
        waits_for: For each id, the ids that must come before it (others are ignored).

    Returns:
        The ids that can be ordered, in order, and one cycle for each group of the
        others that wait for each other (each cycle's ids in waiting order).

    Examples:
        >>> topological_order(["a", "b", "c"], {"a": ["b"]})
        (['b', 'c', 'a'], [])
        >>> topological_order([1, 2, 3], {1: [2], 2: [1], 3: [1]})
        ([], [[1, 2]])
    """
    ids = list(ids)
    known = set(ids)
    # Edges to ids outside ``ids`` are ignored: what is not being ordered is not waited
    # for.
    waiting = {ident: set(waits_for.get(ident, ())) & known for ident in ids}
    dependants: dict[_Id, list[_Id]] = defaultdict(list)
    for ident, prerequisites in waiting.items():
        for prerequisite in prerequisites:
            dependants[prerequisite].append(ident)
    ready = deque(ident for ident in ids if not waiting[ident])
    order: list[_Id] = []
    while ready:
        ident = ready.popleft()
        order.append(ident)
        for dependant in dependants[ident]:
            waiting[dependant].discard(ident)
            if not waiting[dependant]:
                ready.append(dependant)
    done = set(order)
    left = [ident for ident in ids if ident not in done]
    return order, _cycles(left, waiting)


def _cycles(left: list[_Id], waiting: Mapping[_Id, set[_Id]]) -> list[list[_Id]]:
    """One cycle per group of ids that wait on each other."""
    position = {ident: index for index, ident in enumerate(left)}
    cycles: list[list[_Id]] = []
    seen: set[_Id] = set()
    for start in left:
        if start in seen:
            continue
        path: list[_Id] = []
        current = start
        while current not in path:
            path.append(current)
            # Every id left waits for another one left; the first one in ``ids``.
            current = min((p for p in waiting[current] if p in position), key=position.__getitem__)
        cycle = path[path.index(current) :]
        seen.update(path)
        # A walk from another id of a cycle already found meets the same ids: one report
        # per cycle.
        if not any(set(cycle) == set(known) for known in cycles):
            cycles.append(cycle)
    return cycles
