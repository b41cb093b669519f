"""Assets at run time: content blocks reach the model; what a model cannot read, and a
required asset nobody gave, stop the run before its first call; a provider's refusal is
LangTree's error, not retried."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
from pydantic import Field

from langtree import (
    Asset,
    ExecutionError,
    LLMProvider,
    ModelConfig,
    RetryPolicy,
    RunLimitError,
    RunStructure,
    StepFailedError,
    StructureError,
    TreeNode,
)
from langtree.runtime.faults._failure import deadline_keeper
from langtree.testing import FakeChatModel, FakeRequest
from tests.photos import PNG
from tests.runtime.fake_structures import structure_for

BLIND = {"image_inputs": False}


class TaskCaption(TreeNode):
    """Caption the photo for a shop."""

    photo: Asset = Field(description="The product photo.")
    caption: str = Field(description="One sentence.")


def run_with(model: FakeChatModel, method: str = "auto") -> RunStructure:
    structure = RunStructure(provider=LLMProvider({"default": ModelConfig(model, method=method)}))
    structure.add(TaskCaption)
    return structure


@pytest.mark.parametrize("method", ["function_calling", "json_mode"])
def test_model_receives_content_blocks(method: str) -> None:
    model = FakeChatModel()
    photo = Asset(data=PNG, media_type="image/png", title="Front")
    result = run_with(model, method).run({TaskCaption: {"photo": photo}})

    assert result[TaskCaption].photo == photo
    [request] = model.calls
    blocks = request.messages[1].content
    assert blocks[0]["type"] == "text"
    assert "[image 1: Front]" in blocks[0]["text"]
    assert blocks[1:2] == [{"type": "image", "mime_type": "image/png", "base64": "iVBORw0KGgo="}]
    assert "iVBOR" not in request.text
    assert "[image 1: Front]" in request.text


def test_trace_keeps_the_blocks() -> None:
    result = run_with(FakeChatModel()).run({TaskCaption: {"photo": "https://e.com/a.jpg"}})
    [record] = result.trace
    assert record.messages[1].content[1] == {
        "type": "image",
        "mime_type": "image/jpeg",
        "url": "https://e.com/a.jpg",
    }
    assert record.token_count > 85


# -- a model whose profile lacks the kind ------------------------------------------------------


class TaskListing(TreeNode):
    """
    ! @sequential
    Write a shop listing for the product in the photo.
    """

    photo: Asset = Field(description="The product photo.")
    description: str = Field(description="Two sentences.")
    slogan: str = Field(
        description="""
        One line.

        ! llm("blind")
        """
    )
    tagline: str = Field(
        description="""
        A few words.

        ! llm("blind")
        """
    )


LISTING = {TaskListing: {"photo": Asset(url="https://e.com/kettle.png", title="Front")}}


def listing(vision: FakeChatModel, blind: FakeChatModel | object) -> RunStructure:
    structure = RunStructure(provider=LLMProvider({"vision": vision, "blind": blind}))
    structure.add(TaskListing)
    return structure


def test_a_model_whose_profile_lacks_the_kind_stops_the_run_before_its_first_call() -> None:
    vision, blind = FakeChatModel(), FakeChatModel(profile=BLIND)
    with pytest.raises(StructureError) as caught:
        listing(vision, lambda: blind).run(LISTING)

    assert (vision.calls, blind.calls) == ([], [])
    [diagnostic] = caught.value.diagnostics
    assert (diagnostic.class_name, diagnostic.field_name) == ("TaskListing", "photo")
    assert diagnostic.message == (
        "'TaskListing.photo' holds an image, which model 'blind' cannot read (its profile has "
        "image_inputs=False): steps 'task.listing:slogan', 'task.listing:tagline' would send it"
    )
    assert diagnostic.hint == (
        'give the steps a model that reads images with ! llm("<key>") on the node or field; '
        "if 'blind' does read them, correct its profile where the chat model is made "
        "(profile={..., 'image_inputs': True})"
    )


def test_validate_checks_the_assets_in_the_inputs_against_the_models_built() -> None:
    structure = listing(FakeChatModel(), FakeChatModel(profile=BLIND))
    assert structure.validate() == ()  # no asset known without inputs
    with pytest.raises(StructureError) as caught:
        structure.validate(LISTING)
    [diagnostic] = caught.value.diagnostics
    assert diagnostic.message.startswith("'TaskListing.photo' holds an image, which model 'blind'")


def test_validate_builds_no_model_given_as_a_factory() -> None:
    built: list[FakeChatModel] = []

    def blind() -> FakeChatModel:
        built.append(FakeChatModel(profile=BLIND))
        return built[-1]

    assert listing(FakeChatModel(), blind).validate(LISTING) == ()
    assert built == []


def test_one_error_per_field_however_many_instances_would_send_it() -> None:
    class Shot(TreeNode):
        """Caption the shot."""

        image: Asset = Field(description="The shot.")
        caption: str = Field(description="One line.")

    class TaskAlbum(TreeNode):
        """Caption every shot."""

        shots: list[Shot] = Field(description="The shots.")

    shots = [{"image": f"https://e.com/{n}.png"} for n in range(5)]
    structure = RunStructure(provider=LLMProvider({"default": FakeChatModel(profile=BLIND)}))
    structure.add(TaskAlbum)
    with pytest.raises(StructureError) as caught:
        structure.run({TaskAlbum: {"shots": shots}})
    [diagnostic] = caught.value.diagnostics
    assert diagnostic.message == (
        "'Shot.image' holds an image, which model 'default' cannot read (its profile has "
        "image_inputs=False): step 'task.album.shots:caption' would send it"
    )


@pytest.mark.parametrize(
    ("profile", "asset"),
    [
        ({"image_inputs": True, "pdf_inputs": False}, "https://e.com/a.png"),
        ({"pdf_inputs": False}, {"data": b"notes", "media_type": "text/plain"}),
        ({"audio_inputs": False}, "https://e.com/a.png"),
    ],
    ids=["reads-images", "not-a-pdf", "other-kind"],
)
def test_a_profile_that_does_not_say_the_model_lacks_the_kind_lets_it_through(
    profile: dict[str, bool], asset: object
) -> None:
    model = FakeChatModel(profile=profile)
    run_with(model).run({TaskCaption: {"photo": asset}})
    assert len(model.calls) == 1


def test_an_external_variable_that_holds_an_asset_is_named_as_such() -> None:
    class TaskBrand(TreeNode):
        """Describe the brand whose logo is {logo}."""

        motto: str = Field(description="The brand's motto.")

    structure = RunStructure(provider=LLMProvider({"default": FakeChatModel(profile=BLIND)}))
    structure.add(TaskBrand)
    with pytest.raises(StructureError) as caught:
        structure.run({}, variables={"logo": Asset(url="https://e.com/logo.png")})
    [diagnostic] = caught.value.diagnostics
    assert diagnostic.class_name is None
    assert diagnostic.message == (
        "\"variables['logo']\" holds an image, which model 'default' cannot read (its profile "
        "has image_inputs=False): step 'task.brand:motto' would send it"
    )


# -- a provider's refusal ------------------------------------------------------------------------


class ServerError(Exception):
    """What an SDK raises for an HTTP error status (as ``openai.APIStatusError``)."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


