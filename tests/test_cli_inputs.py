"""``langtree --version``, ``graph --input``, and runs refused for inputs only the caller has."""

import json
from importlib.metadata import version
from pathlib import Path

import pytest
from command_line import EXAMPLES, REVIEWS, refused, shown, write

from langtree._version import DISTRIBUTION
from langtree.cli import main

PHOTO = json.loads((EXAMPLES / "inputs" / "product_photo.json").read_text())["TaskDescribeProduct"][
    "photo"
]

SHOP = '''
from pydantic import Field

from langtree import Asset, TreeNode


class TaskDescribeProduct(TreeNode):
    """Describe the product in the photo."""

    name: str = Field(description="The product's name.")
    photo: Asset = Field(description="! @all->task.caption@{{value.photo=photo}}\\nThe photo.")
    back: Asset | None = Field(description="The back of the box, or null.")
    description: str = Field(description="Two sentences for the listing.")


class TaskCaption(TreeNode):
    """Caption the photo."""

    photo: Asset = Field(description="The photo.")
    caption: str = Field(description="A caption.")
'''


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--version"])

    assert caught.value.code == 0
    assert capsys.readouterr().out == f"langtree {version(DISTRIBUTION)}\n"


def test_graph_draws_the_fields_the_inputs_give_as_known(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = shown(
        capsys,
        "graph",
        str(REVIEWS),
        "--input",
        str(EXAMPLES / "inputs" / "review_rating.json"),
    )

    assert (status, err) == (0, "")
    assert out == (
        "flowchart TD\n"
        '    s0["task.rate_review\nrating\nmodel: default, resample: 5"]\n'
        '    s1["task.rate_review\nverdict\nmodel: default, resample: 5"]\n'
        "    s0 --> s1\n"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            '{"TaskNope": {}}',
            "LangTree found 1 problem:\n\n"
            "error: Inputs name 'TaskNope', which is not an added task\n"
            "  hint: the added tasks are 'task.rate_review'\n",
            id="unknown-task",
        ),
        pytest.param(
            '["Great kettle."]',
            "Inputs in {path!r} must be a JSON object, not an array\n"
            '  hint: write the values by task, e.g. {{"TaskRateReview": {{"field": "value"}}}}\n',
            id="not-an-object",
        ),
    ],
)
def test_graph_reports_inputs_that_do_not_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    path = write(tmp_path, "inputs.json", text)

    err = refused(capsys, "graph", str(REVIEWS), "--input", str(path))

    assert err == "langtree: error: " + message.format(path=str(path))


MISSING = (
    "langtree: error: Missing input(s): no step generates them and nothing else gives them "
    "a value\n"
    "  - TaskDescribeProduct.photo: Asset\n"
    "  - TaskDescribeProduct.back: Asset | None\n"
)


@pytest.mark.parametrize(
    ("task", "example"),
    [
        # The example of a whole tree's inputs names each task; one task's are its own.
        pytest.param("", '{"TaskDescribeProduct": {"photo": "...", "back": "..."}}', id="tree"),
        pytest.param(":TaskDescribeProduct", '{"photo": "...", "back": "..."}', id="one-task"),
    ],
)
def test_a_run_without_the_inputs_it_needs_is_refused_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], task: str, example: str
) -> None:
    tree = write(tmp_path, "shop.py", SHOP)

    err = refused(capsys, "run", f"{tree}{task}", "--model", "fake")

    assert err == MISSING + f"  hint: pass them with --input FILE.json, e.g. {example}\n"


def test_an_input_file_that_lacks_them_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = write(tmp_path, "shop.py", SHOP)
    inputs = write(tmp_path, "kettle.json", '{"name": "Kettle K2", "back": null}')

    err = refused(
        capsys, "run", f"{tree}:TaskDescribeProduct", "--input", str(inputs), "--model", "fake"
    )

    assert err == (
        "langtree: error: Missing input(s): no step generates them and nothing else gives "
        "them a value\n"
        "  - TaskDescribeProduct.photo: Asset\n"
        f'  hint: add them to {str(inputs)!r}, e.g. {{"photo": "..."}}\n'
    )


def test_a_run_with_the_inputs_it_needs_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = write(tmp_path, "shop.py", SHOP)
    inputs = tmp_path / "kettle.json"
    inputs.write_text(json.dumps({"TaskDescribeProduct": {"photo": PHOTO, "back": None}}))

    # TaskCaption's photo is written by TaskDescribeProduct's mapping: nothing to give.
    status, out, _ = shown(capsys, "run", str(tree), "--input", str(inputs), "--model", "fake")

    assert status == 0
    assert set(json.loads(out)) == {"TaskDescribeProduct", "TaskCaption"}


def test_a_run_whose_fields_can_all_be_generated_needs_no_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tree = tmp_path / "story.py"
    tree.write_text(
        "from langtree import TreeNode\n\n\n"
        "class TaskStory(TreeNode):\n"
        '    """Write a very short story."""\n\n'
        "    title: str\n"
        "    text: str\n"
    )

    status, out, _ = shown(capsys, "run", str(tree), "--model", "fake")

    assert status == 0
    assert set(json.loads(out)["TaskStory"]) == {"title", "text"}


def test_a_field_marked_input_is_never_invented(capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(capsys, "run", str(REVIEWS), "--model", "fake")

    assert err == (
        "langtree: error: Missing input(s): no step generates them and nothing else gives them "
        "a value\n"
        "  - TaskRateReview.review: str\n"
        '  hint: pass them with --input FILE.json, e.g. {"TaskRateReview": {"review": "..."}}\n'
    )


def test_a_path_in_an_input_file_is_read_only_from_the_folders_config_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = write(tmp_path, "shop.py", SHOP)
    photos = tmp_path.resolve() / "photos"
    photos.mkdir()
    (photos / "kettle.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    photo = str(photos / "kettle.png")
    inputs = tmp_path / "kettle.json"
    inputs.write_text(json.dumps({"TaskDescribeProduct": {"photo": photo, "back": None}}))
    config = tmp_path / "settings.json"
    config.write_text(json.dumps({"asset_folders": [str(photos)]}))

    err = refused(capsys, "run", str(tree), "--input", str(inputs), "--model", "fake")

    assert err == (
        f"langtree: error: The asset file {photo!r} of 'TaskCaption.photo' is "
        "not in a folder that asset_folders names (it names none)\n"
        "  hint: LangTree reads local files only from the folders a run names: "
        "RunStructure({'asset_folders': ['<folder>']}) or run(..., asset_folders=[...]) "
        '("asset_folders" in a --config file for the command line); or give the asset as a '
        "URL, bytes or a data: URI\n"
    )

    status, out, err = shown(
        capsys, "run", str(tree), "--input", str(inputs), "--model", "fake", "--config", str(config)
    )

    assert status == 0
    assert json.loads(out)["TaskCaption"]["photo"]["path"] == photo
