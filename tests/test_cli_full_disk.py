"""The command line on a full disk: a dataset's ``--output`` and standard output on a
real 64 KiB tmpfs, mounted for each test (the machine runs the tests as root)."""

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest

from tests.test_cli_rows import PROGRESS, ROOT, TARGET, results
from tests.test_cli_stopped import CATALOGUE, items

DISK_FULL = "[Errno 28] No space left on device"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a 64 KiB tmpfs of its own, unmounted after the test."""
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"a 64 KiB tmpfs cannot be mounted here (it needs root): {mounted.stderr}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def free_space(disk: Path) -> None:
    """Give the tmpfs room (what deleting other files would do)."""
    subprocess.run(["mount", "-o", "remount,size=1m", str(disk)], check=True)


def fill(disk: Path) -> None:
    """Write a file until the disk has no room left."""
    with (
        (disk / "filler").open("wb", buffering=0) as filler,
        pytest.raises(OSError, match="No space left on device"),
    ):
        write_forever(filler)


def write_forever(file: BinaryIO) -> None:
    while True:
        file.write(b"x" * 4096)


def langtree(
    *arguments: str, stdout: int | None = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    """``python -m langtree arguments...`` in a process of its own."""
    # The timeout only guards the test run: the command ends on its own.
    return subprocess.run(
        [sys.executable, "-m", "langtree", *arguments],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )


def long_rows(path: Path, count: int) -> Path:
    """Rows whose results take about a kilobyte each."""
    path.write_text(
        "".join(
            json.dumps({"review": f"Review {row}: " + "fine. " * 160}) + "\n"
            for row in range(count)
        )
    )
    return path


def test_a_dataset_whose_output_disk_fills_stops_with_one_error_and_resumes(
    tmp_path: Path, small_disk: Path
) -> None:
    rows = long_rows(tmp_path / "rows.jsonl", 100)
    output = small_disk / "out.jsonl"
    arguments = ("run", TARGET, "--input", str(rows), "--output", str(output))
    arguments += ("--model", "fake", "--journal", str(tmp_path / "journal.sqlite"))

    stopped = langtree(*arguments)

    assert stopped.returncode == 2, stopped.stderr
    kept = output.read_text()
    assert kept.endswith("\n")
    written = [line["row"] for line in results(output)]
    assert 0 < len(written) < 100
    assert written == list(range(len(written)))
    progress, *error = stopped.stderr.splitlines()
    finished = PROGRESS.match(progress)
    assert finished is not None
    assert error == [
        f"langtree: error: Cannot write results to {str(output)!r}: {DISK_FULL}; it holds "
        f"the results of {len(written)} of the 100 rows",
        "  hint: free space on its disk, then run the same command again: it runs the rows "
        "the file lacks",
    ]

    free_space(small_disk)
    resumed = langtree(*arguments)

    assert resumed.returncode == 0, resumed.stderr
    assert output.read_text().startswith(kept)
    assert [line["row"] for line in results(output)] == list(range(100))
    again = PROGRESS.match(resumed.stderr.splitlines()[-1])
    assert again is not None
    calls, replayed = int(again[4]), int(again[5] or 0)
    # 10 calls a row: the resumed run runs exactly the rows the file lacks, and the rows
    # that had finished but were not written replay every call from the journal.
    assert calls + replayed == 10 * (100 - len(written))
    assert replayed >= 10 * (int(finished[1]) - len(written))


@pytest.mark.parametrize(
    ("arguments", "before"),
    [
        pytest.param(["check", "examples"], [], id="check"),
        pytest.param(
            [
                "prompts",
                "examples/review_rating.py",
                "--input",
                "examples/inputs/review_rating.json",
            ],
            [],
            id="prompts",
        ),
        pytest.param(
            [
                "run",
                "examples/review_rating.py",
                "--input",
                "examples/inputs/review_rating.json",
                "--model",
                "fake",
            ],
            ["langtree: 10/10 calls done, 0 failed"],
            id="run",
        ),
    ],
)
def test_standard_output_on_a_full_disk_is_one_error_line(
    small_disk: Path, arguments: list[str], before: list[str]
) -> None:
    fill(small_disk)

    with (small_disk / "out.txt").open("w") as out:
        finished = langtree(*arguments, stdout=out.fileno())

    assert finished.returncode == 2
    assert finished.stderr.splitlines() == [
        *before,
        f"langtree: error: Cannot write to standard output: {DISK_FULL}",
    ]


def test_a_dataset_on_standard_output_on_a_full_disk_says_how_far_it_got(
    tmp_path: Path, small_disk: Path
) -> None:
    rows = long_rows(tmp_path / "rows.jsonl", 100)

    with (small_disk / "out.jsonl").open("w") as out:
        finished = langtree(
            "run", TARGET, "--input", str(rows), "--model", "fake", stdout=out.fileno()
        )

    assert finished.returncode == 2
    # Standard output cannot take back a line cut off: only whole lines count.
    written = (small_disk / "out.jsonl").read_text().count("\n")
    progress, *error = finished.stderr.splitlines()
    assert PROGRESS.match(progress) is not None
    assert error == [
        f"langtree: error: Cannot write to standard output: {DISK_FULL}; it took the "
        f"results of {written} of the 100 rows",
        "  hint: give --output FILE.jsonl: running the same command again then resumes "
        "where it stopped",
    ]


def journal_full(journal: Path) -> list[str]:
    """The error of a journal on a full disk, in flags: what finished is printed or kept
    in --output, not in Python's error.result."""
    return [
        f"langtree: error: The journal {str(journal)!r} could not be written (database or "
        "disk is full): the run stopped",
        "  hint: free space on its disk, or give --journal a file on another disk; running "
        "the same command again replays the answers the journal holds",
    ]


