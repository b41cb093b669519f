"""``langtree run``'s progress line: resampled calls and retries in the total, colour only
on a terminal that shows it; the summary's tokens: only what a provider received or
reported."""

from __future__ import annotations

import io
import re
import socket
from pathlib import Path

import pytest
from command_line import EXAMPLES, REVIEWS

from langtree.cli import main
from langtree.cli._run import _show
from langtree.cli._terminal import colours


class Terminal(io.StringIO):
    """Standard error as a terminal."""

    def isatty(self) -> bool:
        return True


def test_the_final_line_counts_every_call_made(capsys: pytest.CaptureFixture[str]) -> None:
    inputs = EXAMPLES / "inputs" / "review_rating.json"
    status = main(
        [
            "run",
            f"{REVIEWS}:TaskRateReview",
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


# --- a dataset's line ------------------------------------------------------------------

GREETING_SHOP = '''
from pydantic import Field

from langtree import TreeNode


class TaskGreet(TreeNode):
    """Greet the customers of the shop."""

    greeting: str = Field(description="One sentence.")
'''

MARKING = """
import sys

from langtree.testing import FakeChatModel


def reply(request):
    # Marks on the terminal when the call is made: what the line showed before it.
    sys.stderr.write("<call>")
    return {"greeting": "Hello."}


chat = FakeChatModel(reply)
"""


def test_a_dataset_shows_its_line_before_the_first_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "greeting.py").write_text(GREETING_SHOP)
    (tmp_path / "marking.py").write_text(MARKING)
    (tmp_path / "rows.jsonl").write_text('{"TaskGreet": {}}\n')
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setenv("NO_COLOR", "1")

    status = main(
        [
            "run",
            str(tmp_path / "greeting.py"),
            "--input",
            str(tmp_path / "rows.jsonl"),
            "--model",
            f"{tmp_path / 'marking.py'}:chat",
        ]
    )

    assert status == 0
    assert terminal.getvalue().startswith(
        "langtree: 0/1 rows, 0 calls, 0 tokens, ETA unknown\r<call>"
    )


# --- the summary's tokens ---------------------------------------------------------------

GREETING = """
from pydantic import Field

from langtree import TreeNode


class TaskGreet(TreeNode):
    \"\"\"Greet the shop's customers.\"\"\"

    greeting: str = Field(description="One sentence.")
"""

REFUSED = """
from langtree import RetryPolicy
from langtree.testing import FakeChatModel


def refuse(request):
    raise ConnectionRefusedError(111, "Connection refused")


async def no_wait(seconds):
    pass


chat = FakeChatModel(responder=refuse)
CONFIG = {"retry": RetryPolicy(max_retries=2, sleep=no_wait)}
"""

WRONG_PORT = """
from langchain_openai import ChatOpenAI

chat = ChatOpenAI(base_url="http://127.0.0.1:{port}/v1", api_key="x", model="m", max_retries=0)
"""


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on: bound, then closed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def summary_of(err: str) -> str:
    """The summary line, its wall time left out."""
    return re.sub(r", \d+\.\d\ds wall time$", "", err.splitlines()[-1])


def test_calls_that_reached_no_server_count_no_tokens(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "greeting.py").write_text(GREETING)
    (tmp_path / "refused.py").write_text(REFUSED)

    status = main(
        [
            "run",
            str(tmp_path / "greeting.py"),
            "--model",
            f"{tmp_path / 'refused.py'}:chat",
            "--config",
            f"{tmp_path / 'refused.py'}:CONFIG",
        ]
    )

    assert status == 1
    assert summary_of(capsys.readouterr().err) == "langtree: 3 call(s), 0 tokens"


@pytest.mark.allow_model_requests
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_a_wrong_port_counts_no_tokens(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("langchain_openai")
    (tmp_path / "greeting.py").write_text(GREETING)
    (tmp_path / "wrong_port.py").write_text(WRONG_PORT.format(port=closed_port()))
    (tmp_path / "retry.json").write_text(
        '{"retry": {"max_retries": 2, "initial_delay": 0.001, "max_delay": 0.001}}'
    )

    status = main(
        [
            "run",
            str(tmp_path / "greeting.py"),
            "--model",
            f"{tmp_path / 'wrong_port.py'}:chat",
            "--config",
            str(tmp_path / "retry.json"),
        ]
    )

    err = capsys.readouterr().err
    assert status == 1
    assert "ConnectionError: Connection error." in err
    assert summary_of(err) == "langtree: 3 call(s), 0 tokens"


def test_an_answer_without_usage_counts_its_prompt_alike_in_a_run_and_a_dataset(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "greeting.py").write_text(GREETING)
    (tmp_path / "rows.jsonl").write_text("{}\n")
    tree = str(tmp_path / "greeting.py")

    assert main(["run", tree, "--model", "fake"]) == 0
    one = summary_of(capsys.readouterr().err)
    assert main(["run", tree, "--model", "fake", "--input", str(tmp_path / "rows.jsonl")]) == 0
    rows = capsys.readouterr().err.splitlines()[-1]

    tokens = re.fullmatch(r"langtree: 1 call\(s\), ([1-9]\d*) tokens", one)
    assert tokens is not None
    assert re.fullmatch(
        rf"langtree: 1/1 rows, 1 calls, {tokens.group(1)} tokens, done, \d+\.\d\ds wall time", rows
    )
