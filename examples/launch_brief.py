"""Write a product launch brief, then one launch post per channel from it.

The caller supplies the product, its audience and the facts of the release. A first task
works out the positioning and the key messages, in that order. A second task writes one
post per channel the caller lists: every post is told the product's name and audience
(``prompt.`` variables), and gets the whole brief as context (``outputs.``, with ``*``
for every element of the list). Posts are written by the model the ``copy_model``
assembly variable names.

Model keys: ``MODEL_KEYS`` (``LLMProvider({"default": ..., "strong": ...})``).
Check it, and preview its prompts offline (no model is called)::

    langtree check examples/launch_brief.py
    langtree prompts examples/launch_brief.py --input INPUTS.json

``examples/inputs/launch_brief.json`` holds realistic inputs by task class; the command
line wants them by task tag: ``{"task.plan_launch": ..., "task.write_launch_posts": ...}``.
"""

from pydantic import Field

from langtree import TreeNode

MODEL_KEYS = ("default", "strong")


class TaskPlanLaunch(TreeNode):
    """
    ! @sequential
    ! # every post gets the whole brief as context, once the brief is written
    ! @all->task.write_launch_posts.posts@{{outputs.launch_brief=*}}*

    You are the product marketer preparing the launch of {product}.
    Work only from the facts you are given: do not invent features, prices or dates.
    """

    product: str = Field(
        description="""
        The product's name.

        ! @all->task.write_launch_posts@{{prompt.product=product}}
        """
    )
    audience: str = Field(
        description="""
        Who the launch is for.

        ! @all->task.write_launch_posts@{{prompt.audience=audience}}
        """
    )
    facts: list[str] = Field(description="What is true about the release, one fact each.")
    positioning: str = Field(
        description="One sentence: who the product is for, and why it beats what they use today."
    )
    key_messages: list[str] = Field(
        description="Three short messages every post must carry, the most important first."
    )


class Post(TreeNode):
    """
    ! llm(copy_model)

    Write the launch post for {channel}, in at most {max_words} words.
    """

    channel: str = Field(description="Where the post appears.")
    max_words: int = Field(default=150, description="The channel's length limit, in words.")
    headline: str = Field(description="A headline that fits the channel.")
    body: str = Field(description="The post, carrying the brief's key messages.")


class TaskWriteLaunchPosts(TreeNode):
    """
    ! copy_model="strong"  # customer-facing copy comes from the strong model

    Write the launch posts for {product}, for {audience}.
    Keep them friendly and concrete: no superlatives, no exclamation marks.
    """

    posts: list[Post] = Field(default=[], description="One post per channel.")