@pytest.mark.parametrize(
    ("message", "status"),
    [
        ("image input is not supported - hint: you may need to provide the mmproj", 500),
        ("Invalid content type. image_url is only supported by certain models.", 400),
    ],
    ids=["llama.cpp", "openai"],
)
def test_a_providers_refusal_is_named_and_not_retried(message: str, status: int) -> None:
    def refuse(request: FakeRequest) -> dict[str, object]:
        raise ServerError(message, status)

    model = FakeChatModel(refuse)
    with pytest.raises(StepFailedError) as caught:
        run_with(model).run({TaskCaption: {"photo": Asset(url="https://e.com/a.png")}})

    assert len(model.calls) == 1
    assert caught.value.kind == "permanent"
    [attempt] = caught.value.attempts
    assert attempt.error == (
        "ExecutionError: Model 'default' refused the assets that step 'task.caption:caption' "
        f"sent ('TaskCaption.photo': image): ServerError (HTTP {status}): {message}; give the "
        'step a model that reads them (! llm("<key>") on the node or field)'
    )
    refusal = caught.value.__cause__
    assert isinstance(refusal, ExecutionError)
    assert isinstance(refusal.__cause__, ServerError)


def test_a_server_error_without_assets_is_still_retried() -> None:
    attempts: list[FakeRequest] = []

    def fail_once(request: FakeRequest) -> dict[str, object]:
        attempts.append(request)
        if len(attempts) == 1:
            raise ServerError("image input is not supported", 500)
        return {"caption": "A kettle."}

    class TaskPlain(TreeNode):
        """Caption the product."""

        name: str = Field(description="The product.")
        caption: str = Field(description="One sentence.")

    structure = RunStructure(provider=LLMProvider({"default": FakeChatModel(fail_once)}))
    structure.add(TaskPlain)
    result = structure.run({TaskPlain: {"name": "Kettle"}}, retry=RetryPolicy(initial_delay=0))
    assert result[TaskPlain].caption == "A kettle."
    assert [record.failure for record in result.trace] == ["transient", None]


