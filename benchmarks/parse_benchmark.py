"""Parse benchmark: DSL commands per second over a realistic, deterministic mix.

Run by hand (``make bench``), not part of the test suite::

    .venv/bin/python benchmarks/parse_benchmark.py [--n 50000] [--repeat 5]

The machine is shared and noisy, so every figure is the best of ``--repeat`` runs, and a
baseline measured in the same run (one ``re.fullmatch`` of a permissive regex per command
text) gives a machine-independent ratio: parse time ÷ baseline time. Garbage collection
stays enabled, as in real use.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import re
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from langtree import parse_command

TARGET_COMMANDS = 50_000
TARGET_SECONDS = 1.0

# Accepts any text that starts with '!' after blanks, scanning every character once.
PERMISSIVE = re.compile(r"\s*![^\r\n]*(?:(?:\r\n|\n|\r)[^\r\n]*)*")

NAMES = (
    "sections",
    "paragraphs",
    "items",
    "title",
    "summary",
    "content",
    "analysis",
    "rating",
    "document",
    "chapters",
    "notes",
    "context",
    "metadata",
    "findings",
)
SCOPES = ("prompt", "value", "outputs", "task")
COMMENTS = (
    "Process each item",
    "Send the whole node",
    "TODO: tune later",
    "Use high-quality model",
    "one output per section, see #12",
)
VARIABLES = ("count", "threshold", "model_name", "iterations", "debug", "title")
MODELS = ('"gpt-4"', '"claude-3"', "'fast-model'", '"gpt-4-complex"')


# ---------------------------------------------------------------------------------------
# The command mix
# ---------------------------------------------------------------------------------------


def _path(rng: random.Random, shortest: int = 1, longest: int = 3) -> str:
    """A dotted path of realistic field names."""
    return ".".join(rng.choice(NAMES) for _ in range(rng.randint(shortest, longest)))


def _target(rng: random.Random) -> str:
    """A scoped mapping target such as ``prompt.context``."""
    return f"{rng.choice(SCOPES)}.{_path(rng, 1, 2)}"


def _comment(rng: random.Random) -> str:
    """An inline comment for one command in five."""
    return f" # {rng.choice(COMMENTS)}" if rng.random() < 0.2 else ""


def _mappings(rng: random.Random, *, wildcard: bool) -> list[str]:
    """1–4 mappings: mostly explicit, sometimes implicit, a lone wildcard if allowed."""
    roll = rng.random()
    if wildcard and roll < 0.3:
        return [f"{_target(rng)}=*"]
    count = rng.randint(1, 4)
    if roll < 0.45:
        return [_target(rng) for _ in range(count)]
    return [f"{_target(rng)}={_path(rng)}" for _ in range(count)]


def _each(rng: random.Random) -> str:
    """``@each[inclusion]->task.x@{{...}}*``; one in ten without inclusion."""
    inclusion = "" if rng.random() < 0.1 else f"[{_path(rng)}]"
    mappings = ",".join(_mappings(rng, wildcard=False))
    return f"! @each{inclusion}->task.{_path(rng, 1, 2)}@{{{{{mappings}}}}}*{_comment(rng)}"


def _all(rng: random.Random) -> str:
    """``@all->task.x@{{...}}``, sometimes ``@->`` and sometimes with ``*``."""
    head = "@" if rng.random() < 0.1 else "@all"
    star = "*" if rng.random() < 0.3 else ""
    mappings = ",".join(_mappings(rng, wildcard=True))
    return f"! {head}->task.{_path(rng, 1, 2)}@{{{{{mappings}}}}}{star}{_comment(rng)}"


def _modifier(rng: random.Random) -> str:
    """``@sequential``, ``@parallel`` or ``together``."""
    return f"! {rng.choice(('@sequential', '@parallel', 'together'))}{_comment(rng)}"


def _assignment(rng: random.Random) -> str:
    """``name=value`` with an integer, float, string or boolean."""
    value = rng.choice(("5", "2.5", "-3", "1e-3", '"analysis_task"', "'Multi-word title'", "true"))
    return f"! {rng.choice(VARIABLES)}={value}{_comment(rng)}"


def _execution(rng: random.Random) -> str:
    """``resample(...)`` or ``llm(...)`` with literal or variable arguments."""
    call = rng.choice(
        (
            f"resample({rng.randint(1, 9)})",
            "resample(count)",
            f"llm({rng.choice(MODELS)})",
            f"llm({rng.choice(MODELS)}, override=true)",
            "llm(model_name, override=false)",
        )
    )
    return f"! {call}{_comment(rng)}"


def _resampled(rng: random.Random) -> str:
    """``@resampled[field]->function``."""
    function = rng.choice(("mean", "median", "mode", "sum", "min", "max"))
    return f"! @resampled[{rng.choice(NAMES)}]->{function}{_comment(rng)}"


def _standalone_comment(rng: random.Random) -> str:
    """``! # text`` or ``!# text``."""
    return f"{rng.choice(('! # ', '!# '))}{rng.choice(COMMENTS)}"


