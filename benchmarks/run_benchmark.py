"""Run benchmark: LangTree's runtime against the same pipeline written by hand.

The workload is the issue's reference "report": a document of S sections x P paragraphs
supplied as input; one call per paragraph producing {summary, sentiment}, one per section
producing its summary from its paragraph summaries, one for the report producing
{title, abstract}: S*P + S + 1 calls, critical path 3. It is written twice, as a LangTree
tree run by ``RunStructure.arun`` and by hand in langchain-core (``prompt |
model.with_structured_output(...)``, one ``abatch`` per stage), both against
``FakeChatModel``. Runs of the two alternate. See benchmarks/README.md, "Run benchmark".
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import datetime
import gc
import io
import json
import math
import pstats
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from langchain_core.prompts import ChatPromptTemplate
from parse_benchmark import machine_lines
from pydantic import BaseModel, Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.testing import FakeChatModel

# --- the LangTree tree -------------------------------------------------------------------


class Paragraph(TreeNode):
    """
    ! together
    Summarise one paragraph and judge its tone.
    """

    text: str = Field(description="The paragraph as written.")
    summary: str = Field(description="One sentence that captures the paragraph.")
    sentiment: str = Field(description="positive, neutral or negative.")


class Section(TreeNode):
    """Summarise one section of the report from its paragraph summaries."""

    heading: str = Field(description="The section's heading.")
    paragraphs: list[Paragraph] = Field(default=[], description="The section's paragraphs.")
    summary: str = Field(description="Two sentences on the section's argument.")


class TaskReport(TreeNode):
    """You are summarising a technical report for a busy reader."""

    sections: list[Section] = Field(
        default=[],
        description="""
        The report's sections, in order.

        ! @each[sections]->task.abstract@{{value.section_summaries=sections.summary}}*
        """,
    )


class TaskAbstract(TreeNode):
    """
    ! together
    Write the report's title and abstract from its section summaries.
    """

    section_summaries: list[str] = Field(default=[], description="One summary per section.")
    title: str = Field(description="A title of at most ten words.")
    abstract: str = Field(description="One paragraph for the reader.")


def document(sections: int, paragraphs: int) -> dict[str, object]:
    """The input document: headings and paragraph texts."""
    return {
        "sections": [
            {
                "heading": f"Section {s + 1}",
                "paragraphs": [
                    {"text": f"Paragraph {p + 1} of section {s + 1}: the figures moved again."}
                    for p in range(paragraphs)
                ],
            }
            for s in range(sections)
        ]
    }


def langtree_structure(model: FakeChatModel) -> RunStructure:
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskReport)
    structure.add(TaskAbstract)
    structure.validate()
    return structure


async def run_langtree(model: FakeChatModel, doc: dict[str, object], concurrency: int) -> int:
    structure = langtree_structure(model)
    result = await structure.arun({TaskReport: doc}, max_concurrency=concurrency)
    assert result[TaskAbstract].title
    return len(result.trace)


# --- the same by hand in langchain-core --------------------------------------------------


class ParagraphOut(BaseModel):
    summary: str = Field(description="One sentence that captures the paragraph.")
    sentiment: str = Field(description="positive, neutral or negative.")


class SectionOut(BaseModel):
    summary: str = Field(description="Two sentences on the section's argument.")


class ReportOut(BaseModel):
    title: str = Field(description="A title of at most ten words.")
    abstract: str = Field(description="One paragraph for the reader.")


SYSTEM = "You are summarising a technical report for a busy reader."
PARAGRAPH = ChatPromptTemplate.from_messages(
    [
        ("system", SYSTEM),
        ("human", "Section: {heading}\n\nSummarise this paragraph and judge its tone:\n\n{text}"),
    ]
)
SECTION = ChatPromptTemplate.from_messages(
    [
        ("system", SYSTEM),
        ("human", "Summarise section {heading} from its paragraph summaries:\n\n{summaries}"),
    ]
)
REPORT = ChatPromptTemplate.from_messages(
    [("system", SYSTEM), ("human", "Write a title and an abstract from:\n\n{summaries}")]
)


async def run_by_hand(model: FakeChatModel, doc: dict[str, object], concurrency: int) -> int:
    config = {"max_concurrency": concurrency}
    sections = doc["sections"]
    assert isinstance(sections, list)
    paragraph_chain = PARAGRAPH | model.with_structured_output(ParagraphOut)
    section_chain = SECTION | model.with_structured_output(SectionOut)
    report_chain = REPORT | model.with_structured_output(ReportOut)

    requests = [
        {"heading": section["heading"], "text": paragraph["text"]}
        for section in sections
        for paragraph in section["paragraphs"]
    ]
    outs = await paragraph_chain.abatch(requests, config)
    section_requests, start = [], 0
    for section in sections:
        mine = outs[start : start + len(section["paragraphs"])]
        start += len(section["paragraphs"])
        summaries = "\n".join(f"- {out.summary} ({out.sentiment})" for out in mine)
        section_requests.append({"heading": section["heading"], "summaries": summaries})
    section_outs = await section_chain.abatch(section_requests, config)
    summaries = "\n".join(f"- {out.summary}" for out in section_outs)
    report = await report_chain.ainvoke({"summaries": summaries})
    assert report.title
    return len(requests) + len(section_requests) + 1


RUNNERS = {"langtree": run_langtree, "by hand": run_by_hand}

# --- measurements ------------------------------------------------------------------------


def jitter(seed: int) -> Callable[[object], float]:
    """Uniform 10-200 ms, drawn in call order from a seeded generator."""
    rng = random.Random(seed)
    return lambda _request: rng.uniform(0.010, 0.200)


def one_run(kind: str, latency: object, doc: dict[str, object], concurrency: int):
    model = FakeChatModel(latency=latency)
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    calls = asyncio.run(RUNNERS[kind](model, doc, concurrency))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert calls == len(model.calls), (kind, calls, len(model.calls))
    return calls, cpu, wall


def alternate(make_latency, doc, concurrency, repeat):
    """Best CPU and wall time of each kind over `repeat` alternating runs."""
    best: dict[str, tuple[int, float, float]] = {}
    for _ in range(repeat):
        for kind in RUNNERS:
            calls, cpu, wall = one_run(kind, make_latency(), doc, concurrency)
            old = best.get(kind)
            best[kind] = (
                calls,
                min(cpu, old[1]) if old else cpu,
                min(wall, old[2]) if old else wall,
            )
    return best


def peak_rss(kind: str, sections: int, paragraphs: int) -> int:
    """ru_maxrss (KiB) of a fresh process that runs one size, read from its parent."""
    code = (
        "import resource, subprocess, sys;"
        f"subprocess.run([sys.executable, {__file__!r}, '--child', {kind!r},"
        f" '--sections', '{sections}', '--paragraphs', '{paragraphs}'], check=True);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


@dataclass(frozen=True, slots=True)
class Measured:
    """One run at zero latency in a fresh process: its calls, CPU and peak RSS."""

    calls: int
    cpu: float
    rss_kib: int

    @property
    def cpu_per_call_us(self) -> float:
        return self.cpu / self.calls * 1e6


def sections_for(calls: int, paragraphs: int) -> int:
    """The S whose document makes about ``calls`` calls (S*P + S + 1)."""
    return max(1, round((calls - 1) / (paragraphs + 1)))


def measure_child(kind: str, sections: int, paragraphs: int, concurrency: int) -> None:
    """In a fresh process: one small warm-up run (imports, token encoding), then the
    measured one; prints it as JSON with this process's peak RSS."""
    one_run(kind, 0.0, document(1, 2), concurrency)
    calls, cpu, _ = one_run(kind, 0.0, document(sections, paragraphs), concurrency)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"calls": calls, "cpu": cpu, "rss_kib": rss}))


