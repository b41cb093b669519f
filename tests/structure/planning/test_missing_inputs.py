"""``missing_inputs``: required fields that only the caller can give, and did not."""

import pytest
from pydantic import Field

from langtree import Asset, RunStructure, TreeNode


class TaskShoot(TreeNode):
    """Describe the photo."""

    photo: Asset = Field(description="! @all->task.caption@{{value.photo=photo}}\nThe photo.")
    notes: str = Field(description="Notes.")


class TaskCaption(TreeNode):
    """Caption the photo."""

    photo: Asset = Field(description="The photo, from the shoot.")
    back: Asset | None = Field(description="The back of the box, or None.")
    extra: Asset | None = Field(default=None, description="Another view.")
    caption: str = Field(description="A caption.")


@pytest.fixture
def structure() -> RunStructure:
    structure = RunStructure()
    structure.add(TaskShoot)
    structure.add(TaskCaption)
    return structure


def names(missing: dict[str, tuple]) -> dict[str, list[str]]:
    return {tag: [node_field.name for node_field in fields] for tag, fields in missing.items()}


def test_required_assets_that_nothing_fills_are_missing(structure: RunStructure) -> None:
    # Generated fields (notes, caption) are not inputs; a mapping fills TaskCaption.photo;
    # a default None fills extra, while back, though nullable, must be given.
    assert names(structure.missing_inputs()) == {
        "task.caption": ["back"],
        "task.shoot": ["photo"],
    }


def test_supplied_fields_are_not_missing(structure: RunStructure) -> None:
    inputs = {TaskShoot: {"photo": "photo.png"}, "task.caption": {"back": None}}

    assert structure.missing_inputs(inputs) == {}
