"""Token benchmark: the input tokens of the report workload, LangTree against the same
pipeline written by hand, with the cost of assembling and counting the prompts.

Run by hand, not part of the test suite::

    .venv/bin/python benchmarks/tokens_benchmark.py [--sections 50] [--paragraphs 20]

The workload and the hand-written version are the run benchmark's (``run_benchmark.py``:
S sections x P paragraphs, S*P + S + 1 calls on ``FakeChatModel``). LangTree runs it four
ways: as the run benchmark writes it; with the Section declaring its context
(``! @context[heading, paragraphs.*.summary]``: the section's step sees its heading and
its paragraphs' summaries, which is what the hand-written section prompt holds); with
that declaration and ``{"instructions": "system"}``; and with that declaration and the
lean settings (``"outline": "root"``, ``"field_descriptions": "schema"`` and
``LEAN_TEMPLATE``: the texts a hand-written prompt holds).

A call's input tokens are its messages' text and its tool (name and JSON schema, compact),
counted with ``cl100k_base`` the same way for every version; what each provider adds
around messages and tools is left out, as it is the same for both. *Uncached* tokens are
what a provider that caches repeated prompt prefixes bills at the full rate: a call's
parts in the order providers read them (tool schema, system message, human message) are
cached when the same parts up to them were sent by an earlier call of the run; the rest
is uncached. Providers cache only prefixes of 1,024 tokens and more, which the report's
prompts do not reach: the uncached figure is what longer instructions would pay.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run_benchmark
from run_benchmark import TaskAbstract, TaskReport, document, machine, run_by_hand

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.prompts import LEAN_TEMPLATE, count_tokens
from langtree.testing import FakeChatModel, FakeRequest

# --- the tree with a declared context ----------------------------------------------------


def declared_tree() -> tuple[type[TreeNode], type[TreeNode]]:
    """The run benchmark's tree, its Section declaring what its step's context holds."""

    class Section(run_benchmark.Section):
        """
        ! @context[heading, paragraphs.*.summary]
        Summarise one section of the report from its paragraph summaries.
        """

    class TaskReport(TreeNode):
        """You are summarising a technical report for a busy reader."""

        sections: list[Section] = Field(
            default=[],
            description="""
            The report's sections, in order.

            ! @each[sections]->task.abstract@{{value.section_summaries=sections.summary}}*
            """,
        )

    return TaskReport, TaskAbstract


@dataclass(frozen=True, slots=True)
class Version:
    """One way of running the workload."""

    name: str
    tree: Callable[[], tuple[type[TreeNode], type[TreeNode]]] | None
    config: dict[str, object] | None = None

    def structure(self, model: FakeChatModel | None = None) -> RunStructure:
        assert self.tree is not None
        provider = LLMProvider({"default": model}) if model is not None else None
        structure = RunStructure(self.config, provider=provider)
        for task in self.tree():
            structure.add(task)
        structure.validate()
        return structure

    async def run(self, model: FakeChatModel, doc: dict[str, object]) -> None:
        if self.tree is None:
            await run_by_hand(model, doc, 256)
            return
        report, _ = self.tree()
        await self.structure(model).arun({report: doc}, max_concurrency=256)


BY_HAND = Version("by hand", None)
VERSIONS = (
    Version("LangTree", lambda: (TaskReport, TaskAbstract)),
    Version("LangTree, declared context", declared_tree),
    Version(
        "LangTree, declared context, instructions in the system message",
        declared_tree,
        {"instructions": "system"},
    ),
    Version(
        "LangTree, declared context, lean prompts",
        declared_tree,
        {"outline": "root", "field_descriptions": "schema", "prompt_template": LEAN_TEMPLATE},
    ),
)

# --- counting what was sent ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tokens:
    """A run's calls and input tokens."""

    calls: int
    sent: int
    uncached: int


def parts(call: FakeRequest) -> list[str]:
    """A call's parts in the order providers read them: the tool (its name and its
    arguments' schema), then each message's text."""
    tool = {**call.schema, "title": call.tool_name} if call.schema else None
    schema = json.dumps(tool, separators=(",", ":")) if tool else ""
    return [schema, *(message.text for message in call.messages)]


def tally(calls: Iterable[FakeRequest]) -> Tokens:
    """Input tokens sent, and those a provider caching repeated prefixes bills in full."""
    seen: set[tuple[str, ...]] = set()
    count = sent = uncached = 0
    for call in calls:
        count += 1
        prefix: tuple[str, ...] = ()
        for part in parts(call):
            prefix += (part,)
            tokens = count_tokens(part).count
            sent += tokens
            if prefix not in seen:
                uncached += tokens
                seen.add(prefix)
    return Tokens(count, sent, uncached)


