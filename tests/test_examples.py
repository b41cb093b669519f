"""The trees in ``examples/``: each checks, plans and previews offline with its inputs.

Every module in ``examples/`` is found and tested; a module that is added without being
pinned in ``EXPECTED``, or removed while still pinned, fails the suite. Each module names
the model keys it needs in ``MODEL_KEYS`` (the default first) and has realistic inputs in
``examples/inputs/<module>.json``, keyed by task class name. Together the examples use
every command of the language: ``COVERAGE`` pins which example uses what.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pytest

from langtree import ExecutionError, LLMProvider, RunResult, RunStructure, StructureError, dsl
from langtree.cli import main
from langtree.dsl._paths import split_plucks
from langtree.structure.tree._discovery import load_modules, node_classes
from langtree.structure.tree._tree import task_tag
from langtree.structure.tree._tree_node import TreeNode
from langtree.testing import FakeChatModel

EXAMPLES = Path(__file__).parent.parent / "examples"
INPUTS = EXAMPLES / "inputs"
EXAMPLE_PATHS = {path.stem: path for path in sorted(EXAMPLES.glob("*.py"))}

# A runtime variable left in a prompt: `{name}` (JSON in the context never matches).
UNRESOLVED = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")


@dataclass(frozen=True)
class Expected:
    """What one example is pinned to.

    Attributes:
        prompts: ``(step_id, node_path)`` of every prompt, in plan order.
        variables: External variables the example needs at run time.
        warnings: ``(class, message)`` of every warning ``validate()`` returns.
        llm_keys: The keys its ``llm(...)`` commands name, sorted.
    """

    prompts: list[tuple[str, str]]
    variables: dict[str, object] = field(default_factory=dict)
    warnings: list[tuple[str | None, str]] = field(default_factory=list)
    llm_keys: tuple[str, ...] = ()


def once(node_path: str, fields: str) -> tuple[str, str]:
    """``(step_id, node_path)`` of the prompt of the step ``<node_path>:<fields>`` for the
    node itself."""
    return (f"{node_path}:{fields}", node_path)


def per_item(list_path: str, fields: str, count: int) -> list[tuple[str, str]]:
    """``(step_id, node_path)`` of the prompts of one step over the first ``count`` items of
    a list: the step ``<list_path>:<fields>`` for ``<list_path>[0]``, ``[1]`` and on."""
    return [(f"{list_path}:{fields}", f"{list_path}[{index}]") for index in range(count)]


EXPECTED = {
    "kpi_board": Expected(
        prompts=[once("task.find_kpis", "kpis"), once("task.brief_board", "headline+bullets")]
    ),
    "launch_brief": Expected(
        prompts=[
            once("task.plan_launch", "positioning"),
            once("task.plan_launch", "key_messages"),
            *per_item("task.write_launch_posts.posts", "headline", 3),
            *per_item("task.write_launch_posts.posts", "body", 3),
        ],
        llm_keys=("strong",),
    ),
    "meeting_notes": Expected(
        prompts=[
            *per_item("task.take_minutes.agenda", "decision", 3),
            once("task.take_minutes", "subject"),
            *per_item("task.track_follow_ups.follow_ups", "action+owner+deadline", 3),
        ],
        variables={"company": "Northwind Logistics"},
        warnings=[
            ("TaskTakeMinutes", "{company} is an external variable: supply it at run time"),
        ],
    ),
    "product_photo": Expected(
        prompts=[
            once("task.describe_product", "colour"),
            once("task.describe_product", "description"),
        ]
    ),
    "report_digest": Expected(
        prompts=[
            *per_item("task.summarize_report.sections", "summary", 3),
            once("task.write_digest", "headline+digest"),
        ]
    ),
    "review_rating": Expected(
        prompts=[once("task.rate_review", "rating"), once("task.rate_review", "verdict")],
        llm_keys=("default",),
    ),
    "support_triage": Expected(
        prompts=[
            once("task.triage_ticket", "category+summary"),
            once("task.triage_ticket.reply", "subject_line"),
            once("task.triage_ticket.reply", "body"),
            # Its context shows the reply, which the strong model drafts first.
            once("task.triage_ticket", "priority"),
        ],
        llm_keys=("fast", "strong"),
    ),
}

# Which examples use each feature of the language. Removing an example, or a command
# from one, changes this table; every feature must keep at least one example.
COVERAGE = {
    "@each": {"meeting_notes", "report_digest"},
    "@all": {"kpi_board", "launch_brief", "meeting_notes", "support_triage"},
    "@all ... * (to every element)": {"launch_brief"},
    "wildcard source *": {"launch_brief"},
    "prompt. scope": {"launch_brief", "meeting_notes"},
    "value. scope": {"kpi_board", "meeting_notes", "report_digest", "support_triage"},
    "outputs. scope": {"launch_brief"},
    "@sequential": {"launch_brief", "report_digest"},
    "@parallel": {"meeting_notes"},
    "together": {"kpi_board", "report_digest", "support_triage"},
    "assembly variable": {"launch_brief", "review_rating", "support_triage"},
    "resample(n)": {"support_triage"},
    "resample(variable)": {"review_rating"},
    "@resampled mean": {"review_rating"},
    "@resampled mode": {"review_rating", "support_triage"},
    'llm("key")': {"review_rating", "support_triage"},
    "llm(variable)": {"launch_brief", "support_triage"},
    "llm(..., override=true)": {"support_triage"},
    "comment line": {"launch_brief"},
    'transform("expression")': {"kpi_board"},
    "pluck path": {"kpi_board"},
    "input()": {"review_rating"},
}


class Catalog:
    """A provider as far as checking goes: the model keys, the default first."""

    def __init__(self, keys: tuple[str, ...] | list[str]) -> None:
        self.keys = list(keys)

    def list_models(self) -> list[str]:
        return list(self.keys)


def load(name: str) -> ModuleType:
    [module] = load_modules(str(EXAMPLE_PATHS[name]))
    return module


def tasks(module: ModuleType) -> list[type[TreeNode]]:
    return [cls for cls in node_classes(module) if task_tag(cls.__name__) is not None]


def structure_for(module: ModuleType, keys: tuple[str, ...] | list[str]) -> RunStructure:
    structure = RunStructure(provider=Catalog(keys))
    for task in tasks(module):
        structure.add(task)
    return structure


def inputs_for(name: str, module: ModuleType) -> dict[object, object]:
    """The example's inputs file, its task class names turned into the classes."""
    raw = json.loads((INPUTS / f"{name}.json").read_text())
    return {getattr(module, task_name): values for task_name, values in raw.items()}


