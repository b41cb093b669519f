"""``langtree run`` that stops early (Ctrl-C, a failed step, a limit, values that do not
validate) prints what had finished on standard output, in the shape of a finished run's
output, and says on standard error that it is partial."""

import json
import re
import signal
from pathlib import Path

import pytest
from command_line import run_python, shown

from langtree.cli import main

CATALOGUE = '''
from pydantic import Field, model_validator

from langtree import TreeNode


class Item(TreeNode):
    """Describe one item."""

    name: str
    blurb: str = Field(description="One sentence about the item.")


class TaskCatalogue(TreeNode):
    """Describe every item of a catalogue."""

    items: list[Item] = Field(default=[], description="The items.")


class TaskShortList(TreeNode):
    """Describe the items of a short list."""

    items: list[Item] = Field(default=[], description="The items.")

    @model_validator(mode="after")
    def short(self):
        if len(self.items) > 2:
            raise ValueError("a short list holds two items at most")
        return self
'''

MODELS = """
import asyncio
import os
import signal

from langtree.testing import FakeChatModel


def write_blurb(request):
    return {"blurb": "A fine thing."}


async def interrupt_third(request):
    # The third call presses Ctrl-C, then takes half a minute: only stopping the run
    # ends it sooner, and no other call is in flight (--max-concurrency 1).
    if len(interrupted.calls) == 3:
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(30)
    return write_blurb(request)


def refuse_the_last(request):
    if "item 2" in request.text:
        raise PermissionError("no access to this model")
    return write_blurb(request)


interrupted = FakeChatModel(interrupt_third)
refusing = FakeChatModel(refuse_the_last)
fine = FakeChatModel(write_blurb)
"""

FINE = {"name": "item 0", "blurb": "A fine thing."}
"""An item whose blurb was written."""


def items(count: int) -> dict[str, object]:
    return {"items": [{"name": f"item {i}"} for i in range(count)]}


def written(*names: str) -> list[dict[str, object]]:
    return [{"name": name, "blurb": "A fine thing."} for name in names]


@pytest.fixture
def catalogue(tmp_path: Path) -> Path:
    (tmp_path / "catalogue.py").write_text(CATALOGUE)
    (tmp_path / "models.py").write_text(MODELS)
    return tmp_path


def arguments(folder: Path, task: str, model: str, count: int) -> list[str]:
    (folder / "items.json").write_text(json.dumps(items(count)))
    return [
        "run",
        f"{folder / 'catalogue.py'}:{task}",
        "--input",
        str(folder / "items.json"),
        "--model",
        f"{folder / 'models.py'}:{model}",
        "--max-concurrency",
        "1",
    ]


# What a run of three items printed when it stopped before the third, or after all.
TWO_OF_THREE = {"items": [*written("item 0", "item 1"), {"name": "item 2"}]}
ALL_THREE = {"items": written("item 0", "item 1", "item 2")}
# The line that says the output holds only what had finished of a task.
PARTIAL = "langtree: printed what had finished; partial, as they do not validate: {task}\n"


def without_wall_time(err: str) -> str:
    """Standard error with the summary's tokens and wall time left out (the prompts' token
    counts are pinned where prompts are)."""
    return re.sub(r", \d+ tokens, \d+\.\d\ds wall time\n$", "\n", err)


def test_ctrl_c_prints_what_had_finished_and_exits_with_130(catalogue: Path) -> None:
    finished = run_python(
        ["-m", "langtree", *arguments(catalogue, "TaskCatalogue", "interrupted", 5)],
        # A shell without job control starts background jobs with SIGINT ignored, and a
        # child inherits that: give the command the Ctrl-C a terminal would.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )

    assert finished.returncode == 130, finished.stderr
    assert json.loads(finished.stdout) == {
        "items": [*written("item 0", "item 1"), *items(5)["items"][2:]]  # type: ignore[misc]
    }
    assert without_wall_time(finished.stderr) == (
        "langtree: 2/5 calls done, 0 failed\n"
        "langtree: error: The run was interrupted after 2 model call(s), 2 of them with a "
        "usable answer\n" + PARTIAL.format(task="TaskCatalogue") + "langtree: 2 call(s)\n"
    )


# What standard error says of each way a run stops, the wall time left out.
FAILED_STEP = (
    "langtree: 3/3 calls done, 1 failed\n"
    "langtree: error: Step 'task.catalogue.items:blurb' failed for "
    "'task.catalogue.items[2]' with an error that retrying cannot fix:\n"
    "PermissionError: no access to this model\n"
    "  hint: retrying cannot fix this (credentials, model name, request settings); "
    "check the model that --model names against the error above\n"
    + PARTIAL.format(task="TaskCatalogue")
    + "langtree: 3 call(s)\n"
)
LIMIT_REACHED = (
    "langtree: 2/3 calls done, 0 failed\n"
    "langtree: error: The run reached its limit of 2 calls (2 used) before a call of "
    "step 'task.catalogue.items:blurb' for 'task.catalogue.items[2]'\n"
    "  hint: raise --max-calls\n" + PARTIAL.format(task="TaskCatalogue") + "langtree: 2 call(s)\n"
)
NOT_VALID = (
    "langtree: 3/3 calls done, 0 failed\n"
    "langtree: error: The values of 'TaskShortList' do not validate after the run:\n"
    "  - : Value error, a short list holds two items at most\n"
    "  hint: check the class's validators against what the steps generate\n"
    + PARTIAL.format(task="TaskShortList")
    + "langtree: 3 call(s)\n"
)
# Each way: the task, the model of MODELS, more options, what is printed, standard error.
STOPS = {
    "a-failed-step": ("TaskCatalogue", "refusing", [], TWO_OF_THREE, FAILED_STEP),
    "a-limit": ("TaskCatalogue", "fine", ["--max-calls", "2"], TWO_OF_THREE, LIMIT_REACHED),
    "values-that-do-not-validate": ("TaskShortList", "fine", [], ALL_THREE, NOT_VALID),
}


@pytest.mark.parametrize(("task", "model", "limit", "printed", "err"), STOPS.values(), ids=STOPS)
def test_a_run_that_stops_prints_what_had_finished_and_exits_with_1(
    catalogue: Path,
    capsys: pytest.CaptureFixture[str],
    task: str,
    model: str,
    limit: list[str],
    printed: object,
    err: str,
) -> None:
    status, out, shown_err = shown(capsys, *arguments(catalogue, task, model, 3), *limit)

    assert status == 1, shown_err
    assert json.loads(out) == printed
    assert without_wall_time(shown_err) == err


def test_a_finished_run_prints_every_task_by_class_name(
    catalogue: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (catalogue / "both.json").write_text(
        json.dumps({"TaskCatalogue": items(1), "TaskShortList": items(1)})
    )

    status = main(
        [
            "run",
            str(catalogue / "catalogue.py"),
            "--input",
            str(catalogue / "both.json"),
            "--model",
            f"{catalogue / 'models.py'}:fine",
        ]
    )

    assert status == 0
    assert json.loads(capsys.readouterr().out) == {
        "TaskCatalogue": {"items": [FINE]},
        "TaskShortList": {"items": [FINE]},
    }