def test_a_dataset_whose_journal_disk_fills_stops_every_row_and_says_how_to_resume(
    tmp_path: Path, small_disk: Path
) -> None:
    rows = long_rows(tmp_path / "rows.jsonl", 100)
    output = tmp_path / "out.jsonl"
    journal = small_disk / "journal.sqlite"
    arguments = ("run", TARGET, "--input", str(rows), "--output", str(output))
    arguments += ("--model", "fake", "--journal", str(journal))

    stopped = langtree(*arguments)

    assert stopped.returncode == 2, stopped.stderr
    progress, *error = stopped.stderr.splitlines()
    assert PROGRESS.match(progress) is not None
    assert error == [
        *journal_full(journal),
        "langtree: run the same command again to resume (same --output)",
    ]
    written = [line["row"] for line in results(output)]
    assert len(written) < 100


LONG_BLURBS = """
from langtree.testing import FakeChatModel

chat = FakeChatModel(lambda request: {"blurb": "A fine thing. " * 150})
"""


def test_a_run_whose_journal_disk_fills_prints_what_had_finished_with_status_2(
    tmp_path: Path, small_disk: Path
) -> None:
    (tmp_path / "catalogue.py").write_text(CATALOGUE)
    (tmp_path / "long_blurbs.py").write_text(LONG_BLURBS)
    (tmp_path / "items.json").write_text(json.dumps(items(100)))
    journal = small_disk / "journal.sqlite"

    stopped = langtree(
        "run",
        f"{tmp_path / 'catalogue.py'}:TaskCatalogue",
        "--input",
        str(tmp_path / "items.json"),
        "--model",
        f"{tmp_path / 'long_blurbs.py'}:chat",
        "--journal",
        str(journal),
    )

    assert stopped.returncode == 2, stopped.stderr
    finished = json.loads(stopped.stdout)["items"]
    written = sum("blurb" in item for item in finished)
    assert 0 < written < 100
    assert [item["name"] for item in finished] == [f"item {i}" for i in range(100)]
    assert stopped.stderr.splitlines()[1:3] == journal_full(journal)
    assert stopped.stderr.splitlines()[-2] == (
        "langtree: printed what had finished; partial, as they do not validate: TaskCatalogue"
    )


def test_a_salvage_whose_disk_fills_leaves_no_new_journal_behind(
    tmp_path: Path, small_disk: Path
) -> None:
    rows = long_rows(tmp_path / "rows.jsonl", 200)
    journal = tmp_path / "journal.sqlite"
    recorded = langtree(
        "run", TARGET, "--input", str(rows), "--model", "fake", "--journal", str(journal)
    )
    assert recorded.returncode == 0, recorded.stderr
    assert journal.stat().st_size > 64 * 1024
    salvaged = small_disk / "salvaged.sqlite"

    stopped = langtree("journal", "salvage", str(journal), str(salvaged))

    assert stopped.returncode == 2, stopped.stderr
    assert stopped.stderr.splitlines() == [
        f"langtree: error: The journal {str(salvaged)!r} could not be written: database or "
        "disk is full",
        "  hint: give salvage a path on a disk with room, in a folder this process may write to",
    ]
    # Nothing half-made is left to be taken for a journal, and the same command can be
    # run again once there is room.
    assert sorted(path.name for path in small_disk.iterdir()) == []