# -- required assets ---------------------------------------------------------------------------


def test_a_required_asset_nobody_gave_stops_the_run_before_its_first_call() -> None:
    model = FakeChatModel()
    with pytest.raises(ExecutionError) as caught:
        run_with(model).run({TaskCaption: {}})
    assert model.calls == []
    assert str(caught.value) == (
        "Missing asset(s): task.caption.photo ('TaskCaption.photo'); assets are inputs, and "
        "no input, default or command gives these\n"
        "  hint: pass each in the inputs (an Asset, or a URL, a path or a data: URI), or make "
        "the field optional with a default of None (photo: Asset | None = None)"
    )


# -- local files -------------------------------------------------------------------------------


def refused_before_any_call(structure: RunStructure, model: FakeChatModel, photo: object) -> str:
    with pytest.raises(ExecutionError) as caught:
        structure.run({TaskCaption: {"photo": photo}})
    assert model.calls == []
    assert caught.value.result is None
    return str(caught.value)


OUTSIDE_HINT = (
    "LangTree reads local files only from the folders a run names: "
    "RunStructure({'asset_folders': ['<folder>']}) or run(..., asset_folders=[...]) "
    '("asset_folders" in a --config file for the command line); or give the asset as a URL, '
    "bytes or a data: URI"
)


def test_a_path_in_the_inputs_is_refused_before_any_call_by_default() -> None:
    model = FakeChatModel()
    environ = {"path": "/proc/self/environ", "media_type": "text/plain"}

    assert refused_before_any_call(run_with(model), model, environ) == (
        "The asset file '/proc/self/environ' of 'TaskCaption.photo' "
        f"('/proc/{os.getpid()}/environ' once resolved) is not in a folder that asset_folders "
        f"names (it names none)\n  hint: {OUTSIDE_HINT}"
    )


def test_an_asset_built_in_python_from_a_path_needs_its_folder_named_too(photos: Path) -> None:
    model = FakeChatModel()
    photo = Asset(path=photos / "kettle.png")

    message = refused_before_any_call(run_with(model), model, photo)

    assert message.endswith(
        f"is not in a folder that asset_folders names (it names none)\n  hint: {OUTSIDE_HINT}"
    )


def structure_with(model: FakeChatModel, config: dict[str, object]) -> RunStructure:
    return structure_for(TaskCaption, model=model, **config)


@pytest.mark.parametrize(
    ("photo", "shown"),
    [
        pytest.param("{photos}/../secret.txt", "{root}/secret.txt", id="dot-dot"),
        pytest.param("{photos}/leak.png", "{root}/secret.txt", id="link-out"),
    ],
)
def test_a_path_that_leaves_the_named_folders_is_refused(
    photos: Path, photo: str, shown: str
) -> None:
    (photos / "leak.png").symlink_to(photos.parent / "secret.txt")
    model = FakeChatModel()
    given = {"path": photo.format(photos=photos), "media_type": "text/plain"}
    resolved = shown.format(root=photos.parent)

    assert refused_before_any_call(
        structure_with(model, {"asset_folders": [str(photos)]}), model, given
    ) == (
        f"The asset file {given['path']!r} of 'TaskCaption.photo' ({resolved!r} once "
        f"resolved) is not in a folder that asset_folders names ({str(photos)!r})\n"
        f"  hint: {OUTSIDE_HINT}"
    )


