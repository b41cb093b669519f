"""``ProgressBar``: a run's calls as they finish, in a notebook or on stderr."""

import io
import re
import sys
from types import ModuleType, SimpleNamespace

import pytest
from pydantic import Field

from langtree import RunStructure, StepFailedError, TreeNode
from langtree.runtime import LLMProvider, ProgressBar
from langtree.runtime.observe._progress_bar import progress_text
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest, ResponderResult


class Item(TreeNode):
    """One item."""

    name: str = Field(description="The name.")
    note: str = Field(description="A note.")


class TaskList(TreeNode):
    """List things."""

    items: list[Item] = Field(default=[], description="The items.")


INPUTS = {TaskList: {"items": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}}


def run_with(bar: ProgressBar, model: FakeChatModel | None = None) -> None:
    structure = RunStructure(provider=LLMProvider({"default": model or FakeChatModel()}))
    structure.add(TaskList)
    structure.run(INPUTS, config={"callbacks": [bar]}, max_concurrency=1, max_retries=0)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Notebook:
    """IPython's display module as a kernel has it loaded, recording what it shows."""

    def __init__(self) -> None:
        self.shown: list[str] = []

    def display(self, data: dict[str, str], *, raw: bool, display_id: bool) -> "Notebook":
        assert (raw, display_id) == (True, True)
        self.shown.append(data["text/plain"])
        return self

    def update(self, data: dict[str, str], *, raw: bool) -> None:
        self.shown.append(data["text/plain"])


@pytest.fixture
def notebook(monkeypatch: pytest.MonkeyPatch) -> Notebook:
    screen = Notebook()
    ipython = ModuleType("IPython")
    ipython.get_ipython = lambda: SimpleNamespace(kernel=object())  # type: ignore[attr-defined]
    display = ModuleType("IPython.display")
    display.display = screen.display  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    return screen


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ((0, 3, 0), "langtree ▕····················▏ 0/3 calls, 0 failed"),
        ((3, 3, 1), "langtree ▕████████████████████▏ 3/3 calls, 1 failed"),
        ((0, 0, 0), "langtree ▕████████████████████▏ 0/0 calls, 0 failed"),
    ],
    ids=["start", "done", "nothing to call"],
)
def test_progress_text(counts: tuple[int, int, int], expected: str) -> None:
    assert progress_text(*counts) == expected


EVERY_CHANGE_DRAWN = [
    "langtree ▕····················▏ 0/3 calls, 0 failed",
    "langtree ▕██████··············▏ 1/3 calls, 0 failed",
    "langtree ▕█████████████·······▏ 2/3 calls, 0 failed",
    "langtree ▕████████████████████▏ 3/3 calls, 0 failed",
    "langtree ▕████████████████████▏ 3/3 calls, 0 failed",
]
"""What a notebook shows of a run of three calls when the bar draws every change: the
start, each call's end, and the finished run once more."""


def test_in_a_notebook_the_bar_shows_where_it_is_made_and_updates_in_place(
    notebook: Notebook,
) -> None:
    bar = ProgressBar(3, interval=0)

    run_with(bar)

    assert notebook.shown == EVERY_CHANGE_DRAWN


def test_on_a_terminal_the_line_is_rewritten_and_its_total_grows() -> None:
    terminal = Terminal()

    run_with(ProgressBar(2, interval=0, stream=terminal))

    assert terminal.getvalue().split("\r") == [
        "langtree ▕██████████··········▏ 1/2 calls, 0 failed",
        "langtree ▕████████████████████▏ 2/2 calls, 0 failed",
        "langtree ▕████████████████████▏ 3/3 calls, 0 failed",
        "langtree ▕████████████████████▏ 3/3 calls, 0 failed\n",
    ]


def test_a_log_gets_only_the_last_line() -> None:
    log = io.StringIO()

    run_with(ProgressBar(3, interval=0, stream=log))

    assert log.getvalue() == "langtree ▕████████████████████▏ 3/3 calls, 0 failed\n"


class Clock:
    """A clock that reads ``start`` and moves on by ``step`` seconds at each read."""

    def __init__(self, start: float, step: float = 0.0) -> None:
        self.now = start - step
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@pytest.mark.parametrize("start", [0.0, 5.0, 1e6], ids=["at zero", "just after boot", "later"])
def test_redraws_are_at_most_one_per_interval(notebook: Notebook, start: float) -> None:
    run_with(ProgressBar(3, interval=3600, clock=Clock(start)))

    assert notebook.shown == [
        "langtree ▕····················▏ 0/3 calls, 0 failed",
        "langtree ▕██████··············▏ 1/3 calls, 0 failed",
        "langtree ▕████████████████████▏ 3/3 calls, 0 failed",
    ]


def test_a_change_an_interval_after_the_last_redraw_is_drawn(notebook: Notebook) -> None:
    run_with(ProgressBar(3, interval=10, clock=Clock(0.0, step=10)))

    assert notebook.shown == EVERY_CHANGE_DRAWN


def test_a_run_that_fails_still_draws_its_last_line() -> None:
    def broken(request: FakeRequest) -> ResponderResult:
        return {"note": None}

    log = io.StringIO()

    with pytest.raises(StepFailedError):
        run_with(ProgressBar(3, stream=log), FakeChatModel(responder=broken))

    # Which calls finished before the run stopped depends on the scheduling.
    assert re.fullmatch(r"langtree ▕[█·]{20}▏ [123]/3 calls, [123] failed\n", log.getvalue())


def test_run_with_progress_draws_a_bar_of_the_expected_calls(
    capsys: pytest.CaptureFixture[str],
) -> None:
    structure = RunStructure(provider=LLMProvider({"default": FakeChatModel()}))
    structure.add(TaskList)
    expected = structure.prompts(INPUTS).cost.calls

    structure.run(INPUTS, progress=True)

    last = capsys.readouterr().err.splitlines()[-1]
    assert last == progress_text(expected, expected, 0)


def test_progress_joins_the_callbacks_of_a_config(capsys: pytest.CaptureFixture[str]) -> None:
    structure = RunStructure(provider=LLMProvider({"default": FakeChatModel()}))
    structure.add(TaskList)
    mine = ProgressBar(1, stream=io.StringIO())

    structure.run(INPUTS, config={"callbacks": [mine]}, progress=True)

    assert mine.done == structure.prompts(INPUTS).cost.calls
    assert capsys.readouterr().err.splitlines()[-1].endswith(" calls, 0 failed")
