"""Assets in prompts: placeholders in the text, content blocks in the human message."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field, ValidationError

from langtree import Asset, ExecutionError, Prompts, RunStructure, StructureError, TreeNode
from langtree.prompts._attachments import ASSET_TOKENS, content_blocks
from langtree.prompts._tokens import count_tokens

PNG = b"\x89PNG\r\n\x1a\n"


class TaskDescribe(TreeNode):
    """
    Describe the product shown in {photo}.
    """

    photo: Asset = Field(description="The product photo.")
    manuals: list[Asset] = Field(default=[], description="The product's manuals.")
    caption: str = Field(description="One sentence for the shop.")


def prompt_for(values: dict[str, object], config: dict[str, object] | None = None):  # type: ignore[no-untyped-def]
    structure = RunStructure(config)
    structure.add(TaskDescribe)
    [prompt] = structure.prompts({TaskDescribe: values})
    return prompt


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (
            "https://example.com/a.jpg",
            {"url": "https://example.com/a.jpg", "media_type": "image/jpeg"},
        ),
        ("photos/a.png", {"path": Path("photos/a.png"), "media_type": "image/png"}),
        ("data:image/png;base64,iVBORw==", {"data": b"\x89PNG", "media_type": "image/png"}),
        ("data:text/plain,hi%20there", {"data": b"hi there", "media_type": "text/plain"}),
        ({"url": "data:image/gif;base64,R0lG"}, {"data": b"GIF", "media_type": "image/gif"}),
        ({"data": PNG, "media_type": "image/png"}, {"data": PNG, "media_type": "image/png"}),
    ],
    ids=["url", "path", "data-uri", "data-uri-text", "url-data-uri", "bytes"],
)
def test_asset_sources(given: object, expected: dict[str, object]) -> None:
    asset = Asset.model_validate(given)
    assert {k: v for k, v in asset.model_dump().items() if v is not None} == expected


@pytest.mark.parametrize(
    ("media_type", "kind"),
    [
        ("image/png", "image"),
        ("video/mp4", "video"),
        ("audio/wav", "audio"),
        ("application/pdf", "document"),
    ],
)
def test_asset_kind(media_type: str, kind: str) -> None:
    assert Asset(data=b"x", media_type=media_type).kind == kind


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            {"path": "notes.unknownsuffix"},
            "the asset's media type cannot be guessed from 'notes.unknownsuffix': pass "
            "media_type, e.g. media_type='image/png'",
        ),
        (
            {"data": b"x"},
            "the asset's media type cannot be guessed: pass media_type, "
            "e.g. media_type='image/png'",
        ),
        (
            {"url": "https://example.com/a.png", "data": b"x"},
            "an Asset takes exactly one of url, path and data, got 2 (url, data)",
        ),
        ("data:image/png;base64", "a data: URI needs a ',' before its data"),
    ],
    ids=["no-media-type", "bytes-without-media-type", "two-sources", "bad-data-uri"],
)
def test_asset_errors(given: object, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Asset.model_validate(given)
    assert caught.value.errors()[0]["msg"] == f"Value error, {message}"


def test_prompt_shows_placeholders_and_sends_blocks() -> None:
    photo = Asset(data=PNG, media_type="image/png", title="Front view")
    manual = Asset(url="https://example.com/manual.pdf", title="Manual")
    prompt = prompt_for({"photo": photo, "manuals": [manual]})

    human = prompt.messages[1]
    assert human.content[1:] == [
        {"type": "image", "mime_type": "image/png", "base64": "iVBORw0KGgo="},
        {
            "type": "file",
            "mime_type": "application/pdf",
            "url": "https://example.com/manual.pdf",
            "extras": {"filename": "Manual"},
        },
    ]
    assert human.content[0] == {"type": "text", "text": human.text}
    assert human.text == (
        "# Describe\n\nDescribe the product shown in [image 1: Front view].\n\n"
        "## Caption\n\nOne sentence for the shop.\n\n"
        "# Context\n\n## Photo\n\n[image 1: Front view]\n\n## Manuals\n\n[document 2: Manual]\n\n"
        "# Output\n\nWrite Caption.\n"
    )
    assert "iVBOR" not in prompt.text
    assert prompt.assets == (photo, manual)


def test_token_count_adds_an_estimate_per_asset() -> None:
    prompt = prompt_for({"photo": "https://example.com/a.png", "manuals": ["https://e.com/m.pdf"]})
    text_tokens = count_tokens(prompt.text).count
    assert prompt.token_count == text_tokens + ASSET_TOKENS["image"] + ASSET_TOKENS["document"]
    assert (ASSET_TOKENS["image"], ASSET_TOKENS["document"]) == (85, 258)


def test_path_is_read_when_the_prompt_is_assembled(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(PNG)
    prompt = prompt_for({"photo": str(tmp_path / "a.png")}, {"asset_folders": [tmp_path]})
    assert prompt.messages[1].content[1] == {
        "type": "image",
        "mime_type": "image/png",
        "base64": "iVBORw0KGgo=",
    }


def test_prompts_read_paths_only_from_the_named_folders(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(PNG)
    with pytest.raises(ExecutionError) as caught:
        prompt_for({"photo": str(tmp_path / "a.png")})
    assert str(caught.value).startswith(
        f"The asset file {str(tmp_path / 'a.png')!r} of 'TaskDescribe.photo' is not in "
        "a folder that asset_folders names (it names none)\n"
    )


def test_missing_path_is_an_execution_error(tmp_path: Path) -> None:
    missing = tmp_path / "gone.png"
    with pytest.raises(ExecutionError) as caught:
        prompt_for({"photo": str(missing)}, {"asset_folders": [tmp_path]})
    assert str(caught.value) == (
        f"Cannot read the asset file {str(missing)!r} of 'TaskDescribe.photo': "
        "No such file or directory\n"
        "  hint: paths are read when the prompt is assembled, relative to the working directory"
    )


def test_the_same_asset_is_sent_once() -> None:
    photo = Asset(url="https://example.com/a.png")
    prompt = prompt_for({"photo": photo, "manuals": [photo]})
    assert len(prompt.messages[1].content) == 2
    assert prompt.text.count("[image 1]") == 3


def test_prompt_without_assets_keeps_text_content() -> None:
    class TaskPlain(TreeNode):
        topic: str
        summary: str

    structure = RunStructure()
    structure.add(TaskPlain)
    [prompt] = structure.prompts({TaskPlain: {"topic": "tea"}})
    assert isinstance(prompt.messages[1].content, str)
    assert prompt.assets == ()


def test_asset_fields_are_never_generated() -> None:
    structure = RunStructure()
    structure.add(TaskDescribe)
    assert structure.validate() == ()
    assert [step.fields for step in structure.plan().steps] == [("caption",)]


class Shot(TreeNode):
    image: Asset = Field(description="The shot.")
    note: str


class TaskAlbum(TreeNode):
    """Make an album."""

    shots: list[Shot] = Field(description="The shots.")


def test_asset_inside_a_node_generated_whole_is_a_structure_error() -> None:
    structure = RunStructure()
    structure.add(TaskAlbum)
    with pytest.raises(StructureError) as caught:
        structure.validate()
    [diagnostic] = caught.value.diagnostics
    assert (diagnostic.class_name, diagnostic.field_name) == ("Shot", "image")
    assert diagnostic.message == (
        "'Shot.image' holds assets, which are inputs only: a step would generate it, inside "
        "the node generated whole by 'TaskAlbum.shots'"
    )
    assert diagnostic.hint == (
        "supply 'image' in the inputs (or by a command), or give 'shots' a value so that "
        "the fields below it get steps of their own"
    )


def unread(asset: Asset) -> bytes:
    raise AssertionError(f"{asset!r} holds no path: nothing to read")


def test_content_blocks_for_each_kind() -> None:
    assets = [
        Asset(url="https://example.com/v.mp4"),
        Asset(data=b"RIFF", media_type="audio/wav"),
        Asset(data=b"%PDF", media_type="application/pdf"),
    ]
    assert content_blocks(assets, read_file=unread) == [
        {"type": "video", "mime_type": "video/mp4", "url": "https://example.com/v.mp4"},
        {"type": "audio", "mime_type": "audio/wav", "base64": "UklGRg=="},
        {"type": "file", "mime_type": "application/pdf", "base64": "JVBERg=="},
    ]


# -- assets in plain containers ------------------------------------------------------------


class TaskCatalogue(TreeNode):
    """
    Describe the product from {views}.
    """

    cover: Asset | None = Field(default=None, description="The cover photo, if any.")
    views: dict[str, Asset] = Field(description="Photos by the side they show.")
    pages: list[Asset] = Field(default=[], description="The leaflet's pages.")
    blurb: str = Field(description="Three sentences.")


def catalogue(values: dict[str, object]):  # type: ignore[no-untyped-def]
    structure = RunStructure()
    structure.add(TaskCatalogue)
    [prompt] = structure.prompts({TaskCatalogue: values})
    return prompt


def test_assets_in_dicts_lists_and_optional_fields_are_numbered_in_order() -> None:
    cover = Asset(url="https://e.com/cover.png", title="Cover")
    front, back = Asset(url="https://e.com/front.png"), Asset(url="https://e.com/back.jpg")
    page = Asset(url="https://e.com/page.pdf", title="Page 1")
    prompt = catalogue(
        {"cover": cover, "views": {"front": front, "back": back}, "pages": [page, front]}
    )

    assert prompt.assets == (front, back, cover, page)
    assert [block["url"] for block in prompt.messages[1].content[1:]] == [
        "https://e.com/front.png",
        "https://e.com/back.jpg",
        "https://e.com/cover.png",
        "https://e.com/page.pdf",
    ]
    views = '{\n  "front": "[image 1]",\n  "back": "[image 2]"\n}'
    assert prompt.messages[1].text == (
        f"# Catalogue\n\nDescribe the product from {views}.\n\n"
        "## Blurb\n\nThree sentences.\n\n"
        "# Context\n\n## Cover\n\n[image 3: Cover]\n\n"
        f"## Views\n\n{views}\n\n"
        "## Pages\n\n[document 4: Page 1]\n[image 1]\n\n"
        "# Output\n\nWrite Blurb.\n"
    )
    estimate = 3 * ASSET_TOKENS["image"] + ASSET_TOKENS["document"]
    assert prompt.token_count == count_tokens(prompt.text).count + estimate
    assert prompt.asset_fields == (
        "TaskCatalogue.views",
        "TaskCatalogue.views",
        "TaskCatalogue.cover",
        "TaskCatalogue.pages",
    )


def test_an_optional_asset_nobody_gave_is_null() -> None:
    prompt = catalogue({"views": {}})
    assert prompt.assets == ()
    assert "## Cover\n\nnull\n\n## Views\n\n{}\n\n## Pages\n\n[]\n" in prompt.text


# -- required assets ----------------------------------------------------------------------------


def test_prompts_refuse_a_required_asset_nobody_gave() -> None:
    with pytest.raises(ExecutionError) as caught:
        catalogue({})
    assert str(caught.value).startswith(
        "Missing asset(s): task.catalogue.views ('TaskCatalogue.views'); assets are inputs"
    )


class Photo(TreeNode):
    """Caption the photo."""

    image: Asset = Field(description="The photo.")
    caption: str = Field(description="One line.")


class TaskGallery(TreeNode):
    """Caption every photo."""

    photos: list[Photo] = Field(description="The photos.")


def test_a_missing_asset_is_named_by_its_instance() -> None:
    structure = RunStructure()
    structure.add(TaskGallery)
    photos = [{"image": "https://e.com/0.png"}, {}, {"image": "https://e.com/2.png"}, {}]
    with pytest.raises(ExecutionError) as caught:
        structure.prompts({TaskGallery: {"photos": photos}})
    assert str(caught.value) == (
        "Missing asset(s): task.gallery.photos[1].image ('Photo.image'), "
        "task.gallery.photos[3].image ('Photo.image'); assets are inputs, and no input, "
        "default or command gives these\n"
        "  hint: pass each in the inputs (an Asset, or a URL, a path or a data: URI), or make "
        "the field optional with a default of None (image: Asset | None = None)"
    )


class Frame(TreeNode):
    """Caption the frame."""

    image: Asset = Field(description="The frame.")
    caption: str = Field(description="One line.")


class TaskFilm(TreeNode):
    """
    ! @each[stills]->frames@{{value.image=stills}}*
    Caption every still.
    """

    stills: list[Asset] = Field(description="The stills.")
    frames: list[Frame] = Field(default=[], description="The frames.")


def film_prompts(stills: list[object]) -> Prompts:
    """The prompts of ``TaskFilm``, whose ``@each`` sends each of ``stills`` to a frame."""
    structure = RunStructure()
    structure.add(TaskFilm)
    return structure.prompts({TaskFilm: {"stills": stills}})


def test_an_asset_a_command_gives_is_not_missing() -> None:
    stills = [Asset(url="https://e.com/0.png"), Asset(url="https://e.com/1.png")]
    prompts = film_prompts(stills)
    assert [prompt.node_path for prompt in prompts] == [
        "task.film.frames[0]",
        "task.film.frames[1]",
    ]


def test_a_command_maps_assets_given_as_text() -> None:
    prompts = film_prompts(["https://e.com/0.png", "data:image/png;base64,iVBORw=="])
    assert [prompt.assets for prompt in prompts] == [
        (Asset(url="https://e.com/0.png"),),
        (Asset(data=b"\x89PNG", media_type="image/png"),),
    ]
