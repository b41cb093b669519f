"""The files a command reads because a user named them (``--input FILE.json``, ``--config
FILE.json``, ``--input rows.jsonl``): only a regular file, opened without waiting, and
read up to a bound; anything else is refused with what it is and how to fix it."""

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from command_line import REVIEWS, refused, shown

from langtree.cli._inputs import MAX_INPUT_BYTES

LIMIT = 100 * 1024 * 1024
"""The largest inputs or settings file, and the longest row, that a command reads."""

SPECIAL_HINT = (
    "  hint: save the {subject} to a file and give its path: langtree reads them only from "
    "a regular file (a pipe or a device may block or never end)\n"
)
MISSING_HINT = "  hint: check the path (a relative one starts from the working folder)\n"
FOLDER_HINT = "  hint: give the path of a file in it, not of the folder\n"
LARGE_INPUTS_HINT = (
    "  hint: give large content as an Asset's path (read from asset_folders), not inline: "
    "no model takes 100 MiB in one request\n"
)
LARGE_CONFIG_HINT = "  hint: give --config the file of the settings, which take a few lines\n"


def run_rows(rows: Path, output: Path) -> list[object]:
    """The arguments of a run of the review example over the dataset ``rows``, its
    results written to ``output``."""
    return [
        "run",
        f"{REVIEWS}:TaskRateReview",
        "--input",
        rows,
        "--output",
        output,
        "--model",
        "fake",
    ]


def folder(path: Path) -> Path:
    path.mkdir()
    return path


def pipe(path: Path) -> Path:
    os.mkfifo(path)
    return path


def device(path: Path) -> Path:
    """``/dev/zero`` under ``path``'s name (a ``.json`` or ``.jsonl`` suffix): it never
    ends."""
    path.symlink_to("/dev/zero")
    return path


def larger_than_the_limit(path: Path) -> Path:
    """A file one byte past the limit, sparse: it takes no room on the disk."""
    path.touch()
    os.truncate(path, LIMIT + 1)
    return path


NOT_READ = {
    "missing": (lambda path: path, "there is no such file\n" + MISSING_HINT),
    "folder": (folder, "it is a folder, not a file\n" + FOLDER_HINT),
    "named-pipe": (pipe, "it is a named pipe, not a file\n" + SPECIAL_HINT),
    "device": (device, "it is a character device, not a file\n" + SPECIAL_HINT),
    "too-large": (
        larger_than_the_limit,
        f"it holds {LIMIT + 1:,} bytes, more than the {LIMIT:,} (100 MiB) that langtree "
        "reads\n{large}",
    ),
}

COMMANDS = [
    pytest.param(["graph", REVIEWS], id="graph"),
    pytest.param(["prompts", f"{REVIEWS}:TaskRateReview"], id="prompts"),
    pytest.param(["run", f"{REVIEWS}:TaskRateReview", "--model", "fake"], id="run"),
]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("make", "why"), NOT_READ.values(), ids=NOT_READ)
def test_an_input_file_that_is_not_a_regular_file_within_the_limit_is_refused(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: list[object],
    make: Callable[[Path], Path],
    why: str,
) -> None:
    path = make(tmp_path / "inputs.json")

    err = refused(capsys, *command, "--input", path)

    assert err == f"langtree: error: Cannot read inputs from {str(path)!r}: " + why.format(
        subject="inputs", large=LARGE_INPUTS_HINT
    )


def test_dev_zero_named_as_it_is_is_refused_as_an_input_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = refused(capsys, "prompts", REVIEWS, "--input", "/dev/zero")

    assert err == (
        "langtree: error: Cannot read inputs from '/dev/zero': it is a character device, not "
        "a file\n" + SPECIAL_HINT.format(subject="inputs")
    )


@pytest.mark.parametrize("command", ["check", "prompts"])
@pytest.mark.parametrize(("make", "why"), NOT_READ.values(), ids=NOT_READ)
def test_a_config_file_that_is_not_a_regular_file_within_the_limit_is_refused(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
    make: Callable[[Path], Path],
    why: str,
) -> None:
    path = make(tmp_path / "settings.json")

    err = refused(capsys, command, REVIEWS, "--config", path)

    assert err == f"langtree: error: Cannot read --config settings from {str(path)!r}: " + (
        why.format(subject="--config settings", large=LARGE_CONFIG_HINT)
    )


ROWS_NOT_READ = {name: NOT_READ[name] for name in ("missing", "folder", "named-pipe", "device")}


@pytest.mark.parametrize(("make", "why"), ROWS_NOT_READ.values(), ids=ROWS_NOT_READ)
def test_a_dataset_that_is_not_a_regular_file_is_refused_before_any_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, make: Callable[[Path], Path], why: str
) -> None:
    path = make(tmp_path / "rows.jsonl")
    output = tmp_path / "results.jsonl"

    err = refused(capsys, *run_rows(path, output))

    assert err == f"langtree: error: Cannot read rows from {str(path)!r}: " + why.format(
        subject="rows"
    )
    assert not output.exists()


def test_a_dataset_line_longer_than_the_limit_is_refused_before_any_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "rows.jsonl"
    first = json.dumps({"review": "It works well."}) + "\n"
    path.write_text(first)
    os.truncate(path, len(first) + LIMIT + 1)  # a second line of zero bytes, no newline
    output = tmp_path / "results.jsonl"

    err = refused(capsys, *run_rows(path, output))

    assert err == (
        f"langtree: error: Cannot read the row at {str(path)!r}, line 2: it holds more than "
        f"the {LIMIT:,} bytes (100 MiB) that a row may hold\n" + LARGE_INPUTS_HINT
    )
    assert not output.exists()


def test_a_dataset_line_that_is_not_utf8_is_refused_with_its_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"review": "fine"}\n' + '{"review": "Gr\u00fcn"}\n'.encode("latin-1"))

    err = refused(capsys, "run", f"{REVIEWS}:TaskRateReview", "--input", path, "--model", "fake")

    assert err == (
        f"langtree: error: Cannot read the row at {str(path)!r}, line 2: it is not UTF-8 text "
        "(byte 0xfc at position 14)\n"
        "  hint: save the file as UTF-8\n"
    )


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_a_dataset_with_a_byte_order_mark_and_either_line_ending_runs_every_row(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, newline: str
) -> None:
    path = tmp_path / "rows.jsonl"
    rows = [json.dumps({"review": f"Review {row}: it works well."}) for row in range(3)]
    path.write_bytes(("\ufeff" + newline.join(rows)).encode("utf-8"))  # no final newline
    output = tmp_path / "results.jsonl"

    status, out, _ = shown(capsys, *run_rows(path, output))

    assert (status, out) == (0, "")
    written = [json.loads(line) for line in output.read_text().splitlines()]
    assert [line["row"] for line in written] == [0, 1, 2]
    assert [line["output"]["review"] for line in written] == [
        f"Review {row}: it works well." for row in range(3)
    ]


def test_the_limit_is_100_mib() -> None:
    assert MAX_INPUT_BYTES == LIMIT
