"""Journal benchmark: what recording every answer costs, and how fast a run resumes.

The workload is the run benchmark's report tree (``run_benchmark.py``) on
``FakeChatModel`` at zero latency, so that CPU is all there is to measure. Five kinds of
run alternate: without a journal, recording into a new journal, replaying a complete
journal (the resume of a run that had finished every call), and the same two with a
response cache instead (which looks each call up by key rather than reading the file). A
second part records a journal of about 10,000 calls and times a resume that replays all of them. See
benchmarks/README.md, "Journal benchmark".
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import tempfile
import time
from pathlib import Path

from run_benchmark import TaskAbstract, TaskReport, document, langtree_structure, machine

from langtree.runtime import Journal
from langtree.testing import FakeChatModel

Files = dict[str, Path]
"""The run's ``journal`` and ``cache`` options, when it has them."""


async def run(doc: dict[str, object], files: Files, concurrency: int) -> tuple[int, int]:
    """One run; returns (calls made, answers replayed)."""
    model = FakeChatModel()
    options = dict(files)
    result = await langtree_structure(model).arun(
        {TaskReport: doc},
        max_concurrency=concurrency,
        **options,  # type: ignore[arg-type]
    )
    assert result[TaskAbstract].title
    replayed = sum(record.replayed for record in result.trace)
    assert len(model.calls) + replayed == len(result.trace)
    return len(model.calls), replayed


def timed(doc: dict[str, object], files: Files, concurrency: int) -> tuple[float, float]:
    """CPU and wall seconds of one run."""
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(run(doc, files, concurrency))
    return time.process_time() - cpu, time.perf_counter() - wall


def overhead(doc: dict[str, object], calls: int, concurrency: int, repeat: int, folder: Path):
    """Best CPU per call of each kind over ``repeat`` alternating runs."""
    complete = folder / "complete.sqlite"
    asyncio.run(run(doc, {"journal": complete}, concurrency))
    best: dict[str, float] = {}
    for attempt in range(repeat):
        for kind, files in (
            ("no journal", {}),
            ("recording", {"journal": folder / f"fresh-{attempt}.sqlite"}),
            ("replaying", {"journal": complete}),
            ("cache, recording", {"cache": folder / f"cache-{attempt}.sqlite"}),
            ("cache, replaying", {"cache": complete}),
        ):
            cpu, _ = timed(doc, files, concurrency)
            best[kind] = min(best.get(kind, float("inf")), cpu / calls)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, default=50)
    parser.add_argument("--paragraphs", type=int, default=20)
    parser.add_argument("--resume-sections", type=int, default=100)
    parser.add_argument("--resume-paragraphs", type=int, default=99)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    print("## Journal benchmark results\n")
    print("\n".join(machine()))
    calls = args.sections * args.paragraphs + args.sections + 1
    doc = document(args.sections, args.paragraphs)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        timed(
            doc, {"journal": folder / "warm-up.sqlite"}, args.concurrency
        )  # imports, token encoding
        best = overhead(doc, calls, args.concurrency, args.repeat, folder)
        print(
            f"\nWorkload: S={args.sections} x P={args.paragraphs} = {calls:,} calls, zero "
            f"latency, C={args.concurrency}; best of {args.repeat} alternating runs.\n"
        )
        print("| run | CPU per call (ms) | ÷ no journal |")
        print("|---|---:|---:|")
        for kind, cpu in best.items():
            print(f"| {kind} | {cpu * 1e3:.3f} | {cpu / best['no journal']:.3f}× |")

        big_calls = args.resume_sections * args.resume_paragraphs + args.resume_sections + 1
        big = document(args.resume_sections, args.resume_paragraphs)
        journal = folder / "big.sqlite"
        record_cpu, record_wall = timed(big, {"journal": journal}, args.concurrency)
        started = time.perf_counter()
        opened = Journal(journal)
        opened.close()
        open_seconds = time.perf_counter() - started
        resume_cpu, resume_wall = timed(big, {"journal": journal}, args.concurrency)
        size = journal.stat().st_size + sum(
            path.stat().st_size for path in folder.glob("big.sqlite-*")
        )
    print(
        f"\nResume: a journal of {big_calls:,} calls ({size / 2**20:.1f} MiB). Recording run "
        f"{record_wall:.2f} s wall ({record_cpu:.2f} s CPU); opening the journal "
        f"{open_seconds:.2f} s; the resume that replays every call {resume_wall:.2f} s wall "
        f"({resume_cpu:.2f} s CPU)."
    )


if __name__ == "__main__":
    main()
