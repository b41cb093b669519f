"""Prompt benchmark: assemble every step prompt of a plan of about 1,000 step instances.

Run by hand, not part of the test suite::

    .venv/bin/python benchmarks/prompts_benchmark.py [--nodes 200] [--repeat 7]
    .venv/bin/python benchmarks/prompts_benchmark.py --profile          # cProfile, top 20
    .venv/bin/python benchmarks/prompts_benchmark.py --memory           # peak RSS, fresh processes

The tasks are those of the structure benchmark (``structure_benchmark.build_tasks``: ten
node classes per task, ``@each``/``@all`` from every task to the next, runtime variables,
``llm``/``resample`` and node modifiers). The inputs give every task its topic and the
elements of its lists (sections with their headings, paragraphs, figures), so most prompts
are per element: ``RunStructure.prompts(inputs)`` returns one prompt per step and node
instance, 1,001 of them with the defaults.

The machine is shared and noisy, so every figure is the best of ``--repeat`` runs, with
the garbage collector enabled (``gc.collect()`` before each timed part). ``prompts()``
counts no tokens: a prompt's count is made when first read. Token counting is timed on
its own in the same runs, two ways: reading every prompt's ``token_count`` (each distinct
piece of text counted once, the cache of pieces emptied first), and, as counting went
before, the encoding over each whole text. A baseline measured in the same runs — one
``json.dumps(..., indent=2)`` of a task's inputs per prompt — gives a
machine-independent ratio.

``--memory`` measures peak RSS instead, each figure in fresh processes that assemble the
prompts: without reading a count, with tiktoken imported first (what importing it at the
top of ``langtree.prompts._tokens`` cost), and reading every count.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from parse_benchmark import machine_lines
from structure_benchmark import CollectorClock, build_tasks

import langtree
from langtree import RunStructure, TreeNode
from langtree.prompts import StepPrompt, count_tokens
from langtree.prompts import _tokens as tokens

if TYPE_CHECKING:
    import tiktoken

TARGET_MS_PER_STEP = 1.0
ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------------------------
# The structure and its inputs
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """How many elements the inputs give each task's lists."""

    nodes: int
    sections: int
    paragraphs: int
    figures: int


def task_inputs(shape: Shape) -> dict[str, object]:
    """One task's inputs: its topic, its sections (headings known, so the ``{heading}``
    variable resolves) with empty paragraphs, and empty figures in its appendix. Every
    element's other fields are left to the steps, one prompt per element and step."""
    return {
        "topic": "Tides",
        "sections": [
            {"heading": f"Heading {index}", "paragraphs": [{} for _ in range(shape.paragraphs)]}
            for index in range(shape.sections)
        ],
        "appendix": {"figures": [{} for _ in range(shape.figures)]},
    }


def inputs_for(tasks: Sequence[type[TreeNode]], shape: Shape) -> dict[object, object]:
    """The caller's inputs for every task (a fresh copy: the run must not share them)."""
    return {task: task_inputs(shape) for task in tasks}


def prepared(shape: Shape) -> tuple[RunStructure, list[type[TreeNode]]]:
    """Fresh task classes (nothing cached on a class helps) added to a fresh structure."""
    tasks = build_tasks(shape.nodes)
    structure = RunStructure()
    for task in tasks:
        structure.add(task)
    return structure, tasks


# ---------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Timing:
    """Seconds for one run. ``total`` is ``prompts(inputs)``, which plans again and counts
    no tokens; ``counting`` is reading every prompt's ``token_count`` (pieces counted once);
    ``whole_counting`` the encoding over each whole text; ``baseline`` the ``json.dumps``
    baseline; ``collector`` the garbage collector's time within ``total``."""

    validate: float
    plan: float
    total: float
    counting: float
    whole_counting: float
    baseline: float
    collector: float = 0.0
    full_collections: int = 0