SINGLE_LINE_KINDS: tuple[tuple[Callable[[random.Random], str], int], ...] = (
    (_each, 30),
    (_all, 20),
    (_modifier, 8),
    (_assignment, 14),
    (_execution, 12),
    (_resampled, 6),
    (_standalone_comment, 10),
)


def single_line_mix(count: int, seed: int) -> list[str]:
    """``count`` single-line commands drawn with fixed weights from a seeded generator."""
    rng = random.Random(seed)
    makers = [maker for maker, _ in SINGLE_LINE_KINDS]
    weights = [weight for _, weight in SINGLE_LINE_KINDS]
    return [maker(rng) for maker in rng.choices(makers, weights, k=count)]


def _block(items: list[str], rng: random.Random) -> str:
    """Items one per line, indented, with an occasional comment line and trailing comma."""
    lines = []
    for item in items:
        if rng.random() < 0.3:
            lines.append(f"    # {rng.choice(COMMENTS)}")
        lines.append(f"    {item},")
    if rng.random() < 0.5:
        lines[-1] = lines[-1].rstrip(",")
    return "\n" + "\n".join(lines) + "\n"


def _multiline_each(rng: random.Random) -> str:
    """``@each`` with its mappings (and sometimes its inclusion) over several lines."""
    inclusion = f"[\n    {_path(rng, 2, 3)}\n]" if rng.random() < 0.3 else f"[{_path(rng)}]"
    block = _block(_mappings(rng, wildcard=False), rng)
    return f"! @each{inclusion}->task.{_path(rng, 1, 2)}@{{{{{block}}}}}*{_comment(rng)}"


def _multiline_all(rng: random.Random) -> str:
    """``@all`` with its mappings over several lines."""
    block = _block(_mappings(rng, wildcard=True), rng)
    return f"! @all->task.{_path(rng, 1, 2)}@{{{{{block}}}}}{_comment(rng)}"


def _multiline_llm(rng: random.Random) -> str:
    """``llm(...)`` with one argument per line."""
    block = _block([rng.choice(MODELS), f"override={rng.choice(('true', 'false'))}"], rng)
    return f"! llm({block}){_comment(rng)}"


MULTILINE_KINDS: tuple[tuple[Callable[[random.Random], str], int], ...] = (
    (_multiline_each, 60),
    (_multiline_all, 30),
    (_multiline_llm, 10),
)


def multiline_mix(count: int, seed: int) -> list[str]:
    """``count`` multiline commands drawn with fixed weights from a seeded generator."""
    rng = random.Random(seed)
    makers = [maker for maker, _ in MULTILINE_KINDS]
    weights = [weight for _, weight in MULTILINE_KINDS]
    return [maker(rng) for maker in rng.choices(makers, weights, k=count)]


# ---------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """Best times for one mix: the parser and the baseline over the same texts."""

    name: str
    count: int
    mean_length: float
    parse_seconds: float
    baseline_seconds: float

    @property
    def per_second(self) -> float:
        """Commands parsed per second."""
        return self.count / self.parse_seconds

    @property
    def ratio(self) -> float:
        """Parse time ÷ baseline time (lower is better; comparable across machines)."""
        return self.parse_seconds / self.baseline_seconds


def run_parser(texts: Sequence[str]) -> float:
    """Seconds to parse every text once."""
    parse = parse_command
    start = time.perf_counter()
    for text in texts:
        parse(text)
    return time.perf_counter() - start


