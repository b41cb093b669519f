"""Find the KPIs a quarterly report states, keep the ones the model is sure of, and brief
the board on them.

A first task reads the report and lists every KPI it states, each with how sure the model
is that the report really states it. Two transform fields reshape that list without a
model call: ``confident`` keeps the KPIs stated with a confidence of at least 0.8, and
``overview`` counts what was found and kept. A pluck path then sends the kept KPIs' names
and values (``confident.*.name``, ``confident.*.value``) to a second task, which writes
the board's brief from them alone.

Model keys: ``MODEL_KEYS`` (``LLMProvider({"default": ...})``).
Check it, and preview its prompts offline (no model is called)::

    langtree check examples/kpi_board.py
    langtree prompts examples/kpi_board.py --input INPUTS.json

``examples/inputs/kpi_board.json`` holds realistic inputs by task class; the command line
wants them by task tag: ``{"task.find_kpis": ...}``.
"""

from pydantic import Field

from langtree import TreeNode

MODEL_KEYS = ("default",)


class Kpi(TreeNode):
    """One KPI the report states."""

    name: str = Field(description="The KPI's name, as the report writes it.")
    value: float = Field(description="Its value this quarter, as a number.")
    unit: str = Field(description="Its unit: EUR m, %, points, customers...")
    confidence: float = Field(
        description="How sure you are that the report states exactly this value, 0 to 1."
    )


class TaskFindKpis(TreeNode):
    """
    You read quarterly reports for the board. List only what the report states: never
    compute a KPI the report does not give.
    """

    report: str = Field(description="The quarterly report's text.")
    kpis: list[Kpi] = Field(description="Every KPI the report states, in reading order.")
    confident: list[Kpi] = Field(
        description="""
        ! transform("kpis | selectattr('confidence', 'ge', 0.8) | list")
        ! @all->task.brief_board@{{value.names=confident.*.name, value.values=confident.*.value}}
        """
    )
    overview: str = Field(
        description="""! transform(
            "(kpis | length) ~ ' KPIs found, ' ~ (confident | length) ~ ' stated for sure'"
        )"""
    )


class TaskBriefBoard(TreeNode):
    """
    ! together

    Brief the board on the quarter. Use only the KPIs below, with their values.
    """

    names: list[str] = Field(default=[], description="The KPIs the report states for sure.")
    values: list[float] = Field(default=[], description="Their values, in the same order.")
    headline: str = Field(description="One line: the quarter in the KPIs' words.")
    bullets: list[str] = Field(description="One bullet per KPI, in the order given.")
