"""Turn a meeting's raw notes into minutes, and one follow-up per agenda item.

The caller supplies the meeting and the notes taken on each agenda item. A model records
what was decided on every item, then writes the minutes' subject line. For every agenda
item, ``@each`` creates a follow-up in a second task (the mapping creates the list's
elements, D7), where a model names the action, its owner and its deadline in one call
(``@parallel``). The company's name is an external variable, supplied at run time.

Model keys: ``MODEL_KEYS`` (``LLMProvider({"default": ...})``).
Check it, and preview its prompts offline (no model is called)::

    langtree check examples/meeting_notes.py
    langtree prompts examples/meeting_notes.py:TaskTakeMinutes --input MEETING.json \\
        --var company="Northwind Logistics"

where ``MEETING.json`` holds the ``TaskTakeMinutes`` entry of
``examples/inputs/meeting_notes.json`` (``--input`` takes one task's values).
"""

from pydantic import Field

from langtree import TreeNode

MODEL_KEYS = ("default",)


class AgendaItem(TreeNode):
    """
    Record what the meeting decided on this agenda item, for people who were not there.
    """

    topic: str = Field(description="The agenda item, as announced.")
    notes: str = Field(description="The notes taken while it was discussed.")
    decision: str = Field(
        description="What was decided, in one or two sentences; 'No decision.' if nothing was."
    )


class TaskTakeMinutes(TreeNode):
    """
    You write the minutes of internal meetings at {company}.
    Be factual and brief, and name people as the notes do.

    {PROMPT_SUBTREE}
    """

    meeting: str = Field(
        description="""
        The meeting's name and date.

        ! @all->task.track_follow_ups@{{prompt.meeting=meeting}}
        """
    )
    attendees: list[str] = Field(default=[], description="Who attended.")
    agenda: list[AgendaItem] = Field(
        default=[],
        description="""
        The agenda items, in the order they were discussed.

        ! @each[agenda]->task.track_follow_ups.follow_ups@{{
            value.topic=agenda.topic,
            value.notes=agenda.notes,
            value.decision=agenda.decision,
        }}*
        """,
    )
    subject: str = Field(
        description="The minutes' subject line: the meeting and its main decision, in one line."
    )


class FollowUp(TreeNode):
    """
    ! @parallel  # owner, action and deadline are decided together

    Turn the decision on this agenda item into one concrete follow-up:

    {topic}

    If the decision needs no action, write 'None' as the action and leave the owner and
    the deadline empty.
    """

    topic: str = Field(description="The agenda item.")
    notes: str = Field(description="The notes taken while it was discussed.")
    decision: str = Field(description="What the meeting decided on it.")
    action: str = Field(description="What has to happen next, starting with a verb.")
    owner: str = Field(description="The one person responsible, as named in the notes.")
    deadline: str = Field(description="The date it is due, as YYYY-MM-DD, if one was agreed.")


class TaskTrackFollowUps(TreeNode):
    """
    You keep the list of follow-ups that the team reviews every Monday.
    These come from the meeting "{meeting}".
    """

    follow_ups: list[FollowUp] = Field(default=[], description="One follow-up per agenda item.")