def run_baseline(texts: Sequence[str]) -> float:
    """Seconds to ``fullmatch`` the permissive regex against every text once."""
    fullmatch = PERMISSIVE.fullmatch
    start = time.perf_counter()
    for text in texts:
        fullmatch(text)
    return time.perf_counter() - start


def check_mix(name: str, texts: Sequence[str]) -> None:
    """Fail loudly if a generated text does not parse or the baseline does not accept it."""
    for text in texts:
        parse_command(text)
        if PERMISSIVE.fullmatch(text) is None:
            raise SystemExit(f"{name}: baseline regex rejects {text!r}")


def measure(name: str, texts: Sequence[str], repeat: int) -> Result:
    """Best of ``repeat`` runs of parser and baseline, interleaved so both see the same noise."""
    check_mix(name, texts)
    parse_times, baseline_times = [], []
    for _ in range(repeat):
        gc.collect()
        baseline_times.append(run_baseline(texts))
        gc.collect()
        parse_times.append(run_parser(texts))
    return Result(
        name=name,
        count=len(texts),
        mean_length=sum(map(len, texts)) / len(texts),
        parse_seconds=min(parse_times),
        baseline_seconds=min(baseline_times),
    )


# ---------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo, or what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def revision() -> str:
    """The git commit measured, marked ``dirty`` when ``langtree/`` has uncommitted changes."""
    root = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str:
        run = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
        return run.stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return f"{commit} (dirty)" if git("status", "--porcelain", "--", "langtree") else commit


def machine_lines() -> list[str]:
    """The machine, interpreter, load and code revision, for the record."""
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return [
        f"- Revision: {revision()}",
        f"- CPU: {cpu_model()} ({os.cpu_count()} logical cores)",
        f"- Python: {platform.python_implementation()} {platform.python_version()}",
        f"- OS: {platform.platform()}",
        f"- Load average at start (1, 5, 15 min): {load}",
    ]


def table(results: Sequence[Result]) -> list[str]:
    """A Markdown table of the results."""
    lines = [
        "| mix | commands | mean chars | best parse time (s) | commands/s | µs/command "
        "| baseline (s) | parse ÷ baseline |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        lines.append(
            f"| {result.name} | {result.count:,} | {result.mean_length:.0f} "
            f"| {result.parse_seconds:.3f} | {result.per_second:,.0f} "
            f"| {1e6 / result.per_second:.1f} | {result.baseline_seconds:.4f} "
            f"| {result.ratio:.0f}× |"
        )
    return lines


def verdict(single_line: Result) -> str:
    """Whether the target (50,000 single-line commands in under 1 s) is met."""
    projected = single_line.parse_seconds * TARGET_COMMANDS / single_line.count
    met = "met" if projected < TARGET_SECONDS else "NOT met"
    measured = "measured" if single_line.count == TARGET_COMMANDS else "projected"
    return (
        f"Target: {TARGET_COMMANDS:,} single-line commands in under {TARGET_SECONDS:.0f} s "
        f"— {met} ({measured} {projected:.3f} s, best of the runs)."
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=TARGET_COMMANDS, help="single-line commands")
    parser.add_argument(
        "--multiline-n", type=int, default=None, help="multiline commands (default: n / 5)"
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure; best is kept")
    parser.add_argument("--seed", type=int, default=2024, help="seed of the command mix")
    args = parser.parse_args(argv)
    if args.multiline_n is None:
        args.multiline_n = max(1, args.n // 5)
    if args.n < 1 or args.multiline_n < 1 or args.repeat < 1:
        parser.error("--n, --multiline-n and --repeat must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    """Build the mixes, measure them and print a Markdown report."""
    args = parse_args(argv)
    machine = machine_lines()
    results = [
        measure("single-line", single_line_mix(args.n, args.seed), args.repeat),
        measure("multiline", multiline_mix(args.multiline_n, args.seed), args.repeat),
    ]
    print(f"Best of {args.repeat} runs, seed {args.seed}, gc enabled.\n")
    print("\n".join(machine))
    print()
    print("\n".join(table(results)))
    print()
    print(verdict(results[0]))


if __name__ == "__main__":
    main()