@dataclass(frozen=True)
class Pieces:
    """How the texts were cut: pieces in all, the distinct ones the encoding counted into
    the cache (its misses), those whose counts came from the cache, and those too long
    to be kept, counted each time."""

    total: int
    counted: int
    from_cache: int
    too_long: int


@dataclass(frozen=True)
class Result:
    """Best times, and what the run produced."""

    shape: Shape
    prompts: int
    plan_steps: int
    unknown_elements: int
    mean_chars: float
    mean_tokens: float
    encoding: str
    pieces: Pieces
    best: Timing

    @property
    def counted(self) -> float:
        """Assembly and counting: the best total plus the best counting time."""
        return self.best.total + self.best.counting

    def per_prompt_ms(self, seconds: float) -> float:
        return 1000 * seconds / self.prompts


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    value = action()
    return time.perf_counter() - start, value


def read_counts(prompts: Sequence[StepPrompt]) -> list[int]:
    """Read every prompt's ``token_count`` (the first read counts), the cache of pieces
    emptied first, as in a fresh process. No provider: the model key is the model name,
    and unknown names count with ``cl100k_base``."""
    tokens._cached_piece_tokens.cache_clear()
    return [prompt.token_count for prompt in prompts]


def pieces_read(prompts: Sequence[StepPrompt]) -> Pieces:
    """How `read_counts()` cut the prompts, from the cache's statistics."""
    cut = [tokens._pieces(prompt.text, tokens._CUT_AFTER[prompt.encoding]) for prompt in prompts]
    total = sum(1 for pieces in cut for _ in pieces)
    info = tokens._cached_piece_tokens.cache_info()
    return Pieces(total, info.misses, info.hits, total - info.hits - info.misses)


def count_whole(prompts: Sequence[StepPrompt], encoding: tiktoken.Encoding) -> list[int]:
    """Count every prompt as before the pieces: the encoding over each whole text."""
    return [len(encoding.encode_ordinary(prompt.text)) for prompt in prompts]


def encoding_of(prompts: Sequence[StepPrompt]) -> tiktoken.Encoding:
    """The one encoding that counts every prompt (loaded already)."""
    [name] = {tokens.encoding_name_for(prompt.model) for prompt in prompts}
    encoding = tokens._tokenizer(name).encoding
    if encoding is None:
        raise SystemExit("no encoding loads: the counts are estimates")
    return encoding


def baseline(document: dict[str, object], times: int) -> int:
    """``json.dumps`` of a task's inputs, indented, ``times`` times (pure Python with
    ``indent``, as when a prompt renders a list or node value); returns the characters."""
    return sum(len(json.dumps(document, indent=2, ensure_ascii=False)) for _ in range(times))


def run_once(shape: Shape) -> tuple[Timing, list[StepPrompt], int, Pieces]:
    """One run: validate, plan(inputs), prompts(inputs), then counting both ways and the
    baseline over as many prompts as the run produced.

    Returns:
        The times, the prompts, the number of plan steps and how the texts were cut.
    """
    structure, tasks = prepared(shape)
    validate, _ = _timed(structure.validate)
    plan, steps = _timed(lambda: structure.plan(inputs_for(tasks, shape)))
    inputs = inputs_for(tasks, shape)
    gc.collect()
    with CollectorClock() as collector:
        start = time.perf_counter()
        prompts = structure.prompts(inputs)
        total = time.perf_counter() - start
    encoding = encoding_of(prompts)
    whole_counting, whole = _timed(lambda: count_whole(prompts, encoding))
    counting, counts = _timed(lambda: read_counts(prompts))
    pieces = pieces_read(prompts)
    if counts != whole:
        raise SystemExit("the pieces' counts do not add up to the whole texts' counts")
    base, _ = _timed(lambda: baseline(task_inputs(shape), len(prompts)))
    timing = Timing(
        validate=validate,
        plan=plan,
        total=total,
        counting=counting,
        whole_counting=whole_counting,
        baseline=base,
        collector=collector.seconds,
        full_collections=collector.full_collections,
    )
    return timing, prompts, len(steps.steps), pieces


