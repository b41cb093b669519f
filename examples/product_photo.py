"""Describe a product for a shop from its photo.

The photo is an ``Asset``: the prompt shows ``[image 1: Front view]`` where it stands, and
the model receives the picture itself as an image content block next to the text. Asset
fields are inputs only; the listing's fields are generated.

Model keys: ``MODEL_KEYS`` (``LLMProvider({"default": ...})``; a model that reads images).
Check it, preview its prompts offline, or run it on the offline fake model::

    langtree check examples/product_photo.py
    langtree run examples/product_photo.py --input examples/inputs/product_photo.json --model fake

``examples/inputs/product_photo.json`` gives the photo as a ``data:`` URI (without it,
the run shows ``SAMPLE_PHOTO``); a URL
(``"https://..."``) or a local path (``"photos/kettle.jpg"``) works the same way.
"""

from pydantic import Field

from langtree import Asset, TreeNode

MODEL_KEYS = ("default",)

SAMPLE_PHOTO = Asset(
    url="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGM4YaMB"
    "RAwQCgAjXgSxbgN+HAAAAABJRU5ErkJggg==",
    title="Sample",
)
"""A 2x2 red PNG, so that the example runs without inputs (``--model fake``)."""


class TaskDescribeProduct(TreeNode):
    """
    You write listings for an online shop. Look at the photo of {name} and describe
    only what it shows.
    """

    name: str = Field(description="The product's name.")
    photo: Asset = Field(default=SAMPLE_PHOTO, description="The product photo.")
    colour: str = Field(description="The product's main colour, in one or two words.")
    description: str = Field(description="Two sentences for the listing, from the photo.")
