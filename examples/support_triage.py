"""Triage a support ticket, then draft the first reply with a stronger model.

The caller supplies the ticket. A fast model files it (category and a one-line summary
for the agent, in one call) and sets its priority three times, keeping the most frequent
answer. The reply the customer reads is drafted by the strong model: ``override=true``
makes every step under ``Reply`` use it, whatever the nodes below choose.

Model keys: ``MODEL_KEYS`` (``LLMProvider({"default": ..., "fast": ..., "strong": ...})``).
Check it, and preview its prompts offline (no model is called)::

    langtree check examples/support_triage.py
    langtree prompts examples/support_triage.py:TaskTriageTicket --input TICKET.json

where ``TICKET.json`` holds the ``TaskTriageTicket`` entry of
``examples/inputs/support_triage.json`` (``--input`` takes one task's values).
"""

from enum import Enum

from pydantic import Field

from langtree import TreeNode

MODEL_KEYS = ("default", "fast", "strong")


class Category(Enum):
    BILLING = "billing"
    BUG = "bug"
    ACCOUNT = "account"
    FEATURE_REQUEST = "feature request"


class Priority(Enum):
    LOW = 1
    NORMAL = 2
    HIGH = 3
    URGENT = 4


class Reply(TreeNode):
    """
    ! llm("strong", override=true)  # customers read this: the strong model writes all of it

    Draft the first reply to the customer. Answer in their terms, say what happens next,
    and never promise a date or a refund the team has not confirmed.

    The customer wrote:

    {message}
    """

    category: Category = Field(description="What the ticket is about, as triaged.")
    subject_line: str = Field(description="The reply's subject line, at most eight words.")
    body: str = Field(description="The reply, at most 120 words, signed 'The Support Team'.")


class TaskTriageTicket(TreeNode):
    """
    ! triage_model="fast"  # the one place to change the triage model
    ! llm(triage_model)
    ! together
    ! @all->reply@{{value.category=category}}

    You triage the tickets that reach the support desk of a subscription software
    company.
    """

    subject: str = Field(description="The ticket's subject, as the customer wrote it.")
    message: str = Field(description="The customer's message.")
    customer_plan: str = Field(description="The customer's plan: free, team or enterprise.")
    category: Category = Field(description="What the ticket is about.")
    summary: str = Field(description="One sentence for the agent who picks the ticket up.")
    priority: Priority = Field(
        description="""
        How soon the team must act: URGENT when the customer cannot work at all, HIGH when
        a paying customer is blocked, NORMAL for errors with a workaround, LOW for
        questions and wishes.

        ! resample(3)
        ! @resampled[priority]->mode  # the most frequent of three answers
        """
    )
    reply: Reply = Field(description="The first reply to the customer.")