def check(shape: Shape) -> None:
    """Fail loudly if the structure has warnings."""
    structure, _ = prepared(shape)
    warnings = structure.validate()
    if warnings:
        raise SystemExit("unexpected warnings:\n" + warnings[0].render())


def first_call(shape: Shape) -> tuple[float, float]:
    """Seconds of the process's first token count (the encoding loads) and of the first
    ``prompts()`` after it (first-use costs: caches filled, lazy imports); once per process."""
    load, _ = _timed(lambda: count_tokens("warm up"))
    structure, tasks = prepared(shape)
    structure.validate()
    first, _ = _timed(lambda: structure.prompts(inputs_for(tasks, shape)))
    return load, first


BEST_OF = ("validate", "plan", "total", "counting", "whole_counting", "baseline")


def measure(shape: Shape, repeat: int) -> Result:
    """Best of ``repeat`` runs, each figure at its own best; the collector's share is that
    of the run with the best total."""
    runs = [run_once(shape) for _ in range(repeat)]
    timings = [timing for timing, _, _, _ in runs]
    _, prompts, plan_steps, pieces = runs[-1]
    fastest = min(timings, key=lambda timing: timing.total)
    best = replace(
        fastest, **{name: min(getattr(timing, name) for timing in timings) for name in BEST_OF}
    )
    return Result(
        shape=shape,
        prompts=len(prompts),
        plan_steps=plan_steps,
        unknown_elements=sum("[*]" in prompt.node_path for prompt in prompts),
        mean_chars=sum(len(prompt.text) for prompt in prompts) / len(prompts),
        mean_tokens=sum(prompt.token_count for prompt in prompts) / len(prompts),
        encoding=", ".join(sorted({prompt.encoding for prompt in prompts})),
        pieces=pieces,
        best=best,
    )


def profile(shape: Shape, top: int) -> None:
    """cProfile one warm ``prompts(inputs)`` (after ``validate()``) and print the top
    functions by cumulative and by own time."""
    count_tokens("warm up")
    structure, tasks = prepared(shape)
    structure.validate()
    structure.prompts(inputs_for(tasks, shape))  # warm: template compiled
    structure, tasks = prepared(shape)
    structure.validate()
    inputs = inputs_for(tasks, shape)
    profiler = cProfile.Profile()
    profiler.enable()
    prompts = structure.prompts(inputs)
    profiler.disable()
    print(f"{len(prompts):,} prompts\n")
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


# ---------------------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------------------

MEMORY_MODES = {
    "assemble": "`prompts(inputs)`, no count read",
    "import": "the same, `import tiktoken` first (as when `tokens.py` imported it)",
    "count": "`prompts(inputs)`, then every `token_count` read",
}


def memory_child(mode: str, shape: Shape) -> None:
    """In a fresh process: assemble the prompts (reading their counts in mode ``count``),
    then print peak RSS and whether an encoding was loaded and tiktoken imported."""
    if mode == "import":
        import tiktoken  # noqa: F401
    structure, tasks = prepared(shape)
    prompts = structure.prompts(inputs_for(tasks, shape))
    if mode == "count":
        sum(prompt.token_count for prompt in prompts)
    seen = {
        "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "encoding_loaded": tokens.encoding_loaded(),
        "tiktoken": "tiktoken" in sys.modules,
    }
    print(json.dumps(seen))


def memory_run(mode: str, shape: Shape) -> dict[str, Any]:
    """What a fresh process in ``mode`` printed."""
    sizes = ["--nodes", shape.nodes, "--sections", shape.sections]
    sizes += ["--paragraphs", shape.paragraphs, "--figures", shape.figures]
    command = [sys.executable, __file__, "--child", mode, *map(str, sizes)]
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    seen: dict[str, Any] = json.loads(run.stdout.splitlines()[-1])
    return seen


