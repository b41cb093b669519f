"""What a ``prompt`` or ``outputs`` mapping sends where no step's prompt can show it is a
``validate()`` warning (docs/dsl.md, "Scopes"): nothing a command sends vanishes silently.
"""

from pathlib import Path

from pydantic import Field

from langtree import RunStructure, TreeNode

FILE = __file__


def line_of(text: str) -> int:
    """The line of this file where ``text`` first stands."""
    lines = Path(FILE).read_text().splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)


def warnings(*tasks: type[TreeNode]) -> list[tuple[str, str]]:
    structure = RunStructure()
    for task in tasks:
        structure.add(task)
    return [(w.message, w.hint) for w in structure.validate()]


NODE_HINT = "send it to a node whose fields a model generates, or remove the mapping"


class Notes(TreeNode):
    text: str = Field(default="", description="The text.")


class TaskArchive(TreeNode):
    """! @all->notes@{{outputs.summary=summary}}"""

    summary: str = Field(description="The summary.")
    notes: Notes = Field(default=Notes(), description="The notes.")


def test_outputs_into_a_node_no_step_generates_anything_in_is_a_warning() -> None:
    assert warnings(TaskArchive) == [
        (
            "No prompt shows 'outputs.summary': no step generates a field of 'Notes' "
            "(task.archive.notes) or of a node below it",
            NODE_HINT,
        )
    ]


def test_the_warning_marks_the_mapping_in_the_command() -> None:
    structure = RunStructure()
    structure.add(TaskArchive)

    (warning,) = structure.validate()

    assert warning.render() == (
        "warning: No prompt shows 'outputs.summary': no step generates a field of 'Notes' "
        "(task.archive.notes) or of a node below it\n"
        '        """! @all->notes@{{outputs.summary=summary}}"""\n'
        "                           ^~~~~~~~~~~~~~~~~~~~~~~\n"
        f"  in TaskArchive ({FILE}:{line_of('! @all->notes@{{outputs.summary')})\n"
        f"  hint: {NODE_HINT}"
    )


class Memo(TreeNode):
    """A memo for {reader}."""

    text: str = Field(default="", description="The text.")


class TaskDossier(TreeNode):
    """! @all->memo@{{prompt.reader=reader}}"""

    reader: str = Field(description="The reader.")
    memo: Memo = Field(default=Memo(), description="The memo.")


def test_a_prompt_value_named_only_in_texts_no_prompt_shows_is_a_warning() -> None:
    assert warnings(TaskDossier) == [
        (
            "No prompt shows 'prompt.reader': no step generates a field of 'Memo' "
            "(task.dossier.memo) or of a node below it",
            NODE_HINT,
        )
    ]


class TaskPanel(TreeNode):
    """! @all->budget@{{outputs.remarks=remarks}}"""

    remarks: str = Field(default="", description="The remarks.")
    budget: int = Field(default=100, description="The budget.")
    verdict: str = Field(description="Accept or reject.")


def test_outputs_into_a_leaf_no_step_generates_is_a_warning() -> None:
    assert warnings(TaskPanel) == [
        (
            "No prompt shows 'outputs.remarks': no step generates 'TaskPanel.budget' (task.panel)",
            "send it to a field a model generates, or to its node, whose steps all show it; "
            "or remove the mapping",
        )
    ]


class Summary(TreeNode):
    overview: str = Field(description="The overview.")


class Chapter(TreeNode):
    heading: str = Field(default="", description="The heading.")
    paragraphs: list[Summary] = Field(default=[], description="The paragraphs.")


class TaskDelivered(TreeNode):
    """! @all->summary@{{prompt.topic=topic, outputs.topic=topic}}
    ! @all->summary.overview@{{outputs.angle=topic}}
    ! @all->chapter@{{outputs.topic=topic}}
    ! @all->verdict@{{outputs.topic=topic}}
    """

    topic: str = Field(description="The topic.")
    summary: Summary = Field(description="Generated whole in this node's step.")
    chapter: Chapter = Field(default=Chapter(), description="Known, with steps below it.")
    verdict: str = Field(description="A leaf of this node.")


def test_what_a_step_shows_is_no_warning() -> None:
    assert warnings(TaskDelivered) == []