def features(module: ModuleType) -> set[str]:
    """The features of ``COVERAGE`` that the commands of a module's tasks use."""
    structure = structure_for(module, module.MODEL_KEYS)
    found: set[str] = set()
    for node in structure.nodes:
        for node_command in node.all_commands:
            command = node_command.command
            if isinstance(command, dsl.EachCommand | dsl.AllCommand):
                found.add("@each" if isinstance(command, dsl.EachCommand) else "@all")
                if isinstance(command, dsl.AllCommand) and command.has_multiplicity:
                    found.add("@all ... * (to every element)")
                for mapping in command.mappings:
                    found.add(f"{mapping.scope or 'value'}. scope")
                    if not mapping.is_wildcard and split_plucks(mapping.resolved_source_path)[1]:
                        found.add("pluck path")
                    if mapping.is_wildcard:
                        found.add("wildcard source *")
            elif isinstance(command, dsl.NodeModifierCommand):
                written = node_command.extracted.text.strip().lstrip("!").split()[0]
                found.add("together" if written.endswith("together") else f"@{command.modifier}")
            elif isinstance(command, dsl.VariableAssignmentCommand):
                found.add("assembly variable")
            elif isinstance(command, dsl.ResamplingCommand):
                found.add(f"@resampled {command.aggregation_function}")
            elif isinstance(command, dsl.CommentCommand):
                found.add("comment line")
            elif isinstance(command, dsl.ExecutionCommand):
                found |= call_features(command)
    return found


def call_features(command: dsl.ExecutionCommand) -> set[str]:
    """``resample(n)``/``llm("key")``, or ``(variable)`` when the first argument names one."""
    name = command.command_name
    if name == "transform":
        return {'transform("expression")'}
    if name == "input":
        return {"input()"}
    named = dict(command.named_arguments)
    first = command.arguments[0] if command.arguments else next(iter(named.values()))
    if isinstance(first, dsl.VariableReference):
        found = {f"{name}(variable)"}
    else:
        found = {'llm("key")' if name == "llm" else f"{name}(n)"}
    override = command.arguments[1] if len(command.arguments) > 1 else named.get("override")
    if override is True:
        found.add("llm(..., override=true)")
    return found


EXAMPLE_NAMES = sorted(EXAMPLE_PATHS)


