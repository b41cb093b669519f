"""`langtree._local_files`: a file named by someone else is opened only when it is a
regular file within the limit, without waiting; otherwise the caller learns why."""

import os
from pathlib import Path

import pytest

from langtree._local_files import (
    FileMissing,
    FileTooLarge,
    FileUnreadable,
    NotAFile,
    open_regular,
    read_regular,
)


def test_a_regular_file_within_the_limit_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "inputs.json"
    path.write_bytes(b'{"a": 1}')

    assert read_regular(path, 8) == b'{"a": 1}'


def test_a_file_without_a_size_that_holds_more_than_the_limit_is_too_large() -> None:
    status = Path("/proc/self/status")
    if not status.exists() or status.stat().st_size != 0:
        pytest.skip("needs Linux's /proc, whose files report no size")

    assert read_regular(status, 10) == FileTooLarge(size=None)


def test_each_refusal_says_why(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "folder").mkdir()
    (tmp_path / "large").write_bytes(b"12345")
    (tmp_path / "file").write_bytes(b"1")

    assert open_regular(tmp_path / "missing", 4) == FileMissing()
    assert open_regular(tmp_path / "folder", 4) == NotAFile(kind="a folder")
    assert open_regular(tmp_path / "pipe", 4) == NotAFile(kind="a named pipe")
    assert open_regular(Path("/dev/zero")) == NotAFile(kind="a character device")
    assert open_regular(tmp_path / "large", 4) == FileTooLarge(size=5)
    refusal = open_regular(tmp_path / "file" / "below", 4)
    assert isinstance(refusal, FileUnreadable)
    assert refusal.error.strerror == "Not a directory"
