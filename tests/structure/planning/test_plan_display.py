"""How an ``ExecutionPlan`` shows in a notebook (``_repr_markdown_``) and in ``repr``."""

from pydantic import Field

from langtree import RunStructure, TreeNode
from langtree.structure.planning._plan import ExecutionPlan


class Finding(TreeNode):
    """One finding."""

    claim: str = Field(description="The claim.")


class TaskAudit(TreeNode):
    """Audit the topic."""

    topic: str = Field(description="The topic.")
    findings: list[Finding] = Field(default=[], description="The findings.")
    title: str = Field(description='! llm("fast")\nA title.')
    verdict: str = Field(description="! resample(3)\nThe verdict.")
    slug: str = Field(description="""! transform("topic | lower | replace(' ', '|')")""")


def audit_plan() -> ExecutionPlan:
    structure = RunStructure()
    structure.add(TaskAudit)
    return structure.plan({TaskAudit: {"topic": "A B"}})


def test_a_plan_shows_as_a_mermaid_diagram_and_a_table_of_its_steps() -> None:
    assert audit_plan()._repr_markdown_() == (
        "**Plan**: 4 steps\n"
        "\n"
        "```mermaid\n"
        "flowchart TD\n"
        "    s0[\"task.audit\nslug\ntransform: topic | lower | replace(' ', '|')\"]\n"
        '    s1["task.audit.findings[#42;]\nclaim"]\n'
        '    s2["task.audit\ntitle\nmodel: fast"]\n'
        '    s3["task.audit\nverdict\nresample: 3"]\n'
        "    s1 --> s2\n"
        "    s0 --> s2\n"
        "    s1 --> s3\n"
        "    s2 --> s3\n"
        "```\n"
        "\n"
        "| # | node | fields | made by | waits for |\n"
        "| --- | --- | --- | --- | --- |\n"
        "| 1 | `task.audit` | slug | transform `topic \\| lower \\| replace(' ', '\\|')` | — |\n"
        "| 2 | `task.audit.findings[*]` | claim | default model | — |\n"
        "| 3 | `task.audit` | title | model `fast` | 2, 1 |\n"
        "| 4 | `task.audit` | verdict | default model ×3 | 2, 3 |"
    )


def test_a_plan_without_steps_shows_no_diagram() -> None:
    assert ExecutionPlan(steps=())._repr_markdown_() == "**Plan**: 0 steps (every field is known)"


def test_a_plan_repr_lists_its_step_ids() -> None:
    assert repr(audit_plan()) == (
        "ExecutionPlan(steps=['task.audit:slug', 'task.audit.findings:claim', "
        "'task.audit:title', 'task.audit:verdict'])"
    )