def memory_table(shape: Shape, repeat: int) -> list[str]:
    """Peak RSS of ``repeat`` fresh processes per mode (the modes taking turns), as a
    Markdown table: median, lowest and highest, and the median against ``assemble``'s."""
    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MEMORY_MODES}
    for _ in range(repeat):
        for mode, seen in runs.items():
            seen.append(memory_run(mode, shape))
    medians = {mode: statistics.median(r["rss_kib"] for r in seen) for mode, seen in runs.items()}
    lines = [
        "| process | peak RSS, median (MiB) | lowest–highest | − `assemble` | encoding "
        "loaded | tiktoken imported |",
        "|---|---:|---:|---:|---|---|",
    ]
    for mode, seen in runs.items():
        peaks = [r["rss_kib"] / 1024 for r in seen]
        lines.append(
            f"| `{mode}`: {MEMORY_MODES[mode]} | {medians[mode] / 1024:.1f} "
            f"| {min(peaks):.1f}–{max(peaks):.1f} "
            f"| {(medians[mode] - medians['assemble']) / 1024:+.1f} "
            f"| {_yes_no(r['encoding_loaded'] for r in seen)} "
            f"| {_yes_no(r['tiktoken'] for r in seen)} |"
        )
    return lines


def _yes_no(values: Iterable[bool]) -> str:
    seen = set(values)
    return "yes" if seen == {True} else "no" if seen == {False} else "varies"


# ---------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------


def measured_code() -> str:
    """Which LangTree is measured: this checkout (with its uncommitted files under
    ``langtree/``), or another copy found first on ``sys.path`` (``PYTHONPATH``)."""
    package = Path(langtree.__file__).resolve().parent
    if package != ROOT / "langtree":
        return f"LangTree imported from `{package}` (not this checkout)"
    return f"Uncommitted changes under `langtree/`: {uncommitted()}"