def test_a_device_or_a_pipe_in_a_named_folder_is_refused_before_any_call(photos: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("this system has no named pipes (os.mkfifo)")
    os.mkfifo(photos / "pipe.png")
    model = FakeChatModel()

    message = refused_before_any_call(
        structure_with(model, {"asset_folders": [photos]}), model, str(photos / "pipe.png")
    )

    assert message == (
        f"The asset file {str(photos / 'pipe.png')!r} of 'TaskCaption.photo' is a named "
        "pipe, not a regular file\n"
        "  hint: assets are read from regular files only (a device, a pipe or a folder may "
        "block or never end); save the content to a file, or give it as bytes"
    )


def test_max_asset_bytes_caps_a_file_before_any_call(photos: Path) -> None:
    model = FakeChatModel()
    structure = structure_with(model, {"asset_folders": [photos], "max_asset_bytes": 4})

    message = refused_before_any_call(structure, model, str(photos / "kettle.png"))

    assert message.startswith(
        f"The asset file {str(photos / 'kettle.png')!r} of 'TaskCaption.photo' is larger "
        "than max_asset_bytes (4 bytes)\n"
    )


def test_every_refused_file_is_listed_in_one_error(photos: Path) -> None:
    class Shot(TreeNode):
        """Caption the shot."""

        image: Asset = Field(description="The shot.")
        caption: str = Field(description="One line.")

    class TaskAlbum(TreeNode):
        """Caption every shot."""

        shots: list[Shot] = Field(description="The shots.")

    model = FakeChatModel()
    structure = RunStructure({"asset_folders": [photos]}, provider=LLMProvider({"default": model}))
    structure.add(TaskAlbum)
    shots = [{"image": str(photos / name)} for name in ("kettle.png", "gone.png", "../a.png")]

    with pytest.raises(ExecutionError) as caught:
        structure.run({TaskAlbum: {"shots": shots}})

    assert model.calls == []
    assert str(caught.value) == (
        "2 asset files cannot be read:\n"
        f"  - Cannot read the asset file {str(photos / 'gone.png')!r} of 'Shot.image': "
        "No such file or directory\n"
        f"  - The asset file {str(photos / '../a.png')!r} of 'Shot.image' "
        f"({str(photos.parent / 'a.png')!r} once resolved) is not in a folder that "
        f"asset_folders names ({str(photos)!r})\n"
        "  hint: paths are read when the prompt is assembled, relative to the working "
        f"directory; {OUTSIDE_HINT}"
    )


def test_a_file_in_a_named_folder_is_sent(photos: Path) -> None:
    model = FakeChatModel()
    structure = structure_with(model, {"asset_folders": [str(photos)]})

    structure.run({TaskCaption: {"photo": str(photos / "kettle.png")}})
    run_with(model).run(
        {TaskCaption: {"photo": str(photos / "kettle.png")}}, asset_folders=[photos]
    )

    for request in model.calls:
        assert request.messages[1].content[1] == {
            "type": "image",
            "mime_type": "image/png",
            "base64": "iVBORw0KGgo=",
        }


@pytest.mark.parametrize(
    "photo",
    [
        pytest.param(Asset(data=PNG, media_type="image/png"), id="bytes"),
        pytest.param("data:image/png;base64,iVBORw0KGgo=", id="data-uri"),
        pytest.param({"data": "iVBORw0KGgo=", "media_type": "image/png"}, id="base64-json"),
    ],
)
def test_bytes_and_data_uris_need_no_folder(photo: object) -> None:
    model = FakeChatModel()
    run_with(model).run({TaskCaption: {"photo": photo}})
    [request] = model.calls
    assert request.messages[1].content[1]["base64"] == "iVBORw0KGgo="


def test_a_url_needs_no_folder() -> None:
    model = FakeChatModel()
    run_with(model).run({TaskCaption: {"photo": "https://e.com/a.png"}})
    [request] = model.calls
    assert request.messages[1].content[1]["url"] == "https://e.com/a.png"


def test_the_trace_keeps_no_copy_of_an_assets_bytes(photos: Path) -> None:
    class TaskManual(TreeNode):
        """Summarise the manual of the product in the photo."""

        photo: Asset = Field(description="The product photo.")
        manual: Asset = Field(description="Its manual.")
        summary: str = Field(description="Three sentences.")

    model = FakeChatModel()
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskManual)
    photo = Asset(data=PNG * 100, media_type="image/png", title="Front")
    manual = Asset(path=photos / "kettle.png", media_type="application/pdf", title="Manual")

    result = structure.run({TaskManual: {"photo": photo, "manual": manual}}, asset_folders=[photos])

    [record] = result.trace
    [request] = model.calls
    assert record.messages[1].content[1:] == [
        {"type": "image", "mime_type": "image/png", "extras": {"asset": "[image 1: Front]"}},
        {
            "type": "file",
            "mime_type": "application/pdf",
            "extras": {"filename": "Manual", "asset": "[document 2: Manual]"},
        },
    ]
    assert record.messages[1].content[0] == request.messages[1].content[0]
    assert [block["base64"] for block in request.messages[1].content[1:]] == [
        base64.b64encode(PNG * 100).decode(),
        base64.b64encode(PNG).decode(),
    ]
    assert result[TaskManual].photo.data == PNG * 100  # the caller's own copy


