"""Trees that both what a step knows (test_known.py) and what it waits for (test_plan.py)
are checked on: one ``@each`` whose data is a field of each element, one whose targets
lie in elements it creates."""

from pydantic import Field

from langtree import TreeNode


class Chapter(TreeNode):
    title: str
    summary: str


class TaskBook(TreeNode):
    chapters: list[Chapter] = Field(
        default=[],
        description="! @each[chapters]->task.digest@{{value.summaries=chapters.summary}}*",
    )


class TaskDigest(TreeNode):
    summaries: list[str]
    digest: str


class Row(TreeNode):
    label: str
    detail: str


class TaskLabels(TreeNode):
    labels: list[str] = Field(
        description="! @each[labels]->task.table.rows@{{value.label=labels}}*"
    )


class TaskTable(TreeNode):
    rows: list[Row]
    caption: str