def measure_tokens(version: Version, doc: dict[str, object]) -> Tokens:
    model = FakeChatModel(report_usage=True)
    asyncio.run(version.run(model, doc))
    return tally(model.calls)


# --- assembling the prompts ---------------------------------------------------------------


def assembly_ms_per_step(
    version: Version, doc: dict[str, object], repeat: int
) -> tuple[float, float]:
    """Best ms per step prompt of ``prompts()`` without reading a count, and with every
    prompt's count read (each figure the best of ``repeat``)."""
    structure = version.structure()
    report, _ = version.tree() if version.tree else (TaskReport, TaskAbstract)
    inputs = {report: doc}
    structure.prompts(inputs)  # warm-up: caches, and the encoding for the second figure
    plain, counted = [], []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        prompts = structure.prompts(inputs)
        plain.append((time.perf_counter() - start) / len(prompts))
        gc.collect()
        start = time.perf_counter()
        prompts = structure.prompts(inputs)
        sum(prompt.token_count for prompt in prompts)
        counted.append((time.perf_counter() - start) / len(prompts))
    return min(plain) * 1e3, min(counted) * 1e3


# --- memory of a process that never counts ------------------------------------------------


def child(count: bool, sections: int, paragraphs: int) -> None:
    """Run the declared-context workload once on a model that reports its usage (so the
    run needs no count of its own); print the resident size and whether an encoding was
    loaded."""
    from langtree.prompts import _tokens as tokens

    version = VERSIONS[1]
    model = FakeChatModel(report_usage=True)
    report, _ = declared_tree()
    result = version.structure(model).run({report: document(sections, paragraphs)})
    if count:
        sum(record.token_count for record in result.trace)
    # The resident size now, not ru_maxrss: a child inherits its parent's peak through
    # fork and exec, so the benchmark's own memory would hide the child's.
    status = Path("/proc/self/status").read_text()
    now = next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))
    print(json.dumps({"rss_kib": int(now), "encoding_loaded": tokens.encoding_loaded()}))


def measure_child(count: bool, sections: int, paragraphs: int) -> dict[str, object]:
    command = [sys.executable, __file__, "--child", "count" if count else "never"]
    command += ["--sections", str(sections), "--paragraphs", str(paragraphs)]
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


# --- report ------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, default=50)
    parser.add_argument("--paragraphs", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--memory-sections", type=int, default=50, help="S for the memory figure")
    parser.add_argument("--child", choices=["count", "never"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child == "count", args.sections, args.paragraphs)
        return

    doc = document(args.sections, args.paragraphs)
    print("## Token benchmark results\n")
    print("\n".join(machine()))
    calls = args.sections * args.paragraphs + args.sections + 1
    print(f"\nWorkload: S={args.sections} x P={args.paragraphs} = {calls:,} calls.\n")

    hand = measure_tokens(BY_HAND, doc)
    print("| version | calls | input tokens | ÷ by hand | uncached | ÷ by hand |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| by hand | {hand.calls:,} | {hand.sent:,} | 1.00× | {hand.uncached:,} | 1.00× |")
    for version in VERSIONS:
        tokens = measure_tokens(version, doc)
        print(
            f"| {version.name} | {tokens.calls:,} | {tokens.sent:,} | "
            f"**{tokens.sent / hand.sent:.2f}×** | {tokens.uncached:,} | "
            f"{tokens.uncached / hand.uncached:.2f}× |"
        )

    print("\n| version | ms per step prompt, no count read | with every count read |")
    print("|---|---:|---:|")
    for version in VERSIONS:
        plain, counted = assembly_ms_per_step(version, doc, args.repeat)
        print(f"| {version.name} | {plain:.3f} | {counted:.3f} |")

    print(
        f"\n| run of the declared-context version (S={args.memory_sections} x "
        f"P={args.paragraphs}) | RSS at its end (MiB) | encoding loaded |"
    )
    print("|---|---:|---|")
    for name, count in (("reads no count", False), ("reads every call's count", True)):
        figures = measure_child(count, args.memory_sections, args.paragraphs)
        rss = int(str(figures["rss_kib"])) / 1024
        print(f"| {name} | {rss:.1f} | {figures['encoding_loaded']} |")


if __name__ == "__main__":
    main()
