"""Dataset benchmark: what running a tree over many rows costs per row.

The workload is the run benchmark's report tree (``run_benchmark.py``) on
``FakeChatModel`` at zero latency: each row is a small document (S sections x P
paragraphs, S*P + S + 1 calls). Three ways alternate, in one process:

- ``run_many``: the rows as a dataset (``RunStructure.run_many``);
- ``gather``: what a user would write by hand, ``asyncio.gather`` of one ``arun`` per row
  (every row at once, each with its own ``max_concurrency``);
- ``one run``: the same number of calls as one big document in a single run, the
  baseline for what the calls themselves cost.

With ``--ray``, the rows also run on a local Ray instance (``langtree.ray``, the
``langtree-llm[ray]`` extra), timed by wall clock since the work happens in other processes.
See benchmarks/README.md, "Dataset benchmark".
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from collections.abc import Callable

from run_benchmark import TaskReport, document, langtree_structure, machine

from langtree.testing import FakeChatModel


def rows(count: int, sections: int, paragraphs: int) -> list[dict[object, object]]:
    return [{TaskReport: document(sections, paragraphs)} for _ in range(count)]


def with_run_many(data: list[dict[object, object]], concurrency: int) -> int:
    model = FakeChatModel()
    results = list(langtree_structure(model).run_many(data, max_concurrency=concurrency))
    assert all(row.ok for row in results)
    return len(model.calls)


def with_gather(data: list[dict[object, object]], concurrency: int) -> int:
    model = FakeChatModel()
    tree = langtree_structure(model)

    async def everything() -> None:
        await asyncio.gather(*(tree.arun(row, max_concurrency=concurrency) for row in data))

    asyncio.run(everything())
    return len(model.calls)


def with_one_run(doc: dict[str, object], concurrency: int) -> int:
    model = FakeChatModel()
    langtree_structure(model).run({TaskReport: doc}, max_concurrency=concurrency)
    return len(model.calls)


def timed(work: Callable[[], int]) -> tuple[float, float, int]:
    """CPU and wall seconds of ``work``, and the calls it made."""
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    calls = work()
    return time.process_time() - cpu, time.perf_counter() - wall, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--sections", type=int, default=2)
    parser.add_argument("--paragraphs", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ray", action="store_true", help="also run the rows on local Ray")
    args = parser.parse_args()

    data = rows(args.rows, args.sections, args.paragraphs)
    per_row = args.sections * args.paragraphs + args.sections + 1
    big = document(args.rows * args.sections, args.paragraphs)
    kinds: dict[str, Callable[[], int]] = {
        "run_many": lambda: with_run_many(data, args.concurrency),
        "gather": lambda: with_gather(data, args.concurrency),
        "one run": lambda: with_one_run(big, args.concurrency),
    }
    with_one_run(document(2, 2), args.concurrency)  # warm-up: imports, token encoding
    best: dict[str, tuple[float, float, int]] = {}
    for _ in range(args.repeat):
        for kind, work in kinds.items():
            measured = timed(work)
            if kind not in best or measured[0] < best[kind][0]:
                best[kind] = measured

    print("## Dataset benchmark results\n")
    print("\n".join(machine()))
    print(
        f"\nWorkload: {args.rows:,} rows of S={args.sections} x P={args.paragraphs} "
        f"({per_row} calls a row), zero latency, max_concurrency={args.concurrency}; best "
        f"of {args.repeat} alternating runs.\n"
    )
    print("| way | calls | CPU per call (µs) | ÷ one run | rows per second (wall) |")
    print("|---|---:|---:|---:|---:|")
    baseline = best["one run"][0] / best["one run"][2]
    for kind, (cpu, wall, calls) in best.items():
        per_call = cpu / calls
        rate = f"{args.rows / wall:,.0f}" if kind != "one run" else "–"
        print(
            f"| {kind} | {calls:,} | {per_call * 1e6:,.0f} | {per_call / baseline:.2f}× | {rate} |"
        )
    if args.ray:
        print(ray_line(data, args.concurrency))


def ray_line(data: list[dict[object, object]], concurrency: int) -> str:
    """The same rows on a local Ray instance (wall clock; the work is in other processes)."""
    import ray  # the langtree-llm[ray] extra

    from langtree.ray import run_on_ray

    ray.init(num_cpus=2, include_dashboard=False)
    try:
        started = time.perf_counter()
        results = run_on_ray(make_tree, data, max_concurrency=concurrency)
        wall = time.perf_counter() - started
    finally:
        ray.shutdown()
    assert all(row.ok for row in results)
    rate = len(data) / wall
    return f"\nRay (local, 2 CPUs): {len(data):,} rows in {wall:.2f} s wall, {rate:,.0f} rows/s."


def make_tree():  # type: ignore[no-untyped-def]
    """The tree, built in each Ray worker."""
    return langtree_structure(FakeChatModel())


if __name__ == "__main__":
    main()
