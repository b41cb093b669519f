"""``langtree run``'s progress line: resampled calls and retries in the total, colour only
on a terminal that shows it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from langtree.cli import main
from langtree.cli.run import _show
from langtree.cli.terminal import colours

EXAMPLES = Path(__file__).parent.parent / "examples"


class Terminal(io.StringIO):
    """Standard error as a terminal."""

    def isatty(self) -> bool:
        return True


def test_the_final_line_counts_every_call_made(capsys: pytest.CaptureFixture[str]) -> None:
    inputs = EXAMPLES / "inputs" / "review_rating.json"
    status = main(
        [
            "run",
            f"{EXAMPLES / 'review_rating.py'}:TaskRateReview",
            "--input",
            str(inputs),
            "--model",
            "fake",
        ]
    )
    assert status == 0
    # resample(5) on the node: five calls for the rating and five for the verdict.
    assert capsys.readouterr().err.splitlines()[-2] == "langtree: 10/10 calls done, 0 failed"


def test_colour_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    _show(3, 5, 1, end="\r", replayed=2)
    assert terminal.getvalue() == (
        "langtree: \x1b[33m3/5 calls done\x1b[0m"
        "\x1b[2m (2 replayed without a model call)\x1b[0m, \x1b[31m1 failed\x1b[0m\r"
    )


@pytest.mark.parametrize(("variable", "value"), [("NO_COLOR", "1"), ("TERM", "dumb")])
def test_no_colour_when_asked_or_on_a_dumb_terminal(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setenv(variable, value)
    _show(5, 5, 0)
    assert terminal.getvalue() == "langtree: 5/5 calls done, 0 failed\n"
    assert not colours(terminal)


def test_no_colour_off_a_terminal() -> None:
    assert not colours(io.StringIO())
