"""The public surface: ``__all__`` is sorted, importable and documented, and holds what
``RunStructure``'s methods return."""

import ast
import importlib
import inspect
import itertools
import re
import typing
from pathlib import Path

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

import langtree
import langtree.dsl
import langtree.runtime
import langtree.testing
from langtree import LLMProvider, RunStructure, TreeNode
from langtree.runtime.observe._events import RunEvent
from langtree.testing import FakeChatModel

PUBLIC_MODULES = [langtree, langtree.dsl, langtree.runtime, langtree.testing]
API_PAGE = Path(__file__).parent.parent / "docs" / "api.md"


def isort_order(name: str) -> tuple[int, str]:
    """The order ruff keeps ``__all__`` in (RUF022, isort-style): constants, then classes,
    then the rest, each in character order."""
    if name.isupper():
        return 0, name
    return (1 if name[0].isupper() else 2), name


@pytest.mark.parametrize("module", PUBLIC_MODULES, ids=lambda module: module.__name__)
def test_all_is_sorted_and_unique(module: object) -> None:
    names = list(module.__all__)  # type: ignore[attr-defined]

    assert names == sorted(set(names), key=isort_order)


def public_names() -> list[tuple[str, str]]:
    """Every name in a public module's ``__all__``, with the module."""
    return [
        (module.__name__, name)
        for module in PUBLIC_MODULES
        for name in module.__all__  # type: ignore[attr-defined]
    ]


def alias_docstring(module: object, name: str) -> str | None:
    """The docstring under a type alias (``Command: TypeAlias = ...`` then a string), found
    in the module the public module imports it from."""
    source = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    origin = next(
        node.module
        for node in ast.walk(source)
        if isinstance(node, ast.ImportFrom) and any(alias.name == name for alias in node.names)
    )
    body = ast.parse(inspect.getsource(importlib.import_module(origin))).body
    for statement, following in itertools.pairwise(body):
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if isinstance(statement, ast.AnnAssign):
            targets = [statement.target]
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant):
                return str(following.value.value)
            return None
    raise AssertionError(f"{name} is not assigned in {origin}")


def undocumented_members(cls: type) -> list[str]:
    """The public methods and properties that ``cls`` defines without a docstring."""
    missing = []
    for attribute, value in vars(cls).items():
        function = value.fget if isinstance(value, property) else value
        function = getattr(function, "__func__", function)
        if not attribute.startswith("_") and inspect.isfunction(function) and not function.__doc__:
            missing.append(f"{cls.__name__}.{attribute}")
    return missing


@pytest.mark.parametrize(("module_name", "name"), public_names(), ids="{0[0]}.{0[1]}".format)
def test_every_public_name_is_documented(module_name: str, name: str) -> None:
    module = importlib.import_module(module_name)
    obj = getattr(module, name)

    if inspect.isclass(obj) or inspect.isfunction(obj):
        assert obj.__doc__, f"{module_name}.{name} has no docstring"
    else:
        assert alias_docstring(module, name), f"the alias {module_name}.{name} has no docstring"
    if inspect.isclass(obj):
        assert undocumented_members(obj) == []


def test_tree_node_docstring_reaches_no_subclass() -> None:
    class TaskPlain(TreeNode):
        value: str = Field(description="The value.")

    model = FakeChatModel()
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskPlain)
    structure.run()
    summary = TreeNode.__doc__.splitlines()[0]  # type: ignore[union-attr]

    # A node's docstring is its prompt text: one without a docstring has none, whatever
    # its base says. (inspect.getdoc() does fall back to a base class's docstring, as it
    # fell back to pydantic's BaseModel's before TreeNode had one: documentation tools
    # show it, and no model ever sees it.)
    assert TaskPlain.__doc__ is None
    assert "description" not in TaskPlain.model_json_schema()
    assert convert_to_openai_tool(TaskPlain)["function"]["description"] == ""
    assert "description" not in model.calls[0].schema
    assert summary not in model.calls[0].text


def test_every_langtree_name_has_an_entry_in_the_api_page() -> None:
    entries = set(re.findall(r"^::: langtree\.(\w+)$", API_PAGE.read_text(), re.MULTILINE))

    assert sorted(set(langtree.__all__) - entries) == []


def returned_classes(annotation: object) -> set[type]:
    """The classes of LangTree that an annotation names, at any depth (``tuple[X, ...]``)."""
    found = set()
    if isinstance(annotation, type) and annotation.__module__.startswith("langtree."):
        found.add(annotation)
    for argument in typing.get_args(annotation):
        found |= returned_classes(argument)
    return found


def run_structure_returns() -> dict[str, set[type]]:
    """What each public method and property of ``RunStructure`` returns (its classes)."""
    returns = {}
    for name, member in inspect.getmembers(RunStructure):
        function = member.fget if isinstance(member, property) else member
        if not name.startswith("_") and callable(function):
            hints = typing.get_type_hints(function)
            returns[name] = returned_classes(hints.get("return"))
    return returns


# stream() and astream() hand out the members of RunEvent, which langtree.runtime exports
# with the rest of langtree.runtime.observe._events.
EVENTS = set(typing.get_args(RunEvent))


@pytest.mark.parametrize(("method", "classes"), run_structure_returns().items())
def test_what_run_structure_returns_is_exported(method: str, classes: set[type]) -> None:
    exported = {getattr(langtree, name) for name in langtree.__all__}
    in_runtime = {getattr(langtree.runtime, name) for name in langtree.runtime.__all__}

    assert {cls.__name__ for cls in classes - exported - (EVENTS & in_runtime)} == set()


def annotation_of(cls: type, attribute: str) -> object:
    """What a field holds, or what a method or property returns."""
    member = inspect.getattr_static(cls, attribute)
    if isinstance(member, property):
        return typing.get_type_hints(member.fget)["return"]
    if inspect.isfunction(member):
        return typing.get_type_hints(member)["return"]
    return typing.get_type_hints(cls)[attribute]


@pytest.mark.parametrize(
    ("holder", "attribute", "held"),
    [
        pytest.param(langtree.ExecutionPlan, "steps", langtree.PlanStep, id="plan-steps"),
        pytest.param(langtree.Prompts, "cost", langtree.Cost, id="prompts-cost"),
        pytest.param(langtree.Node, "fields", langtree.NodeField, id="node-fields"),
        pytest.param(langtree.NodeRegistry, "get", langtree.Node, id="registry-get"),
    ],
)
def test_what_the_returned_objects_hold_is_exported(
    holder: type, attribute: str, held: type
) -> None:
    assert held in returned_classes(annotation_of(holder, attribute))


def test_prompts_are_a_list_of_step_prompts() -> None:
    (base,) = langtree.Prompts.__orig_bases__  # type: ignore[attr-defined]

    assert typing.get_args(base) == (langtree.StepPrompt,)


def test_parse_error_is_a_value_error_and_a_langtree_error() -> None:
    assert issubclass(langtree.CommandParseError, ValueError)
    assert issubclass(langtree.CommandParseError, langtree.LangTreeError)
    assert issubclass(langtree.StructureError, langtree.LangTreeError)
    assert issubclass(langtree.ExecutionError, langtree.LangTreeError)
