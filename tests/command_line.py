"""The command line as the ``tests/test_cli*.py`` modules run it: in this process through
``main(argv)``, or as ``python -m langtree`` in a process of its own; and the files they
write for it to read."""

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from langtree.cli import main

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples"
REVIEWS = EXAMPLES / "review_rating.py"
REVIEW_INPUTS = EXAMPLES / "inputs" / "review_rating.json"
# The review example run on its inputs and the CLI's fake model.
RUN_REVIEW = ["run", str(REVIEWS), "--input", str(REVIEW_INPUTS), "--model", "fake"]


def shown(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    """The exit status, standard output and standard error of ``langtree argv...``."""
    status = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def refused(capsys: pytest.CaptureFixture[str], *argv: object) -> str:
    """The standard error of ``langtree argv...``, which must be a usage error: status 2
    and nothing on standard output."""
    status, out, err = shown(capsys, *argv)
    assert (status, out) == (2, ""), err
    return err


def write(folder: Path, name: str, source: str) -> Path:
    """``source``, dedented, written to ``folder/name`` (the folder made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(source))
    return path


def run_python(
    arguments: list[str], *, cwd: Path = ROOT, preexec_fn: Callable[[], object] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python arguments...`` (e.g. ``-m langtree run ...``) run to its end in a process of
    its own, which imports this checkout's ``langtree``; its output captured as text.

    Args:
        arguments: The command line after ``python``.
        cwd: The working folder of the process.
        preexec_fn: What the process runs before ``langtree`` starts, as in
            ``subprocess.run``.
    """
    return subprocess.run(
        [sys.executable, *arguments],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=preexec_fn,
    )