def uncommitted() -> str:
    """The files under ``langtree/`` with uncommitted changes, or ``none``."""
    run = subprocess.run(
        ["git", "status", "--porcelain", "--", "langtree"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    changed = [line[3:] for line in run.stdout.splitlines() if line.strip()]
    return ", ".join(f"`{name}`" for name in changed) or "none"


def table(result: Result) -> list[str]:
    """A Markdown table: every figure in seconds and in milliseconds per prompt."""
    best = result.best
    full = f" ({best.full_collections} full)" if best.full_collections else ""
    rows = [
        ("`validate()` (before the run)", best.validate),
        ("`plan(inputs)` (also inside `prompts()`)", best.plan),
        ("**`prompts(inputs)` total** (no counting)", best.total),
        ("— assembly without the plan (total − plan)", best.total - best.plan),
        (f"— garbage collector within the total{full}", best.collector),
        ("token counting: every `token_count` read (pieces, each counted once)", best.counting),
        ("token counting as before: `encode_ordinary` over each whole text", best.whole_counting),
        ("**total and counting** (total + `token_count` read)", result.counted),
        ("baseline: `json.dumps` of a task's inputs per prompt", best.baseline),
    ]
    lines = ["| figure | best (s) | ms per prompt |", "|---|---:|---:|"]
    lines += [
        f"| {name} | {seconds:.4f} | {result.per_prompt_ms(seconds):.3f} |"
        for name, seconds in rows
    ]
    return lines


def summary(result: Result) -> list[str]:
    """Sizes and ratios under the table."""
    shape, best, pieces = result.shape, result.best, result.pieces
    return [
        f"- Structure: {shape.nodes:,} node classes ({max(1, shape.nodes // 10)} tasks); "
        f"inputs per task: {shape.sections} sections × {shape.paragraphs} paragraphs, "
        f"{shape.figures} figures",
        f"- Prompts: {result.prompts:,} ({result.unknown_elements} with unknown elements "
        f"`[*]`) from {result.plan_steps:,} plan steps",
        f"- Mean prompt: {result.mean_chars:,.0f} characters, {result.mean_tokens:,.0f} "
        f"tokens ({result.encoding})",
        f"- Pieces: {pieces.total:,} ({pieces.total / result.prompts:.1f} per prompt), "
        f"{pieces.counted:,} distinct ones counted by the encoding, {pieces.from_cache:,} "
        f"({100 * pieces.from_cache / pieces.total:.0f} %) from the cache, {pieces.too_long} "
        "too long to be kept",
        f"- Total ÷ baseline: {best.total / best.baseline:.1f}×; counting ÷ baseline: "
        f"{best.counting / best.baseline:.2f}× (whole texts: "
        f"{best.whole_counting / best.baseline:.2f}×)",
        f"- Counting in pieces ÷ counting whole texts: "
        f"**{best.counting / best.whole_counting:.2f}×**; counting is "
        f"{100 * best.counting / result.counted:.0f} % of total and counting (whole texts: "
        f"{100 * best.whole_counting / (best.total + best.whole_counting):.0f} %), the plan "
        f"{100 * best.plan / best.total:.0f} % of the total",
    ]


def verdict(result: Result) -> str:
    """Whether the target (under 1 ms per step prompt on average, counting included)."""
    per_prompt = result.per_prompt_ms(result.counted)
    per_step = 1000 * result.counted / result.plan_steps
    met = "met" if per_prompt < TARGET_MS_PER_STEP else "NOT met"
    return (
        f"Target: under {TARGET_MS_PER_STEP:.0f} ms per step prompt on average, token "
        f"counting included — {met} ({per_prompt:.3f} ms per prompt, "
        f"{per_prompt / TARGET_MS_PER_STEP:.2f}× the target; {per_step:.3f} ms per plan step)."
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=200, help="node classes (ten per task)")
    parser.add_argument("--repeat", type=int, default=7, help="runs; the best is kept")
    parser.add_argument("--sections", type=int, default=3, help="sections per task")
    parser.add_argument("--paragraphs", type=int, default=3, help="paragraphs per section")
    parser.add_argument("--figures", type=int, default=2, help="figures per task")
    parser.add_argument("--profile", action="store_true", help="cProfile one run instead")
    parser.add_argument("--top", type=int, default=20, help="functions shown by --profile")
    parser.add_argument(
        "--memory", action="store_true", help="peak RSS of fresh processes (--repeat each)"
    )
    parser.add_argument("--child", choices=sorted(MEMORY_MODES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.nodes < 10:
        parser.error("--repeat must be at least 1 and --nodes at least 10")
    if min(args.sections, args.paragraphs, args.figures) < 0:
        parser.error("element counts cannot be negative")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    """Measure and print a Markdown report (or a profile with ``--profile``)."""
    args = parse_args(argv)
    shape = Shape(args.nodes, args.sections, args.paragraphs, args.figures)
    if args.child:
        memory_child(args.child, shape)
        return
    check(shape)
    if args.profile:
        profile(shape, args.top)
        return
    machine = machine_lines()
    started = subprocess.run(["date"], capture_output=True, text=True, check=False).stdout
    if args.memory:
        print(f"Peak RSS (`ru_maxrss`) of fresh processes, {args.repeat} of each.\n")
        print(f"- Date: {started.strip()}")
        print("\n".join(machine))
        print(f"- {measured_code()}")
        print()
        print("\n".join(memory_table(shape, args.repeat)))
        return
    load, first = first_call(shape)
    result = measure(shape, args.repeat)
    print(f"Best of {args.repeat} runs, gc enabled, classes made by create_model.\n")
    print(f"- Date: {started.strip()}")
    print("\n".join(machine))
    print(f"- {measured_code()}")
    print()
    print("\n".join(summary(result)))
    print(
        f"- Once per process, not in the table: loading the encoding {load:.3f} s; "
        f"the first `prompts()` {first:.3f} s"
    )
    print()
    print("\n".join(table(result)))
    print()
    print(verdict(result))


if __name__ == "__main__":
    main()
