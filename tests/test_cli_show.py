"""``langtree show RUN``: the page of a saved result or of a journal, written to a file."""

import os
import sqlite3
from pathlib import Path

import pytest
from command_line import REVIEW_INPUTS, REVIEWS, refused, shown
from parts_run import parts_run

from langtree.cli import main
from langtree.runtime.page._files import DEFAULT_MAX_RUN_BYTES, read_run
from langtree.runtime.page._render import page_html


def show(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    return shown(capsys, "show", *argv)


def test_show_writes_the_page_of_a_saved_result_next_to_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = parts_run()
    saved = tmp_path / "run.json"
    saved.write_text(result.to_json(), encoding="utf-8")

    status, out, err = show(capsys, saved)

    assert (status, out, err) == (0, f"{tmp_path / 'run.html'}\n", "")
    assert (tmp_path / "run.html").read_text(encoding="utf-8") == result.to_html()


def test_show_writes_the_page_where_output_says(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    saved = tmp_path / "run.json"
    saved.write_text(parts_run().to_json(), encoding="utf-8")
    page = tmp_path / "pages" / "latest.html"
    page.parent.mkdir()

    status, out, err = show(capsys, saved, "-o", page)

    assert (status, out, err) == (0, f"{page}\n", "")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["pages", "run.json"]
    assert page.read_text(encoding="utf-8") == page_html(read_run(saved))


def test_show_writes_the_page_of_a_journal_that_langtree_run_kept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    journal = tmp_path / "review.sqlite"
    arguments = ["--input", str(REVIEW_INPUTS), "--model", "fake", "--journal", str(journal)]
    ran = main(["run", str(REVIEWS), *arguments])
    capsys.readouterr()

    status, out, err = show(capsys, journal)

    assert (ran, status, out, err) == (0, 0, f"{tmp_path / 'review.html'}\n", "")
    page = (tmp_path / "review.html").read_text(encoding="utf-8")
    assert page == page_html(read_run(journal))
    assert page.count('<details class="instance ok"') == 10


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        pytest.param(
            "run.json",
            b'{"tasks": {}, "trace": [',
            "'{path}' is neither a saved result nor a journal: it is not JSON (Expecting "
            "value at line 1, column 25)\n"
            "  hint: give the JSON that RunResult.to_json() wrote, or a journal file\n",
            id="not-json",
        ),
        pytest.param(
            "run.json",
            b'{"tasks": "\xff"}',
            "'{path}' is neither a saved result nor a journal: it is not JSON (byte 11 is "
            "not UTF-8)\n"
            "  hint: give the JSON that RunResult.to_json() wrote, or a journal file\n",
            id="not-utf8",
        ),
        pytest.param(
            "run.json",
            b"[1, 2]",
            "'{path}' is not a saved LangTree result:\n"
            "  - (the whole file): Input should be a valid dictionary or instance of "
            "SavedRun\n"
            "  hint: give the JSON that RunResult.to_json() wrote, or a journal file\n",
            id="not-an-object",
        ),
        pytest.param(
            "run.json",
            b'{"trace": []}',
            "'{path}' is not a saved LangTree result:\n"
            "  - tasks: Field required\n"
            "  hint: give the JSON that RunResult.to_json() wrote, or a journal file\n",
            id="not-a-result",
        ),
    ],
)
def test_a_file_that_is_not_a_run_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)

    assert refused(capsys, "show", path) == "langtree: error: " + message.format(path=path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_sqlite_file_that_is_not_a_journal_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE things (name TEXT)")
    connection.close()
    before = path.read_bytes()

    assert refused(capsys, "show", path) == (
        f"langtree: error: The journal {str(path)!r} is not a LangTree journal: it is "
        "another application's SQLite database (tables 'things')\n"
        "  hint: give the JSON that RunResult.to_json() wrote, or a journal file\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.sqlite"]
    assert path.read_bytes() == before


def test_a_sqlite_file_without_tables_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "empty.sqlite"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA user_version = 1")  # a database file with no table
    connection.close()

    assert refused(capsys, "show", path) == (
        f"langtree: error: The journal {str(path)!r} holds no answers\n"
        "  hint: give the JSON that RunResult.to_json() wrote, or a journal file\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.sqlite"]


def test_a_missing_run_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "run.json"

    assert refused(capsys, "show", missing) == (
        f"langtree: error: No such file: {str(missing)!r}\n"
        "  hint: give the JSON that RunResult.to_json() wrote, or a journal file\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_folder_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()

    assert refused(capsys, "show", folder) == (
        f"langtree: error: {str(folder)!r} is a folder, not a file\n"
        "  hint: give the JSON that RunResult.to_json() wrote, or a journal file\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pipe = tmp_path / "run.json"
    os.mkfifo(pipe)

    assert refused(capsys, "show", pipe) == (
        f"langtree: error: {str(pipe)!r} is a named pipe, not a file\n"
        "  hint: give the JSON that RunResult.to_json() wrote, or a journal file; langtree "
        "show reads only a regular file (a pipe or a device may block or never end)\n"
    )


def test_a_device_is_refused_without_reading_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert refused(capsys, "show", "/dev/zero") == (
        "langtree: error: '/dev/zero' is a character device, not a file\n"
        "  hint: give the JSON that RunResult.to_json() wrote, or a journal file; langtree "
        "show reads only a regular file (a pipe or a device may block or never end)\n"
    )


@pytest.mark.parametrize("name", ["run.json", "run.sqlite"])
def test_a_run_larger_than_max_bytes_is_refused_before_it_is_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    if name == "run.json":
        path.write_text(parts_run().to_json(), encoding="utf-8")
    else:
        parts_run(journal=path)
    size = path.stat().st_size

    assert refused(capsys, "show", path, "--max-bytes", size - 1) == (
        f"langtree: error: {str(path)!r} holds {size:,} bytes, more than the {size - 1:,} "
        "that langtree show reads\n"
        "  hint: give --max-bytes a larger number, e.g. --max-bytes "
        f"{size}, or show a run of fewer calls\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
    assert show(capsys, path, "--max-bytes", size)[:2] == (0, f"{path.with_suffix('.html')}\n")


def test_a_run_is_read_up_to_100_mib_unless_max_bytes_says(tmp_path: Path) -> None:
    assert DEFAULT_MAX_RUN_BYTES == 100 * 1024 * 1024
    path = tmp_path / "run.json"
    path.write_text(parts_run().to_json(), encoding="utf-8")

    assert read_run(path) == read_run(path, max_bytes=path.stat().st_size)


@pytest.mark.parametrize("value", [0, -1])
def test_max_bytes_is_a_whole_number_of_at_least_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: int
) -> None:
    saved = tmp_path / "run.json"
    saved.write_text(parts_run().to_json(), encoding="utf-8")

    assert refused(capsys, "show", saved, "--max-bytes", value) == (
        f"langtree: error: --max-bytes must be a whole number of bytes of at least 1, got "
        f"{value}\n  hint: e.g. --max-bytes 209715200\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]
