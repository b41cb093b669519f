"""Rate a product review several times and keep the consensus.

``resample(5)`` asks the model five times; the rating is the mean of the five answers
mapped back to the nearest level, and the verdict is the most frequent answer.

Model keys: ``MODEL_KEYS`` (``LLMProvider({"default": ...})``).
Check it, and preview its prompts offline (no model is called)::

    langtree check examples/review_rating.py
    langtree prompts examples/review_rating.py:TaskRateReview --input REVIEW.json

where ``REVIEW.json`` holds the ``TaskRateReview`` entry of
``examples/inputs/review_rating.json`` (``--input`` takes one task's values).
"""

from enum import Enum

from pydantic import Field

from langtree import TreeNode

MODEL_KEYS = ("default",)


class Rating(Enum):
    POOR = 1
    FAIR = 2
    GOOD = 3
    EXCELLENT = 4


class Verdict(Enum):
    RECOMMEND = "recommend"
    NEUTRAL = "neutral"
    AVOID = "avoid"


class TaskRateReview(TreeNode):
    """
    ! samples=5  # how many times the model rates the review
    ! resample(samples)
    ! @resampled[rating]->mean
    ! @resampled[verdict]->mode
    ! llm("default")

    Read the customer's review and rate the product it describes.
    """

    review: str = Field(
        description="""
        The review, as the customer wrote it.

        ! input()  # the caller gives it: a model never writes the review
        """
    )
    rating: Rating = Field(description="How good the product is, judged from the review.")
    verdict: Verdict = Field(description="Whether the reviewer would recommend the product.")
