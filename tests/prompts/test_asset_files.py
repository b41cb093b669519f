"""Reading an asset's local file: only from the named folders, only a regular file, only
up to the size cap, and only while the run's time lasts."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from langtree import ExecutionError
from langtree.prompts._asset_files import DEFAULT_MAX_ASSET_BYTES, AssetFiles
from tests.photos import PNG

WHERE = "TaskCaption.photo"
OUTSIDE_HINT = (
    "LangTree reads local files only from the folders a run names: "
    "RunStructure({'asset_folders': ['<folder>']}) or run(..., asset_folders=[...]) "
    '("asset_folders" in a --config file for the command line); or give the asset as a URL, '
    "bytes or a data: URI"
)
NOT_REGULAR_HINT = (
    "assets are read from regular files only (a device, a pipe or a folder may block or "
    "never end); save the content to a file, or give it as bytes"
)


def refusal(files: AssetFiles, path: Path | str) -> str:
    with pytest.raises(ExecutionError) as caught:
        files.read(Path(path), WHERE)
    return str(caught.value)


def test_a_regular_file_in_a_named_folder_is_read(photos: Path) -> None:
    files = AssetFiles(folders=(photos,))

    assert files.read(photos / "kettle.png", WHERE) == PNG
    assert files.refusal(photos / "kettle.png", WHERE) is None


def test_folders_and_paths_are_relative_to_the_working_directory(
    photos: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(photos.parent)

    assert AssetFiles(folders=("photos",)).read(Path("photos/kettle.png"), WHERE) == PNG


def test_links_inside_the_folders_are_followed(photos: Path) -> None:
    album = photos.parent / "album"
    album.symlink_to(photos, target_is_directory=True)
    (photos / "front.png").symlink_to(photos / "kettle.png")

    assert AssetFiles(folders=(photos,)).read(photos / "front.png", WHERE) == PNG
    assert AssetFiles(folders=(album,)).read(photos / "kettle.png", WHERE) == PNG
    assert AssetFiles(folders=(photos,)).read(album / "kettle.png", WHERE) == PNG


def test_no_folder_is_named_by_default(photos: Path) -> None:
    path = photos / "kettle.png"

    assert AssetFiles().folders == ()
    assert refusal(AssetFiles(), path) == (
        f"The asset file {str(path)!r} of {WHERE!r} is not in a folder that "
        f"asset_folders names (it names none)\n  hint: {OUTSIDE_HINT}"
    )


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        pytest.param("{tmp}/secret.txt", "", id="outside"),
        pytest.param("{tmp}/photos/../secret.txt", "{tmp}/secret.txt", id="dot-dot"),
        pytest.param("{tmp}/photos/leak.txt", "{tmp}/secret.txt", id="link-out"),
        pytest.param("/proc/self/environ", f"/proc/{os.getpid()}/environ", id="proc-environ"),
    ],
)
def test_a_file_outside_the_named_folders_is_refused(photos: Path, given: str, shown: str) -> None:
    root = photos.parent
    (photos / "leak.txt").symlink_to(root / "secret.txt")
    path = given.format(tmp=root)
    resolved = f" ({shown.format(tmp=root)!r} once resolved)" if shown else ""

    assert refusal(AssetFiles(folders=(photos,)), path) == (
        f"The asset file {path!r} of {WHERE!r}{resolved} is not in a folder that "
        f"asset_folders names ({str(photos)!r})\n  hint: {OUTSIDE_HINT}"
    )


def test_the_refusal_names_every_folder(photos: Path) -> None:
    manuals = photos.parent / "manuals"
    files = AssetFiles(folders=(photos, manuals))

    assert (
        refusal(files, photos.parent / "secret.txt")
        .splitlines()[0]
        .endswith(
            f"is not in a folder that asset_folders names ({str(photos)!r}, {str(manuals)!r})"
        )
    )


@pytest.fixture
def fifo(photos: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("this system has no named pipes (os.mkfifo)")
    path = photos / "pipe.png"
    os.mkfifo(path)
    return path


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(photos: Path, fifo: Path) -> None:
    files = AssetFiles(folders=(photos,))

    assert refusal(files, fifo) == (
        f"The asset file {str(fifo)!r} of {WHERE!r} is a named pipe, not a regular "
        f"file\n  hint: {NOT_REGULAR_HINT}"
    )
    assert files.refusal(fifo, WHERE) is not None


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="this system has no /dev/zero")
def test_a_device_is_refused_even_in_a_named_folder() -> None:
    assert refusal(AssetFiles(folders=("/dev",)), "/dev/zero") == (
        f"The asset file '/dev/zero' of {WHERE!r} is a character device, not a "
        f"regular file\n  hint: {NOT_REGULAR_HINT}"
    )


def test_a_folder_is_refused(photos: Path) -> None:
    assert refusal(AssetFiles(folders=(photos.parent,)), photos) == (
        f"The asset file {str(photos)!r} of {WHERE!r} is a folder, not a regular "
        f"file\n  hint: {NOT_REGULAR_HINT}"
    )


def test_a_file_larger_than_the_cap_is_refused(photos: Path) -> None:
    big = photos / "big.png"
    big.write_bytes(b"x" * 9)
    files = AssetFiles(folders=(photos,), max_bytes=8)

    assert DEFAULT_MAX_ASSET_BYTES == 20 * 1024 * 1024
    assert files.read(photos / "kettle.png", WHERE) == PNG  # exactly 8 bytes
    assert refusal(files, big) == (
        f"The asset file {str(big)!r} of {WHERE!r} is larger than max_asset_bytes "
        "(8 bytes)\n"
        "  hint: raise the cap, e.g. RunStructure({'max_asset_bytes': 50_000_000}) or "
        "run(..., max_asset_bytes=...), or give a smaller file"
    )
    assert files.refusal(big, WHERE) is not None


def test_a_file_that_cannot_be_opened_is_named(photos: Path) -> None:
    missing = photos / "gone.png"

    assert refusal(AssetFiles(folders=(photos,)), missing) == (
        f"Cannot read the asset file {str(missing)!r} of {WHERE!r}: No such file or "
        "directory\n"
        "  hint: paths are read when the prompt is assembled, relative to the working directory"
    )


def counting_clock(stop_at: int) -> tuple[list[int], Callable[[], None]]:
    """A ``keep_time`` that lets ``stop_at - 1`` chunks through, then stops the read."""
    checks: list[int] = []

    def keep_time() -> None:
        checks.append(len(checks) + 1)
        if len(checks) == stop_at:
            raise ExecutionError("The run reached its deadline")

    return checks, keep_time


def test_a_read_checks_the_time_before_each_chunk(photos: Path) -> None:
    large = photos / "large.png"
    large.write_bytes(b"x" * (3 * 1024 * 1024))
    files = AssetFiles(folders=(photos,))

    checks, keep_time = counting_clock(stop_at=2)
    with pytest.raises(ExecutionError, match="deadline"):
        files.read(large, WHERE, keep_time)
    assert checks == [1, 2]

    checks, keep_time = counting_clock(stop_at=0)
    assert len(files.read(large, WHERE, keep_time)) == 3 * 1024 * 1024
    assert checks == [1, 2, 3, 4]  # three chunks and the end of the file
