"""Structure benchmark: add + validate + plan over synthetic trees of 10 to 1,000 node classes.

Run by hand, not part of the test suite::

    .venv/bin/python benchmarks/structure_benchmark.py [--sizes 10 100 1000] [--repeat 5]
    .venv/bin/python benchmarks/structure_benchmark.py --source 1       # classes in files
    .venv/bin/python benchmarks/structure_benchmark.py --profile 1000   # cProfile, top 25

Each size is built from tasks of ten node classes (about five commands each): nested node
lists, a node generated whole, known nodes that are descended into, ``@each``/``@all``
from every task to the next, assembly variables, ``llm``/``resample``/``@resampled`` and
node modifiers. Classes are made with ``pydantic.create_model`` afresh for every run, so
nothing cached on a class from an earlier run helps. Their module has no source file, as
for classes built at run time: ``inspect.getsource`` fails fast and origins are unknown.
With ``--source TASKS`` the same classes are written as Python source, ``TASKS`` tasks per
module, and imported, so that LangTree also finds where every text stands in its file.

The machine is shared and noisy, so every figure is the best of ``--repeat`` runs, and
two baselines measured in the same runs give machine-independent ratios: the time
pydantic takes to create the same classes, and the time it takes to build every task's
JSON schema.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib
import itertools
import math
import pstats
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

from parse_benchmark import machine_lines
from pydantic import Field, create_model
from pydantic.fields import FieldInfo

from langtree import RunStructure, TreeNode

CLASSES_PER_TASK = 10
TARGET_NODES = 1_000
TARGET_SECONDS = 2.0
TARGET_GROWTH = 12.0
MODULE = "langtree_benchmark_synthetic"  # no such module: no source file to read


class Score(Enum):
    """A numeric Enum for ``@resampled[...]->mean``."""

    LOW = 1
    MID = 2
    HIGH = 3


class Tone(Enum):
    """A text Enum for ``@resampled[...]->mode``."""

    FORMAL = "formal"
    CASUAL = "casual"


# ---------------------------------------------------------------------------------------
# Synthetic tasks
# ---------------------------------------------------------------------------------------


def _model(name: str, doc: str, **fields: Any) -> type[TreeNode]:
    model: type[TreeNode] = create_model(
        name, __base__=TreeNode, __doc__=doc, __module__=MODULE, **fields
    )
    return model


def _field(annotation: Any, description: str, **options: Any) -> tuple[Any, Any]:
    return annotation, Field(description=description, **options)


def _list_of(model: type[TreeNode]) -> Any:
    """``list[model]`` for a class made at run time."""
    return list.__class_getitem__(model)


def _known_node(model: type[TreeNode], description: str) -> tuple[Any, Any]:
    """A single node field that is known (a default instance), so it is descended into."""
    return model, Field(default_factory=model.model_construct, description=description)


def _leaf_classes(suffix: str) -> dict[str, type[TreeNode]]:
    """The classes below a task's sections and appendix."""
    quote = _model(
        f"Quote{suffix}",
        "! @parallel\n! # quotes stay short\nA quotation that supports the paragraph.",
        text=_field(str, "! # keep it verbatim\nThe quotation, in the spirit of {heading}."),
        source=_field(str, '! llm("fast") # a cheap model will do\nWhere the quote is from.'),
        tone=_field(Tone, "! resample(3)\n! @resampled[tone]->mode\nThe quote's tone."),
    )
    paragraph = _model(
        f"Paragraph{suffix}",
        '! @sequential\n! style="plain"\n! llm("smart")\n! # paragraphs keep their order\n'
        "One paragraph.",
        text=_field(str, "The paragraph, under the heading {heading}."),
        quote=_known_node(quote, "! # every paragraph may quote a source"),
    )
    caption = _model(
        f"Caption{suffix}",
        "! @parallel\n! # generated with its figure\nA caption.",
        text=_field(str, "The caption text."),
        credit=_field(str, "! # who made the figure\nThe credit line."),
    )
    figure = _model(
        f"Figure{suffix}",
        "! @sequential\n! # figures are numbered\nA figure for the appendix.",
        title=_field(str, "The figure's title, about {topic}."),
        caption=_field(caption, "! resample(depth) # produced whole\nThe figure's caption."),
        kind=_field(str, "! # charts unless told otherwise", default="chart"),
    )
    reference = _model(
        f"Reference{suffix}",
        "! @parallel\n! # one per cited work\nA reference.",
        citation=_field(str, "! # APA style\nThe citation."),
        url=_field(str, "Where to find it."),
    )
    return {"paragraph": paragraph, "figure": figure, "reference": reference}


