"""Prompt benchmark: assemble every step prompt of a plan of about 1,000 step instances.

Run by hand, not part of the test suite::

    .venv/bin/python benchmarks/prompts_benchmark.py [--nodes 200] [--repeat 7]
    .venv/bin/python benchmarks/prompts_benchmark.py --profile          # cProfile, top 20

The tasks are those of the structure benchmark (``structure_benchmark.build_tasks``: ten
node classes per task, ``@each``/``@all`` from every task to the next, runtime variables,
``llm``/``resample`` and node modifiers). The inputs give every task its topic and the
elements of its lists (sections with their headings, paragraphs, figures), so most prompts
are per element: ``RunStructure.prompts(inputs)`` returns one prompt per step and node
instance, 1,001 of them with the defaults.

The machine is shared and noisy, so every figure is the best of ``--repeat`` runs, with
the garbage collector enabled (``gc.collect()`` before each timed part). Token counting
is timed on its own in the same runs (``count_tokens`` over every prompt's text), so that
assembly alone is the total less the counting. A baseline measured in the same runs —
one ``json.dumps(..., indent=2)`` of a task's inputs per prompt — gives a
machine-independent ratio.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from parse_benchmark import machine_lines
from structure_benchmark import CollectorClock, build_tasks

import langtree
from langtree import RunStructure, TreeNode
from langtree.prompts.preview import StepPrompt
from langtree.prompts.tokens import count_tokens

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
    tokens; ``counting`` is ``count_tokens`` alone over the same texts; ``baseline`` the
    ``json.dumps`` baseline; ``collector`` the garbage collector's time within ``total``."""

    validate: float
    plan: float
    total: float
    counting: float
    baseline: float
    collector: float = 0.0
    full_collections: int = 0


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
    best: Timing

    @property
    def assembly(self) -> float:
        """Assembly alone: the best total less the best counting time."""
        return self.best.total - self.best.counting

    def per_prompt_ms(self, seconds: float) -> float:
        return 1000 * seconds / self.prompts


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    value = action()
    return time.perf_counter() - start, value


def count_all(prompts: Sequence[StepPrompt]) -> list[int]:
    """Count every prompt's tokens as ``prompts()`` does (no provider: the model key is
    the model name, and unknown names count with ``cl100k_base``)."""
    return [count_tokens(prompt.text, prompt.model).count for prompt in prompts]


def baseline(document: dict[str, object], times: int) -> int:
    """``json.dumps`` of a task's inputs, indented, ``times`` times (pure Python with
    ``indent``, as when a prompt renders a list or node value); returns the characters."""
    return sum(len(json.dumps(document, indent=2, ensure_ascii=False)) for _ in range(times))


def run_once(shape: Shape) -> tuple[Timing, list[StepPrompt], int]:
    """One run: validate, plan(inputs), prompts(inputs), then counting and the baseline
    over as many prompts as the run produced.

    Returns:
        The times, the prompts and the number of plan steps.
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
    counting, counts = _timed(lambda: count_all(prompts))
    if counts != [prompt.token_count for prompt in prompts]:
        raise SystemExit("count_tokens disagrees with the prompts' token counts")
    base, _ = _timed(lambda: baseline(task_inputs(shape), len(prompts)))
    timing = Timing(
        validate=validate,
        plan=plan,
        total=total,
        counting=counting,
        baseline=base,
        collector=collector.seconds,
        full_collections=collector.full_collections,
    )
    return timing, prompts, len(steps.steps)


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


BEST_OF = ("validate", "plan", "total", "counting", "baseline")


def measure(shape: Shape, repeat: int) -> Result:
    """Best of ``repeat`` runs, each figure at its own best; the collector's share is that
    of the run with the best total."""
    runs = [run_once(shape) for _ in range(repeat)]
    timings = [timing for timing, _, _ in runs]
    _, prompts, plan_steps = runs[-1]
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
        ("**`prompts(inputs)` total**", best.total),
        ("— token counting (`count_tokens` alone)", best.counting),
        ("— assembly only (total − counting)", result.assembly),
        ("— assembly without the plan (total − counting − plan)", result.assembly - best.plan),
        (f"— garbage collector within the total{full}", best.collector),
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
    shape, best = result.shape, result.best
    return [
        f"- Structure: {shape.nodes:,} node classes ({max(1, shape.nodes // 10)} tasks); "
        f"inputs per task: {shape.sections} sections × {shape.paragraphs} paragraphs, "
        f"{shape.figures} figures",
        f"- Prompts: {result.prompts:,} ({result.unknown_elements} with unknown elements "
        f"`[*]`) from {result.plan_steps:,} plan steps",
        f"- Mean prompt: {result.mean_chars:,.0f} characters, {result.mean_tokens:,.0f} "
        f"tokens ({result.encoding})",
        f"- Total ÷ baseline: {best.total / best.baseline:.1f}×; assembly only ÷ baseline: "
        f"{result.assembly / best.baseline:.1f}×; counting ÷ baseline: "
        f"{best.counting / best.baseline:.1f}×",
        f"- Token counting is {100 * best.counting / best.total:.0f} % of the total, "
        f"the plan {100 * best.plan / best.total:.0f} %",
    ]


def verdict(result: Result) -> str:
    """Whether the target (under 1 ms per step prompt on average, counting included)."""
    per_prompt = result.per_prompt_ms(result.best.total)
    per_step = 1000 * result.best.total / result.plan_steps
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
    check(shape)
    if args.profile:
        profile(shape, args.top)
        return
    machine = machine_lines()
    started = subprocess.run(["date"], capture_output=True, text=True, check=False).stdout
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
