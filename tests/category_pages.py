"""A catalogue whose ``@each`` writes each product's sku and blurb into the entries of a
category page, whose intro shows those entries: the structure tests check that the intro's
step waits for what the ``@each`` writes, the runtime tests the prompt it is shown."""

from pydantic import Field

from langtree import TreeNode


class Product(TreeNode):
    sku: str = Field(description="Stock number.")
    name: str = Field(description="The product's name.")
    blurb: str = Field(description="One line about it.")


class TaskCatalogue(TreeNode):
    """Describe the products."""

    products: list[Product] = Field(
        default=[],
        description="! @each[products]->task.category_page@{{"
        "value.entries.sku=products.sku, value.entries.blurb=products.blurb}}*",
    )


class Entry(TreeNode):
    sku: str = Field(description="Stock number.")
    blurb: str = Field(description="One line.")


class TaskCategoryPage(TreeNode):
    """Write the page of a category."""

    entries: list[Entry] = Field(default=[], description="The products on the page.")
    intro: str = Field(description="An introduction to the products.")


PRODUCTS = {TaskCatalogue: {"products": [{"sku": "a1"}, {"sku": "b2"}]}}
