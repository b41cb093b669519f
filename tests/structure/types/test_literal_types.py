"""A literal a mapping sends must fit its target field, checked at ``validate()``
(docs/dsl.md, "Literals in mappings")."""

from enum import Enum
from pathlib import Path
from typing import Literal

import pytest
from pydantic import Field

from langtree import RunStructure, StructureError, TreeNode


class Status(Enum):
    DRAFT = "draft"
    FINAL = "final"


class Note(TreeNode):
    text: str = Field(default="", description="A note.")


class TaskReview(TreeNode):
    """Review the report."""

    title: str = ""
    count: int = 0
    share: float = 0.0
    final: bool = False
    status: Status = Status.FINAL
    stage: Literal["draft", "final"] = "final"
    limit: int | None = None
    tags: list[str] = Field(default=[])
    note: Note | None = None
    verdict: str = Field(description="The verdict.")


def problems(mapping: str, config: dict[str, object] | None = None) -> list[tuple[str, str]]:
    """The message and hint of each problem of ``@all->task.review@{{mapping}}``."""

    class TaskReport(TreeNode):
        """A report."""

        body: str = Field(default="", description=f"! @all->task.review@{{{{{mapping}}}}}")

    structure = RunStructure(config)  # type: ignore[arg-type]
    structure.add(TaskReport)
    structure.add(TaskReview)
    try:
        structure.validate()
    except StructureError as error:
        return [(d.message, d.hint) for d in error.diagnostics]
    return []


FITTING = {
    "string": 'value.title="Q3"',
    "integer": "value.count=3",
    "integer-into-float": "value.share=3",
    "float": "value.share=0.25",
    "boolean": "value.final=true",
    "enum-value": 'value.status="draft"',
    "literal-type": 'value.stage="draft"',
    "optional": "value.limit=10",
    "prompt-variable": 'prompt.tone="calm"',
}


@pytest.mark.parametrize("mapping", FITTING.values(), ids=FITTING.keys())
def test_a_literal_that_fits_its_target_validates(mapping: str) -> None:
    assert problems(mapping) == []


TYPE_HINT = "write a value of type {}, or map a field that holds one"


@pytest.mark.parametrize(
    ("mapping", "message", "hint"),
    [
        pytest.param(
            'value.count="3"',
            'Literal "3" in variable mapping does not fit task.review.count (int)',
            TYPE_HINT.format("int"),
            id="string-into-int",
        ),
        pytest.param(
            "value.count=2.5",
            "Literal 2.5 in variable mapping does not fit task.review.count (int)",
            TYPE_HINT.format("int"),
            id="float-into-int",
        ),
        pytest.param(
            "value.count=true",
            "Literal true in variable mapping does not fit task.review.count (int)",
            TYPE_HINT.format("int"),
            id="boolean-into-int",
        ),
        pytest.param(
            "value.final=1",
            "Literal 1 in variable mapping does not fit task.review.final (bool)",
            TYPE_HINT.format("bool"),
            id="integer-into-bool",
        ),
        pytest.param(
            'value.status="done"',
            'Literal "done" in variable mapping does not fit task.review.status (Status)',
            'write one of the values of Status: "draft", "final"',
            id="not-an-enum-value",
        ),
        pytest.param(
            'value.stage="done"',
            'Literal "done" in variable mapping does not fit task.review.stage '
            "(Literal['draft', 'final'])",
            TYPE_HINT.format("Literal['draft', 'final']"),
            id="not-a-literal-choice",
        ),
        pytest.param(
            'value.tags="urgent"',
            'Literal "urgent" in variable mapping does not fit task.review.tags (list[str])',
            TYPE_HINT.format("list[str]"),
            id="into-a-list",
        ),
        pytest.param(
            'value.note="text"',
            'Literal "text" in variable mapping does not fit task.review.note (Note | None)',
            TYPE_HINT.format("Note | None"),
            id="into-a-node",
        ),
    ],
)
def test_a_literal_that_does_not_fit_is_refused(mapping: str, message: str, hint: str) -> None:
    assert problems(mapping) == [(message, hint)]


def test_a_permissive_strategy_does_not_convert_a_literal() -> None:
    found = problems('value.count="3"', {"validation_strategy": "permissive"})

    assert found == [
        (
            'Literal "3" in variable mapping does not fit task.review.count (int)',
            TYPE_HINT.format("int"),
        )
    ]


class TaskSheet(TreeNode):
    """A sheet."""

    body: str = Field(default="", description='! @all->task.review@{{value.count="3"}}')


def test_the_error_points_at_the_literal_mapping() -> None:
    structure = RunStructure()
    structure.add(TaskSheet)
    structure.add(TaskReview)
    lines = Path(__file__).read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if '@{{value.count="3"}}' in text)

    with pytest.raises(StructureError) as raised:
        structure.validate()

    assert str(raised.value) == (
        "LangTree found 1 problem:\n\n"
        'error: Literal "3" in variable mapping does not fit task.review.count (int)\n'
        f"    {lines[line - 1]}\n" + " " * 73 + "^~~~~~~~~~~~~~~\n"
        f"  in TaskSheet.body ({__file__}:{line})\n"
        f"  hint: {TYPE_HINT.format('int')}"
    )