def _section_class(suffix: str, leaves: dict[str, type[TreeNode]], target: str) -> type[TreeNode]:
    send = (
        f"! @each[paragraphs]->{target}@{{{{outputs.paragraph_texts=paragraphs.text}}}}*\n"
        if target
        else "! # the last task sends nothing on\n"
    )
    return _model(
        f"Section{suffix}",
        "! @parallel\n! # sections are written side by side\nA section of the report on {topic}.",
        heading=_field(str, "! # five words at most\nA short heading."),
        summary=_field(str, "Summarise the section {heading} in two sentences."),
        paragraphs=_field(_list_of(leaves["paragraph"]), send + "The paragraphs.", default=[]),
        score=_field(Score, "! resample(3)\n! @resampled[score]->mean\nHow strong it is."),
    )


def _overview_class(suffix: str) -> type[TreeNode]:
    detail = _model(
        f"Detail{suffix}",
        "! @sequential\n! # part of the overview\nA detail.",
        point=_field(str, "! # one sentence\nThe point."),
    )
    return _model(
        f"Overview{suffix}",
        "! @parallel\n! # produced in one go\nA short overview.",
        gist=_field(str, "! # one line\nThe gist."),
        details=_field(_list_of(detail), "! # as many as needed\nThe details."),
    )


def _appendix_class(suffix: str, leaves: dict[str, type[TreeNode]], target: str) -> type[TreeNode]:
    send = (
        f"! @each[figures]->{target}@{{{{outputs.figure_titles=figures.title}}}}*\n"
        if target
        else ""
    )
    return _model(
        f"Appendix{suffix}",
        '! @parallel\n! llm("fast")\nSupporting material.',
        figures=_field(_list_of(leaves["figure"]), send + "The figures.", default=[]),
        references=_field(_list_of(leaves["reference"]), "! resample(depth)\nThe references."),
        note=_field(str, "! # free text\nAnything else."),
    )


def task_class(index: int, count: int) -> type[TreeNode]:
    """Task ``index`` of ``count`` with its nine node classes; it sends data to the next."""
    suffix = f"{index:04d}"
    target = f"task.bench{index + 1:04d}" if index + 1 < count else ""
    leaves = _leaf_classes(suffix)
    previous = " Earlier verdict: {previous}." if index else ""
    each = (
        f"! @each[sections]->{target}@{{{{value.summaries=sections.summary, "
        "prompt.headings=sections.heading}}*\n"
        if target
        else ""
    )
    verdict = f"! @all->{target}@{{{{prompt.previous=verdict}}}}\n" if target else ""
    headings = " Earlier headings: {headings}." if index else ""
    return _model(
        f"TaskBench{suffix}",
        f'! @sequential\n! depth=2\n! llm("smart")\n! # a synthetic task\n'
        f"Write a report on {{topic}}.{previous}\n\n{{PROMPT_SUBTREE}}\n",
        topic=_field(str, "! # supplied by the caller\nThe subject."),
        sections=_field(
            _list_of(_section_class(suffix, leaves, target)), each + "The sections.", default=[]
        ),
        summaries=_field(list[str], "Summaries of the previous report's sections."),
        overview=_field(_overview_class(suffix), '! llm("fast")\nAn overview.'),
        appendix=_known_node(_appendix_class(suffix, leaves, target), "! # always present"),
        verdict=_field(str, verdict + f"The verdict on {{topic}}.{headings}"),
    )


