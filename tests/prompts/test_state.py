"""The run state: inputs as plain data with defaults, node instances and their addresses."""

from pydantic import BaseModel, Field

from langtree import RunStructure, TreeNode
from langtree.prompts._state import Address, RunState, copied, instance_text, to_plain
from langtree.prompts._values import Pending, pending_list
from langtree.structure.tree._registry import NodeRegistry


class Paragraph(TreeNode):
    text: str = Field(description="The text.")
    mood: str = Field(default="calm", description="The mood.")
    summary: str = Field(description="One line.")


class Section(TreeNode):
    title: str = Field(description="The title.")
    tags: list[str] = Field(default_factory=lambda: ["draft"], description="Tags.")
    paragraphs: list[Paragraph] = Field(default=[], description="The paragraphs.")


class Owner(TreeNode):
    name: str = Field(default="nobody", description="The name.")
    role: str | None = Field(default=None, description="The role.")


class TaskReport(TreeNode):
    topic: str = Field(description="The topic.")
    sections: list[Section] = Field(default=[], description="The sections.")
    owner: Owner = Field(default_factory=Owner, description="The owner.")
    grid: list[list[Paragraph]] | None = Field(default=None, description="A grid.")


def registry() -> NodeRegistry:
    structure = RunStructure()
    structure.add(TaskReport)
    return structure.nodes


def start(inputs: object) -> RunState:
    return RunState.start(registry(), {"task.report": inputs})


def test_start_fills_known_defaults_and_default_factories() -> None:
    state = start({"topic": "Tides"})

    assert state.roots == {
        "task.report": {"topic": "Tides", "sections": [], "owner": {"name": "nobody"}}
    }


def test_start_fills_defaults_inside_supplied_elements_and_nodes() -> None:
    state = start({"sections": [{"title": "A", "paragraphs": [{"text": "x"}]}], "owner": {}})

    assert state.roots["task.report"] == {
        "sections": [
            {"title": "A", "paragraphs": [{"text": "x", "mood": "calm"}], "tags": ["draft"]}
        ],
        "owner": {"name": "nobody"},
    }


def test_defaults_are_copies() -> None:
    first = start({})
    first.roots["task.report"]["sections"].append({"title": "changed"})  # type: ignore[attr-defined]

    assert start({}).roots["task.report"]["sections"] == []


def test_model_instances_give_the_fields_that_were_set() -> None:
    report = TaskReport.model_construct(
        topic="Tides",
        sections=[Section.model_construct(title="A")],
        _fields_set={"topic", "sections"},
    )

    state = start(report)

    assert state.roots["task.report"] == {
        "topic": "Tides",
        "sections": [{"title": "A", "tags": ["draft"], "paragraphs": []}],
        "owner": {"name": "nobody"},
    }


def test_explicitly_set_values_equal_to_defaults_are_kept() -> None:
    state = start(TaskReport(topic="x", owner=Owner(name="nobody", role="chair")))

    assert state.roots["task.report"]["owner"] == {"name": "nobody", "role": "chair"}


def test_to_plain_keeps_every_field_of_a_plain_model_and_turns_tuples_into_lists() -> None:
    class Point(BaseModel):
        x: int
        y: int = 7

    assert to_plain({"p": Point(x=1), "t": (1, (2, 3))}) == {
        "p": {"x": 1, "y": 7},
        "t": [1, [2, 3]],
    }


def test_instances_of_known_lists_are_indexed() -> None:
    state = start({"sections": [{"paragraphs": [{}, {}]}, {"paragraphs": [{}]}]})

    assert state.instances("task.report.sections.paragraphs") == [
        Address("task.report.sections.paragraphs", (0, 0)),
        Address("task.report.sections.paragraphs", (0, 1)),
        Address("task.report.sections.paragraphs", (1, 0)),
    ]


def test_empty_and_none_lists_have_no_instances() -> None:
    state = start({"sections": [], "grid": None})

    assert state.instances("task.report.sections") == []
    assert state.instances("task.report.grid") == []