def test_every_example_is_pinned() -> None:
    assert sorted(EXPECTED) == EXAMPLE_NAMES
    assert len(EXAMPLE_NAMES) >= 5


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_documents_itself_and_its_model_keys(name: str) -> None:
    module = load(name)

    assert module.__doc__ is not None
    assert f"langtree check examples/{name}.py" in module.__doc__
    assert "MODEL_KEYS" in module.__doc__
    assert isinstance(module.MODEL_KEYS, tuple)
    assert module.MODEL_KEYS[0] == "default"
    assert set(EXPECTED[name].llm_keys) <= set(module.MODEL_KEYS)
    # No key is listed that the example does not need.
    assert set(module.MODEL_KEYS) == {"default", *EXPECTED[name].llm_keys}
    assert len(node_classes(module)) <= 4  # small: a few node classes (enums aside)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_validates_against_its_model_keys(name: str) -> None:
    module = load(name)
    structure = structure_for(module, module.MODEL_KEYS)

    warnings = structure.validate()

    assert [(w.class_name, w.message) for w in warnings] == EXPECTED[name].warnings


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_reports_model_keys_the_provider_lacks(name: str) -> None:
    structure = structure_for(load(name), ["other"])
    missing = EXPECTED[name].llm_keys

    if not missing:
        structure.validate()
        return
    with pytest.raises(StructureError) as caught:
        structure.validate()
    assert sorted(d.message for d in caught.value.diagnostics) == [
        f"Model {key!r} is not in the provider" for key in missing
    ]


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_langtree_check_passes_on_the_example(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["check", str(EXAMPLE_PATHS[name])])

    module = load(name)
    expected = (
        f"checked {len(tasks(module))} task(s), {len(node_classes(module))} node class(es): "
        f"0 error(s), {len(EXPECTED[name].warnings)} warning(s)\n"
    )
    assert status == 0
    assert capsys.readouterr().out.endswith(expected)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_inputs_name_its_tasks(name: str) -> None:
    module = load(name)
    raw = json.loads((INPUTS / f"{name}.json").read_text())

    assert raw
    assert set(raw) <= {task.__name__ for task in tasks(module)}


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_plans_and_previews_offline(name: str) -> None:
    module = load(name)
    structure = structure_for(module, module.MODEL_KEYS)
    inputs = inputs_for(name, module)

    plan = structure.plan(inputs)
    prompts = structure.prompts(inputs, variables=EXPECTED[name].variables)

    assert [(p.step_id, p.node_path) for p in prompts] == EXPECTED[name].prompts
    assert {p.step_id for p in prompts} <= {step.id for step in plan.steps}
    for prompt in prompts:
        assert UNRESOLVED.findall(prompt.text) == [], prompt.node_path
        assert "@{{" not in prompt.text, prompt.node_path  # no command leaked into the text
        assert prompt.model in (*module.MODEL_KEYS, None)
        assert prompt.token_count > 0
    assert {p.model for p in prompts if p.model} == set(EXPECTED[name].llm_keys)


@pytest.mark.parametrize("name", [n for n in EXAMPLE_NAMES if EXPECTED[n].variables])
def test_example_needs_its_external_variables(name: str) -> None:
    module = load(name)
    structure = structure_for(module, module.MODEL_KEYS)

    with pytest.raises(ExecutionError) as caught:
        structure.prompts(inputs_for(name, module))

    for variable in EXPECTED[name].variables:
        assert variable in str(caught.value)


def test_the_examples_use_every_command() -> None:
    used: dict[str, set[str]] = {}
    for name in EXAMPLE_NAMES:
        for feature in features(load(name)):
            used.setdefault(feature, set()).add(name)

    assert used == COVERAGE
    assert all(COVERAGE.values())


def running_structure(module: ModuleType, models: dict[str, object]) -> RunStructure:
    structure = RunStructure(provider=LLMProvider(models))  # type: ignore[arg-type]
    for task in tasks(module):
        structure.add(task)
    return structure


def generated_fields_filled(instance: TreeNode) -> bool:
    """Whether every field holds a value (no ``None`` left where the model should write)."""
    return all(getattr(instance, name) is not None for name in type(instance).model_fields)


def assert_every_task_filled(result: RunResult, module: ModuleType) -> None:
    """The run's result holds an instance of each of the module's tasks, every field set."""
    filled = [result[task] for task in tasks(module)]
    assert all(
        isinstance(instance, task) for instance, task in zip(filled, tasks(module), strict=True)
    )
    assert all(generated_fields_filled(instance) for instance in filled)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_runs_end_to_end_with_the_fake_model(name: str) -> None:
    module = load(name)
    model = FakeChatModel()
    structure = running_structure(module, dict.fromkeys(module.MODEL_KEYS, model))

    result = structure.run(inputs_for(name, module), variables=EXPECTED[name].variables)

    assert_every_task_filled(result, module)
    assert len(result.trace) == len(model.calls) > 0


@pytest.mark.local_model
@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_runs_on_the_embedded_local_model(name: str) -> None:
    local = pytest.importorskip("langtree.models._local")
    try:
        local.default_model_path()
    except ExecutionError:
        pytest.skip("the local model's weights are not installed: make local-model")
    module = load(name)
    model = local.default_local_model()
    structure = running_structure(module, dict.fromkeys(module.MODEL_KEYS, model))

    result = structure.run(inputs_for(name, module), variables=EXPECTED[name].variables)

    assert_every_task_filled(result, module)
    assert result.trace