def measure(kind: str, sections: int, paragraphs: int, concurrency: int) -> Measured:
    """One run measured in a fresh process, so that its peak RSS is its own."""
    command = [sys.executable, __file__, "--measure", kind]
    command += ["--sections", str(sections), "--paragraphs", str(paragraphs)]
    command += ["--concurrency", str(concurrency)]
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    return Measured(**json.loads(out.stdout.splitlines()[-1]))


def scale(sizes: list[int], paragraphs: int, concurrency: int, repeat: int) -> None:
    """CPU per call and peak RSS at each size, LangTree against the hand-written
    version, each run in its own process; runs alternate, the best of each is kept."""
    print(
        "| calls | CPU per call LangTree (µs) | by hand (µs) | LangTree ÷ by hand | "
        "peak RSS LangTree (MiB) | by hand (MiB) | LangTree ÷ by hand |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        sections = sections_for(size, paragraphs)
        runs: dict[str, list[Measured]] = {kind: [] for kind in RUNNERS}
        for _ in range(repeat):
            for kind in RUNNERS:
                runs[kind].append(measure(kind, sections, paragraphs, concurrency))
        lt = min(run.cpu_per_call_us for run in runs["langtree"])
        bh = min(run.cpu_per_call_us for run in runs["by hand"])
        lt_rss = min(run.rss_kib for run in runs["langtree"]) / 1024
        bh_rss = min(run.rss_kib for run in runs["by hand"]) / 1024
        print(
            f"| {runs['langtree'][0].calls:,} | {lt:,.0f} | {bh:,.0f} | **{lt / bh:.2f}×** | "
            f"{lt_rss:.1f} | {bh_rss:.1f} | {lt_rss / bh_rss:.2f}× |",
            flush=True,
        )


def machine() -> list[str]:
    """The date, then the machine, interpreter, load and revision (shared with the other
    benchmarks)."""
    return [f"- Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC", *machine_lines()]


def profile(doc, concurrency: int, top: int) -> None:
    """cProfile of one LangTree run after a small warm-up run: the top functions by
    cumulative time, then by own time (where the collector's pauses land too)."""
    one_run("langtree", 0.0, document(1, 2), concurrency)
    model = FakeChatModel()
    gc.collect()
    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(run_langtree(model, doc, concurrency))
    profiler.disable()
    for order in ("cumulative", "tottime"):
        stream = io.StringIO()
        pstats.Stats(profiler, stream=stream).sort_stats(order).print_stats(top)
        print("```text\n" + stream.getvalue().strip() + "\n```")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, default=50)
    parser.add_argument("--paragraphs", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.050, help="seconds per call")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--cpu-sections", type=int, default=10, help="S for the CPU figure")
    parser.add_argument("--profile", action="store_true", help="cProfile one LangTree run")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        metavar="CALLS",
        help="only CPU per call and peak RSS at about these numbers of calls",
    )
    parser.add_argument("--measure", choices=[*RUNNERS], help=argparse.SUPPRESS)
    parser.add_argument("--child", choices=[*RUNNERS, "none"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    n_s, n_p, conc, lat = args.sections, args.paragraphs, args.concurrency, args.latency

    if args.child:
        if args.child != "none":
            one_run(args.child, 0.0, document(n_s, n_p), conc)
        return
    if args.measure:
        measure_child(args.measure, n_s, n_p, conc)
        return
    if args.profile:
        profile(document(n_s, n_p), conc, args.top)
        return
    if args.sizes:
        print("## Run benchmark at scale\n")
        print("\n".join(machine()))
        print(f"\nP={n_p}, C={conc}, zero latency; best of {args.repeat} alternating runs.\n")
        scale(args.sizes, n_p, conc, args.repeat)
        return

    print("## Run benchmark results\n")
    print("\n".join(machine()))
    calls = n_s * n_p + n_s + 1
    print(
        f"\nWorkload: S={n_s} sections x P={n_p} paragraphs = {calls:,} calls, critical path 3; "
        f"C={conc}; best of {args.repeat} alternating runs.\n"
    )

    cpu_doc = document(args.cpu_sections, n_p)
    one_run("langtree", 0.0, cpu_doc, conc)  # warm-up: imports, token encoding
    one_run("by hand", 0.0, cpu_doc, conc)
    zero = alternate(lambda: 0.0, cpu_doc, conc, args.repeat)
    fixed = alternate(lambda: lat, document(n_s, n_p), conc, args.repeat)
    jittered = alternate(lambda: jitter(args.seed), document(n_s, n_p), conc, args.repeat)

    stages = [n_s * n_p, n_s, 1]
    lower = max(3 * lat, calls / conc * lat)
    staged = sum(math.ceil(n / conc) for n in stages) * lat
    print("| figure | LangTree | by hand | LangTree ÷ by hand |")
    print("|---|---:|---:|---:|")
    lt, bh = zero["langtree"], zero["by hand"]
    print(
        f"| CPU per call, zero latency, S={args.cpu_sections} ({lt[0]} calls) (ms) | "
        f"{lt[1] / lt[0] * 1e3:.3f} | {bh[1] / bh[0] * 1e3:.3f} | "
        f"**{(lt[1] / lt[0]) / (bh[1] / bh[0]):.2f}×** |"
    )
    lt, bh = fixed["langtree"], fixed["by hand"]
    print(
        f"| wall, {lat * 1e3:.0f} ms latency (s) | {lt[2]:.3f} | {bh[2]:.3f} | "
        f"{lt[2] / bh[2]:.2f}× |"
    )
    print(f"| — ÷ lower bound {lower:.3f} s | {lt[2] / lower:.2f}× | {bh[2] / lower:.2f}× | |")
    print(f"| — ÷ staged bound {staged:.3f} s | {lt[2] / staged:.2f}× | {bh[2] / staged:.2f}× | |")
    print(f"| CPU of that run (s) | {lt[1]:.3f} | {bh[1]:.3f} | {lt[1] / bh[1]:.2f}× |")
    lt, bh = jittered["langtree"], jittered["by hand"]
    print(
        f"| wall, jittered 10–200 ms (s) | {lt[2]:.3f} | {bh[2]:.3f} | **{lt[2] / bh[2]:.2f}×** |"
    )
    rss_none = peak_rss("none", n_s, n_p)
    rss = {kind: peak_rss(kind, n_s, n_p) for kind in RUNNERS}
    print(
        f"| peak RSS, fresh process, zero latency (MiB) | {rss['langtree'] / 1024:.1f} | "
        f"{rss['by hand'] / 1024:.1f} | {rss['langtree'] / rss['by hand']:.2f}× |"
    )
    print(
        f"\nImports alone: {rss_none / 1024:.1f} MiB. Lower bound = max(3 × latency, "
        f"calls ÷ C × latency); staged bound = Σ ceil(stage calls ÷ C) × latency."
    )


if __name__ == "__main__":
    main()