def test_a_dataset_row_with_a_refused_path_fails_alone_before_its_calls(photos: Path) -> None:
    model = FakeChatModel()
    rows = [
        {TaskCaption: {"photo": str(photos / "kettle.png")}},
        {TaskCaption: {"photo": {"path": "/etc/passwd", "media_type": "text/plain"}}},
    ]

    outcomes = list(run_with(model).run_many(rows, asset_folders=[photos]))

    assert [row.ok for row in outcomes] == [True, False]
    assert str(outcomes[1].error).startswith(
        "The asset file '/etc/passwd' of 'TaskCaption.photo' is not in a folder"
    )
    assert len(model.calls) == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param(
            {"asset_folders": "photos"},
            "asset_folders must be a list of folders (str or Path), got 'photos'",
            id="one-string",
        ),
        pytest.param(
            {"asset_folders": [3]},
            "asset_folders must be a list of folders (str or Path), got [3]",
            id="not-a-path",
        ),
        pytest.param(
            {"max_asset_bytes": 0},
            "max_asset_bytes must be a whole number of bytes of at least 1, got 0",
            id="no-bytes",
        ),
    ],
)
def test_wrong_asset_settings_are_refused(options: dict[str, object], message: str) -> None:
    model = FakeChatModel()
    with pytest.raises(ExecutionError) as caught:
        run_with(model).run({TaskCaption: {"photo": "https://e.com/a.png"}}, **options)  # type: ignore[arg-type]
    assert str(caught.value).splitlines()[0] == message
    assert model.calls == []
    with pytest.raises(StructureError) as refused:
        RunStructure(options)
    assert [d.message for d in refused.value.diagnostics] == [message]


def test_reading_stops_at_the_runs_deadline() -> None:
    now = [100.0]
    keep_time = deadline_keeper(2.0, started=100.0, clock=lambda: now[0])

    keep_time()
    now[0] = 102.5
    with pytest.raises(RunLimitError) as caught:
        keep_time()

    assert (caught.value.limit, caught.value.allowed, caught.value.used) == ("deadline", 2.0, 2.5)


def test_a_run_checks_its_deadline_while_it_reads_a_file(photos: Path) -> None:
    model = FakeChatModel()
    structure = structure_with(model, {"asset_folders": [photos]})

    # A nanosecond has passed by the time the first prompt reads its file: the read
    # raises the deadline's error itself, before asyncio's timeout could at an await.
    with pytest.raises(RunLimitError) as caught:
        structure.run({TaskCaption: {"photo": str(photos / "kettle.png")}}, deadline=1e-9)

    assert caught.value.limit == "deadline"
    assert caught.value.__cause__ is None
    assert caught.value.result is not None
    assert model.calls == []