def build_tasks(nodes: int) -> list[type[TreeNode]]:
    """Tasks holding ``nodes`` node classes in all (a multiple of ten)."""
    count = max(1, nodes // CLASSES_PER_TASK)
    return [task_class(index, count) for index in range(count)]


def inputs_for(tasks: Sequence[type[TreeNode]]) -> dict[object, object]:
    """What the caller supplies: every task's topic."""
    return {task: {"topic": "Tides"} for task in tasks}


# ---------------------------------------------------------------------------------------
# The same classes as source files (--source)
# ---------------------------------------------------------------------------------------

MODULE_HEADER = """from enum import Enum

from pydantic import Field

from langtree import TreeNode


class Score(Enum):
    LOW = 1
    MID = 2
    HIGH = 3


class Tone(Enum):
    FORMAL = "formal"
    CASUAL = "casual"

"""


def _annotation_source(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    inner = ", ".join(_annotation_source(argument) for argument in get_args(annotation))
    return f"{get_origin(annotation).__name__}[{inner}]"


def _field_source(name: str, info: FieldInfo) -> str:
    options = []
    if info.default_factory is not None:
        owner = getattr(info.default_factory, "__self__", None)
        options.append(f"default_factory={getattr(owner, '__name__', '')}.model_construct")
    elif not info.is_required():
        options.append(f"default={info.default!r}")
    options.append(f"description={info.description!r}")
    return f"    {name}: {_annotation_source(info.annotation)} = Field({', '.join(options)})"


def class_source(model: type[TreeNode]) -> str:
    """A class statement that defines ``model`` again: docstring, fields, descriptions."""
    doc = textwrap.indent(model.__doc__ or "", "    ")
    fields = [_field_source(name, info) for name, info in model.model_fields.items()]
    return "\n".join([f"class {model.__name__}(TreeNode):", f'    """{doc.strip()}"""', *fields])


def _classes_in_order(task: type[TreeNode]) -> list[type[TreeNode]]:
    """The task's node classes, every class after the classes its fields use."""
    order: list[type[TreeNode]] = []

    def visit(model: type[TreeNode]) -> None:
        for info in model.model_fields.values():
            for used in (info.annotation, *get_args(info.annotation)):
                if isinstance(used, type) and issubclass(used, TreeNode) and used not in order:
                    visit(used)
        if model not in order:
            order.append(model)

    visit(task)
    return order


@dataclass
class SourceBuilder:
    """Writes the synthetic classes into modules of ``tasks_per_module`` tasks each and
    imports them, so that LangTree reads their source as for hand-written classes."""

    directory: Path
    tasks_per_module: int
    runs: int = 0

    def __call__(self, nodes: int) -> list[type[TreeNode]]:
        for name in [name for name in sys.modules if name.startswith("synthetic_")]:
            del sys.modules[name]  # the classes of earlier runs may go
        self.runs += 1
        tasks = build_tasks(nodes)
        step = self.tasks_per_module
        names = [
            self._write(f"synthetic_{nodes}_{self.runs}_{start}", tasks[start : start + step])
            for start in range(0, len(tasks), step)
        ]
        importlib.invalidate_caches()
        defined = {k: v for name in names for k, v in vars(importlib.import_module(name)).items()}
        return [defined[task.__name__] for task in tasks]

    def _write(self, name: str, tasks: Sequence[type[TreeNode]]) -> str:
        models = [model for task in tasks for model in _classes_in_order(task)]
        body = "\n\n\n".join(class_source(model) for model in models)
        (self.directory / f"{name}.py").write_text(f"{MODULE_HEADER}\n{body}\n")
        return name


# ---------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Timing:
    """Times in seconds: pydantic's class creation and JSON schemas (the baselines), then
    LangTree's add, validate, plan and their total, and how much of that total the garbage
    collector took (with the number of full collections)."""

    build: float
    schema: float
    add: float
    validate: float
    plan: float
    total: float
    collector: float = 0.0
    full_collections: int = 0


@dataclass(frozen=True)
class Result:
    """Best times for one size."""

    nodes: int
    commands: int
    steps: int
    best: Timing

    @property
    def build_ratio(self) -> float:
        """LangTree's total ÷ the time pydantic takes to create the classes."""
        return self.best.total / self.best.build

    @property
    def schema_ratio(self) -> float:
        """LangTree's total ÷ the time pydantic takes to build the JSON schemas."""
        return self.best.total / self.best.schema


def _timed(action: Callable[[], object]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = action()
    return time.perf_counter() - start, value


class CollectorClock:
    """Seconds the garbage collector runs while installed (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.full_collections = 0
        self._start = 0.0

    def __enter__(self) -> CollectorClock:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc_info: object) -> None:
        gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
            return
        self.seconds += time.perf_counter() - self._start
        self.full_collections += info["generation"] == 2


def _add_all(structure: RunStructure, tasks: Sequence[type[TreeNode]]) -> None:
    for task in tasks:
        structure.add(task)


Builder = Callable[[int], list[type[TreeNode]]]
"""Makes the task classes of a structure of so many node classes."""


def run_once(nodes: int, build_classes: Builder) -> tuple[Timing, int, int]:
    """Build fresh classes, then add, validate and plan them.

    ``gc.collect()`` runs before each timed part, so that no part pays for the garbage of
    another (creating 1,000 pydantic classes leaves enough to set off a full collection).

    Returns:
        The times, the number of commands and the number of plan steps.
    """
    gc.collect()
    build, tasks = _timed(lambda: build_classes(nodes))
    gc.collect()
    schema, _ = _timed(lambda: [task.model_json_schema() for task in tasks])
    gc.collect()
    structure = RunStructure()
    with CollectorClock() as collector:
        add, _ = _timed(lambda: _add_all(structure, tasks))
        validate, _ = _timed(structure.validate)
        plan_time, plan = _timed(lambda: structure.plan(inputs_for(tasks)))
    total = add + validate + plan_time
    timing = Timing(
        build=build,
        schema=schema,
        add=add,
        validate=validate,
        plan=plan_time,
        total=total,
        collector=collector.seconds,
        full_collections=collector.full_collections,
    )
    commands = sum(len(node.all_commands) for node in structure.nodes)
    return timing, commands, len(plan.steps)


def check(nodes: int, build_classes: Builder) -> None:
    """Fail loudly if a synthetic structure has errors or warnings, or the wrong size."""
    tasks = build_classes(nodes)
    structure = RunStructure()
    for task in tasks:
        structure.add(task)
    warnings = structure.validate()
    if warnings:
        raise SystemExit(f"{nodes} nodes: unexpected warnings:\n" + warnings[0].render())
    classes = {node.node_class for node in structure.nodes}
    if len(classes) != len(tasks) * CLASSES_PER_TASK:
        raise SystemExit(f"{nodes} nodes: built {len(classes)} classes")


BEST_OF = ("build", "schema", "add", "validate", "plan", "total")


def measure(nodes: int, repeat: int, build_classes: Builder) -> Result:
    """Best of ``repeat`` runs, each time (parts, total, baselines) at its own best; the
    collector's share is that of the run with the best total."""
    check(nodes, build_classes)
    runs = [run_once(nodes, build_classes) for _ in range(repeat)]
    timings = [timing for timing, _, _ in runs]
    _, commands, steps = runs[-1]
    fastest = min(timings, key=lambda timing: timing.total)
    best = replace(
        fastest,
        **{name: min(getattr(timing, name) for timing in timings) for name in BEST_OF},
    )
    return Result(nodes=nodes, commands=commands, steps=steps, best=best)


def profile(nodes: int, top: int, build_classes: Builder) -> None:
    """cProfile one run of add + validate + plan and print the top functions."""
    tasks = build_classes(nodes)
    profiler = cProfile.Profile()
    profiler.enable()
    structure = RunStructure()
    for task in tasks:
        structure.add(task)
    structure.validate()
    structure.plan(inputs_for(tasks))
    profiler.disable()
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


# ---------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------


def table(results: Sequence[Result]) -> list[str]:
    """A Markdown table of the results."""
    lines = [
        "| node classes | commands | plan steps | add (s) | validate (s) | plan (s) "
        "| total (s) | of which GC (s) | create classes (s) | total ÷ create "
        "| JSON schemas (s) | total ÷ schemas |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        best = result.best
        full = f", {best.full_collections} full" if best.full_collections else ""
        lines.append(
            f"| {result.nodes:,} | {result.commands:,} | {result.steps:,} | {best.add:.4f} "
            f"| {best.validate:.4f} | {best.plan:.4f} | {best.total:.4f} "
            f"| {best.collector:.4f}{full} | {best.build:.4f} | {result.build_ratio:.1f}× "
            f"| {best.schema:.4f} | {result.schema_ratio:.1f}× |"
        )
    return lines


def growth(results: Sequence[Result]) -> list[str]:
    """Time ratios between consecutive sizes, with and without the collector's time."""
    lines = []
    for smaller, larger in itertools.pairwise(results):
        lines.append(
            f"- {larger.nodes:,} ÷ {smaller.nodes:,} node classes "
            f"({larger.nodes / smaller.nodes:.0f}× the nodes): "
            f"{larger.best.total / smaller.best.total:.1f}× the time, "
            f"{_work(larger) / _work(smaller):.1f}× without the garbage collector's"
        )
    return lines


def _work(result: Result) -> float:
    """The best total without the time the garbage collector took in that run."""
    return result.best.total - result.best.collector


def verdict(results: Sequence[Result]) -> str:
    """Whether the targets (1,000 nodes under 2 s; 10× nodes at most 12× time) are met."""
    largest = max(results, key=lambda result: result.nodes)
    projected = largest.best.total * TARGET_NODES / largest.nodes
    measured = "measured" if largest.nodes == TARGET_NODES else "projected"

    speed = (
        f"Target: {TARGET_NODES:,} node classes in under {TARGET_SECONDS:.0f} s — "
        f"{_met(projected < TARGET_SECONDS)} ({measured} {projected:.3f} s)."
    )
    if len(results) < 2:
        return speed + " Growth needs two sizes or more."
    wall = _worst_tenfold(results, lambda result: result.best.total)
    work = _worst_tenfold(results, _work)
    return (
        f"{speed} Growth at most {TARGET_GROWTH:.0f}× per 10× nodes — "
        f"{_met(wall <= TARGET_GROWTH)} in wall time (worst {wall:.1f}×), "
        f"{_met(work <= TARGET_GROWTH)} without the garbage collector's time "
        f"(worst {work:.1f}×)."
    )


def _worst_tenfold(results: Sequence[Result], seconds: Callable[[Result], float]) -> float:
    """The largest growth in ``seconds`` between consecutive sizes, scaled to 10× nodes."""
    growths = [
        math.pow(seconds(larger) / seconds(smaller), 1 / math.log10(larger.nodes / smaller.nodes))
        for smaller, larger in itertools.pairwise(results)
    ]
    return max(growths)


def _met(met: bool) -> str:
    return "met" if met else "NOT met"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--repeat", type=int, default=5, help="runs per size; best is kept")
    parser.add_argument("--profile", type=int, metavar="NODES", help="profile one size")
    parser.add_argument("--top", type=int, default=25, help="functions shown by --profile")
    parser.add_argument(
        "--source",
        type=int,
        metavar="TASKS",
        help="write the classes as source, TASKS tasks (of ten classes) per module, and "
        "import them instead of using create_model",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1 or any(size < CLASSES_PER_TASK for size in args.sizes):
        parser.error(f"--repeat must be at least 1 and sizes at least {CLASSES_PER_TASK}")
    if args.source is not None and args.source < 1:
        parser.error("--source must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    """Measure every size and print a Markdown report."""
    args = parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        build_classes: Builder = build_tasks
        if args.source:
            sys.path.insert(0, directory)
            build_classes = SourceBuilder(Path(directory), args.source)
        if args.profile:
            profile(args.profile, args.top, build_classes)
            return
        report(args, build_classes)


def report(args: argparse.Namespace, build_classes: Builder) -> None:
    """Measure every size and print the machine, the table, the growth and the verdict."""
    machine = machine_lines()
    results = [measure(size, args.repeat, build_classes) for size in sorted(args.sizes)]
    origin = (
        f"classes written as source, {args.source} task(s) per module"
        if args.source
        else "classes made by create_model"
    )
    print(f"Best of {args.repeat} runs, {origin}, gc enabled, plan with inputs.\n")
    print("\n".join(machine))
    print()
    print("\n".join(table(results)))
    print()
    print("\n".join(growth(results)))
    print()
    print(verdict(results))


if __name__ == "__main__":
    main()