def test_unknown_lists_give_one_instance_at_star() -> None:
    state = start({})
    state.roots["task.report"]["sections"] = Pending("task.report:sections")

    assert state.instances("task.report.sections") == [Address("task.report.sections", (None,))]
    assert state.instances("task.report.sections.paragraphs") == [
        Address("task.report.sections.paragraphs", (None, None))
    ]
    assert state.instances("task.report.grid") == [Address("task.report.grid", (None, None))]


def test_single_nodes_have_one_instance_with_the_parents_indices() -> None:
    state = start({})

    assert state.instances("task.report.owner") == [Address("task.report.owner", ())]


def test_instance_returns_the_values_or_none() -> None:
    state = start({"sections": [{"title": "A"}]})

    assert state.instance(Address("task.report.sections", (0,))) == {
        "title": "A",
        "tags": ["draft"],
        "paragraphs": [],
    }
    assert state.instance(Address("task.report.sections", (1,))) is None
    assert state.instance(Address("task.report.sections", (None,))) is None
    assert state.instance(Address("task.report")) is state.roots["task.report"]


def test_instance_at_star_of_a_pending_list_is_its_element() -> None:
    state = start({})
    sections = pending_list("task.source:names", 1)
    state.roots["task.report"]["sections"] = sections

    assert state.instance(Address("task.report.sections", (None,))) is sections.element
    assert state.instance(Address("task.report.sections", (0,))) is None


def test_view_inside_a_pending_value_sees_every_field_pending() -> None:
    state = start({})
    state.roots["task.report"]["sections"] = Pending("task.report:sections")

    view = state.view(Address("task.report.sections", (None,)))

    marker = Pending("task.report:sections")
    assert view == {"title": marker, "tags": marker, "paragraphs": marker}
    assert state.view(Address("task.report.sections.paragraphs", (None, None))) == {
        "text": marker,
        "mood": marker,
        "summary": marker,
    }


def test_view_of_absent_values_is_none() -> None:
    state = start({})

    assert state.view(Address("task.report.grid", (None, None))) is None


def test_write_generated_stores_values_and_remembers_them() -> None:
    state = start({"sections": [{"title": "A"}]})
    address = Address("task.report.sections", (0,))

    state.write_generated(address, {"title": Pending("s")})

    assert state.instance(address) == {"title": Pending("s"), "tags": ["draft"], "paragraphs": []}
    assert state.generated == {address: {"title"}}


def test_parent_drops_the_indices_of_the_childs_lists() -> None:
    state = start({})

    assert state.parent(Address("task.report.sections.paragraphs", (1, 2))) == Address(
        "task.report.sections", (1,)
    )
    assert state.parent(Address("task.report.grid", (0, 3))) == Address("task.report")
    assert state.parent(Address("task.report.owner")) == Address("task.report")
    assert state.parent(Address("task.report")) is None


def test_instance_text_shows_indices_and_stars() -> None:
    nodes = registry()

    assert instance_text(nodes, Address("task.report")) == "task.report"
    assert (
        instance_text(nodes, Address("task.report.sections.paragraphs", (0, None)))
        == "task.report.sections[0].paragraphs[*]"
    )
    assert instance_text(nodes, Address("task.report.grid", (2, 1))) == "task.report.grid[2][1]"
    assert instance_text(nodes, Address("task.report.owner")) == "task.report.owner"


def test_to_plain_and_copied_take_values_nested_thousands_of_levels_deep() -> None:
    value: object = [Owner(name="deep")]
    for _ in range(3000):
        value = {"inner": (value,)}

    plain = to_plain(value)
    copy = copied(value)

    for found in (plain, copy):
        for _ in range(3000):
            assert isinstance(found, dict)
            (found,) = found["inner"]
        assert found == [{"name": "deep"}]


def test_copied_shares_nothing_with_the_value() -> None:
    tags = {"a"}
    value = {"tags": tags, "items": [{"n": 1}]}

    copy = copied(value)

    assert copy == value
    assert isinstance(copy, dict)
    assert copy["tags"] is not tags
    assert copy["items"] is not value["items"]
