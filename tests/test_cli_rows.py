"""``langtree run TREE --input rows.jsonl [--output results.jsonl]``: dataset runs from
the command line, resumed after a stop (see ``langtree.cli._rows``)."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from command_line import REVIEWS, ROOT, refused, run_python, shown, write

TARGET = f"{REVIEWS}:TaskRateReview"
PROGRESS = re.compile(
    r"^langtree: (\d+)/(\d+) rows(?: \((\d+) failed\))?, (\d+) calls(?: \(\+(\d+) replayed\))?, "
    r"[\d,]+ tokens, (done|ETA \d+m\d\ds), \d+\.\d\ds wall time$"
)


# What a usage error says of an --output file that holds something else than this run's
# results.
OUTPUT_HINT = (
    "\n  hint: give --output a new file, or the file an earlier run of the same dataset wrote\n"
)


def write_rows(path: Path, count: int, *, broken: int | None = None) -> Path:
    lines = []
    for row in range(count):
        review = "BROKEN" if row == broken else f"Review {row}: it works well."
        lines.append(json.dumps({"review": review}))
    path.write_text("\n".join(lines) + "\n")
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    return shown(capsys, "run", *arguments)


def results(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_jsonl_input_runs_every_row_and_writes_one_line_each_in_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = write_rows(tmp_path / "rows.jsonl", 12)
    output = tmp_path / "results.jsonl"

    status, out, err = run_cli(
        capsys, TARGET, "--input", str(rows), "--output", str(output), "--model", "fake"
    )

    assert (status, out) == (0, "")
    lines = results(output)
    assert [line["row"] for line in lines] == list(range(12))
    first = lines[0]["output"]
    assert isinstance(first, dict)
    assert first["review"] == "Review 0: it works well."
    progress = PROGRESS.match(err.splitlines()[-1])
    assert progress is not None
    assert progress.group(1, 2, 3, 6) == ("12", "12", None, "done")


def test_without_output_the_results_go_to_standard_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = write_rows(tmp_path / "rows.jsonl", 3)

    status, out, _ = run_cli(capsys, TARGET, "--input", str(rows), "--model", "fake")

    assert status == 0
    assert [json.loads(line)["row"] for line in out.splitlines()] == [0, 1, 2]


def test_running_again_skips_the_rows_the_output_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = write_rows(tmp_path / "rows.jsonl", 10)
    output = tmp_path / "results.jsonl"
    arguments = (TARGET, "--input", str(rows), "--output", str(output), "--model", "fake")
    run_cli(capsys, *arguments)
    kept = output.read_text().splitlines()[:4]
    output.write_text("\n".join(kept) + "\n")

    status, _, err = run_cli(capsys, *arguments)

    assert status == 0
    assert sorted(line["row"] for line in results(output)) == list(range(10))
    progress = PROGRESS.match(err.splitlines()[-1])
    assert progress is not None
    assert progress.group(1, 2) == ("10", "10")


# The start of the review's model modules below: an answer to every field of a request.
ANSWERING = """
import asyncio
import os

from langtree import LLMProvider
from langtree.testing import FakeChatModel


def answer(request):
    return {name: ("recommend" if name == "verdict" else 3 if name == "rating" else "x")
            for name in request.fields}
"""


def answering_models(reply: str, latency: float | None = None) -> str:
    """A model module for the review: ``ANSWERING``, then ``reply`` (the source of a
    responder of that name, which may call ``answer``) and the ``provider`` of a fake
    model that answers through it, after ``latency`` seconds if given."""
    waiting = "" if latency is None else f", latency={latency}"
    model = f"FakeChatModel(responder=reply{waiting})"
    return f'{ANSWERING}\n\n{reply}\n\nprovider = LLMProvider({{"default": {model}}})\n'


# Models that refuse the reviews marked BROKEN.
PICKY_MODELS = answering_models(
    """
def reply(request):
    if "BROKEN" in request.text:
        raise ValueError("the provider refuses this review")
    return answer(request)
"""
)


def test_a_failed_row_is_an_error_line_and_the_exit_status_is_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    models = write(tmp_path, "picky_models.py", PICKY_MODELS)
    rows = write_rows(tmp_path / "rows.jsonl", 4, broken=2)
    output = tmp_path / "results.jsonl"

    status, _, err = run_cli(
        capsys,
        TARGET,
        "--input",
        str(rows),
        "--output",
        str(output),
        "--model",
        f"{models}:provider",
        "--max-retries",
        "0",
    )

    assert status == 1
    lines = results(output)
    assert [("output" in line, "error" in line) for line in lines] == [
        (True, False),
        (True, False),
        (False, True),
        (True, False),
    ]
    assert str(lines[2]["error"]).startswith("Step ")
    progress = PROGRESS.match(err.splitlines()[-1])
    assert progress is not None
    assert progress.group(3) == "1"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(
            '{"review": "fine"}\nnot json\n',
            "Cannot read the row at '{path}', line 2: Expecting value: line 1 column 1 (char 0)",
            id="not-json",
        ),
        pytest.param(
            '{"review": "fine"}\n\n[1, 2]\n',
            "Row at '{path}', line 3 is not a JSON object\n"
            '  hint: each line holds one row\'s values, e.g. {{"TaskName": {{"field": "value"}}}}',
            id="not-an-object",
        ),
    ],
)
def test_a_bad_row_file_is_a_usage_error_before_any_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, message: str
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(content)

    err = refused(capsys, "run", TARGET, "--input", str(rows), "--model", "fake")

    assert err == f"langtree: error: {message.format(path=rows)}\n"


def test_output_without_a_jsonl_input_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    inputs = ROOT / "examples" / "inputs" / "review_rating.json"

    status, _, err = run_cli(
        capsys,
        str(REVIEWS),
        "--input",
        str(inputs),
        "--output",
        str(tmp_path / "out.jsonl"),
        "--model",
        "fake",
    )

    assert status == 2
    assert err == (
        "langtree: error: --output is for a dataset run: --input FILE.jsonl, one row per "
        "line\n  hint: without a .jsonl input, the filled tasks are printed; redirect them "
        "with > FILE.json\n"
    )


def test_an_output_file_that_is_not_results_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = write_rows(tmp_path / "rows.jsonl", 2)
    output = tmp_path / "notes.jsonl"
    output.write_text('{"note": "mine"}\n')

    err = refused(
        capsys, "run", TARGET, "--input", str(rows), "--output", str(output), "--model", "fake"
    )

    assert err == (
        f"langtree: error: {str(output)!r}, line 1 is not a result of langtree run{OUTPUT_HINT}"
    )
    assert output.read_text() == '{"note": "mine"}\n'


@pytest.mark.parametrize(
    ("row", "message"),
    [
        pytest.param(
            7,
            "{output!r} holds results of rows past the last row of {rows!r} (7): it has 4 row(s)",
            id="past-the-end",
        ),
        pytest.param(-1, "{output!r}, line 2 is not a result of langtree run", id="negative"),
    ],
)
def test_results_of_rows_the_input_does_not_have_are_a_usage_error_before_any_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, row: int, message: str
) -> None:
    rows = write_rows(tmp_path / "rows.jsonl", 4)
    output = tmp_path / "results.jsonl"
    kept = '{"row": 0, "output": {}}\n' + json.dumps({"row": row, "output": {}}) + "\n"
    output.write_text(kept)

    err = refused(
        capsys, "run", TARGET, "--input", str(rows), "--output", str(output), "--model", "fake"
    )

    shown_paths = {"output": str(output), "rows": str(rows)}
    assert err == f"langtree: error: {message.format(**shown_paths)}{OUTPUT_HINT}"
    assert output.read_text() == kept


# -- on_error="continue": a row whose task does not validate ---------------------------

SECTIONS_TREE = """
from pydantic import Field

from langtree import TreeNode


class Section(TreeNode):
    \"\"\"Summarise the section.\"\"\"

    title: str = Field(description="The section's title.")
    summary: str = Field(description="One sentence.")


class TaskSummarize(TreeNode):
    \"\"\"Summarise each section.\"\"\"

    sections: list[Section] = Field(description="The sections.")
"""

SECTIONS_MODELS = """
from langtree import LLMProvider
from langtree.testing import FakeChatModel


def reply(request):
    return {"summary": None if "BROKEN" in request.text else "In short."}


provider = LLMProvider({"default": FakeChatModel(responder=reply)})
"""

SECTIONS_FAILURE = (
    "The values of 'TaskSummarize' do not validate: 1 step instance(s) failed and 0 were "
    "skipped:\n"
    "  - sections.0.summary: Field required\n"
    "  hint: see result.errors and result.skipped; result.partial('TaskSummarize') gives "
    "the values as plain data"
)
"""What reading ``TaskSummarize`` raises when the step of its only section failed."""


def continuing_tree(tmp_path: Path) -> list[str]:
    """The arguments of ``langtree run`` for the sections tree under ``on_error:
    "continue"``, on a model that fails every section titled ``BROKEN``."""
    (tmp_path / "sections.py").write_text(SECTIONS_TREE)
    (tmp_path / "section_models.py").write_text(SECTIONS_MODELS)
    (tmp_path / "continue.json").write_text('{"on_error": "continue"}')
    return [
        f"{tmp_path / 'sections.py'}:TaskSummarize",
        "--model",
        f"{tmp_path / 'section_models.py'}:provider",
        "--config",
        str(tmp_path / "continue.json"),
        "--max-retries",
        "0",
    ]


def test_a_row_whose_task_does_not_validate_is_an_error_line_and_the_run_ends(
    tmp_path: Path,
) -> None:
    rows = tmp_path / "rows.jsonl"
    titles = ["Costs", "BROKEN", "Plans", "Risks"]
    rows.write_text("".join(json.dumps({"sections": [{"title": t}]}) + "\n" for t in titles))
    output = tmp_path / "results.jsonl"

    # The timeout only guards the test run: the command ends on its own.
    finished = run_python(
        [
            *["-m", "langtree", "run", *continuing_tree(tmp_path)],
            *["--input", str(rows), "--output", str(output)],
        ]
    )

    assert (finished.returncode, finished.stdout) == (1, ""), finished.stderr
    assert results(output) == [
        {"row": 0, "output": {"sections": [{"title": "Costs", "summary": "In short."}]}},
        {"row": 1, "error": SECTIONS_FAILURE},
        {"row": 2, "output": {"sections": [{"title": "Plans", "summary": "In short."}]}},
        {"row": 3, "output": {"sections": [{"title": "Risks", "summary": "In short."}]}},
    ]
    (progress_line,) = finished.stderr.splitlines()
    progress = PROGRESS.match(progress_line)
    assert progress is not None
    assert progress.group(1, 2, 3, 6) == ("4", "4", "1", "done")


# -- a last line cut off when a run stopped mid-write ---------------------------------


def written(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> tuple[list[str], Path]:
    """A finished dataset run of four rows (one with a non-ASCII review): the arguments
    that run it and the output's lines."""
    rows = tmp_path / "rows.jsonl"
    reviews = ["Fine.", "Très bien, vraiment.", "Good.", "Bad."]
    rows.write_text("".join(json.dumps({"review": review}) + "\n" for review in reviews))
    output = tmp_path / "results.jsonl"
    arguments = [TARGET, "--input", str(rows), "--output", str(output), "--model", "fake"]
    assert run_cli(capsys, *arguments)[0] == 0
    return arguments, output


@pytest.mark.parametrize(
    ("cut", "notice"),
    [
        pytest.param(
            lambda line: line[: len(line) // 2],
            "line 2 (row 1) was cut off when a run stopped: dropped, the row runs again",
            id="mid-line",
        ),
        pytest.param(
            lambda line: line[: line.index("è".encode()) + 1],
            "line 2 (row 1) was cut off when a run stopped: dropped, the row runs again",
            id="mid-character",
        ),
        pytest.param(
            lambda line: line[:5],
            "line 2 was cut off when a run stopped: dropped, its row runs again",
            id="before-the-row",
        ),
    ],
)
def test_a_cut_off_last_line_is_dropped_and_its_row_runs_again(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cut: Callable[[bytes], bytes], notice: str
) -> None:
    arguments, output = written(capsys, tmp_path)
    first, second, *_ = output.read_bytes().splitlines(keepends=True)
    output.write_bytes(first + cut(second))

    status, out, err = run_cli(capsys, *arguments)

    assert (status, out) == (0, "")
    assert err.splitlines()[0] == f"langtree: {str(output)!r}, {notice}"
    lines = output.read_bytes().decode().splitlines()
    assert lines[0] == first.decode().rstrip("\n")
    assert [json.loads(line)["row"] for line in lines] == [0, 1, 2, 3]
    assert json.loads(lines[1])["output"]["review"] == "Très bien, vraiment."


def test_a_complete_last_line_without_its_newline_is_kept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    arguments, output = written(capsys, tmp_path)
    first, second, *_ = output.read_bytes().splitlines(keepends=True)
    output.write_bytes(first + second.rstrip(b"\n"))

    status, _, err = run_cli(capsys, *arguments)

    assert status == 0
    assert PROGRESS.match(err) is not None
    assert [json.loads(line)["row"] for line in output.read_text().splitlines()] == [0, 1, 2, 3]


def test_a_cut_off_line_that_is_not_the_last_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    arguments, output = written(capsys, tmp_path)
    first, second, third, _ = output.read_bytes().splitlines(keepends=True)
    broken = first + second[:20] + b"\n" + third
    output.write_bytes(broken)

    status, _, err = run_cli(capsys, *arguments)

    assert status == 2
    assert err == (
        f"langtree: error: {str(output)!r}, line 2 is not a result of langtree run\n"
        "  hint: give --output a new file, or the file an earlier run of the same dataset "
        "wrote\n"
    )
    assert output.read_bytes() == broken


# -- Ctrl-C, then the same command again ---------------------------------------------------

SLOW_MODELS = answering_models(
    """
LOG = os.environ["LANGTREE_TEST_CALL_LOG"]


def reply(request):
    with open(LOG, "a") as log:
        log.write(os.environ["LANGTREE_TEST_RUN"] + "\\n")
    return answer(request)
""",
    latency=0.02,
)


def start(tmp_path: Path, run: int, rows: Path, output: Path) -> subprocess.Popen[str]:
    (tmp_path / "slow_models.py").write_text(SLOW_MODELS)
    command = [
        sys.executable,
        "-m",
        "langtree",
        "run",
        TARGET,
        "--input",
        str(rows),
        "--output",
        str(output),
        "--journal",
        str(tmp_path / "journal.sqlite"),
        "--model",
        f"{tmp_path / 'slow_models.py'}:provider",
        "--max-concurrency",
        "8",
    ]
    environment = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "LANGTREE_TEST_CALL_LOG": str(tmp_path / "calls.log"),
        "LANGTREE_TEST_RUN": str(run),
    }
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A shell without job control starts background jobs with SIGINT ignored, and a
        # child inherits that: give the command the Ctrl-C a terminal would.
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_stops_a_dataset_run_and_the_same_command_resumes_it(tmp_path: Path) -> None:
    rows = write_rows(tmp_path / "rows.jsonl", 150)
    output = tmp_path / "results.jsonl"
    first = start(tmp_path, 1, rows, output)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (
        not output.exists() or len(output.read_text().splitlines()) < 20
    ):
        time.sleep(0.05)
    first.send_signal(signal.SIGINT)
    _, first_err = first.communicate(timeout=60)
    written_first = len(results(output))

    second = start(tmp_path, 2, rows, output)
    _, second_err = second.communicate(timeout=120)

    assert first.returncode == 130, first_err
    assert "run the same command again to resume (same --output)" in first_err
    assert 20 <= written_first < 150
    assert second.returncode == 0, second_err
    lines = results(output)
    assert sorted(line["row"] for line in lines) == list(range(150))
    runs = (tmp_path / "calls.log").read_text().split()
    # 10 calls a row; only those in flight at Ctrl-C (at most max_concurrency) are sent
    # again, the others are replayed from the journal or belong to rows already written.
    assert runs.count("1") < 1500
    assert 1500 <= len(runs) <= 1500 + 8


# Models slow to answer for the first review only.
SLOW_FIRST_MODELS = answering_models(
    """
async def reply(request):
    await asyncio.sleep(0.5 if "Review 0:" in request.text else 0)
    return answer(request)
"""
)


def test_as_completed_writes_each_row_when_it_finishes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    models = write(tmp_path, "slow_first.py", SLOW_FIRST_MODELS)
    rows = write_rows(tmp_path / "rows.jsonl", 3)
    arguments = (TARGET, "--input", str(rows), "--model", f"{models}:provider")

    _, in_order, _ = run_cli(capsys, *arguments)
    _, as_completed, _ = run_cli(capsys, *arguments, "--as-completed")

    assert [json.loads(line)["row"] for line in in_order.splitlines()] == [0, 1, 2]
    finished = [json.loads(line)["row"] for line in as_completed.splitlines()]
    assert sorted(finished[:2]) == [1, 2]
    assert finished[2] == 0


def read_pipe(path: Path) -> Callable[[], bytes]:
    """Read the named pipe ``path`` on a thread, as another program would; calling what
    this returns waits for the writer to close it and gives what was written."""
    read: list[bytes] = []
    thread = threading.Thread(target=lambda: read.append(path.read_bytes()), daemon=True)
    thread.start()

    def written() -> bytes:
        thread.join(timeout=30)
        assert read, "the pipe was never closed"
        return read[0]

    return written


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_an_output_that_is_a_named_pipe_is_written_and_never_read(tmp_path: Path) -> None:
    rows = write_rows(tmp_path / "rows.jsonl", 3)
    pipe = tmp_path / "results.pipe"
    os.mkfifo(pipe)
    written = read_pipe(pipe)

    # In a process of its own: a command that read the pipe would wait for ever.
    finished = run_python(
        [
            "-m",
            "langtree",
            "run",
            TARGET,
            "--input",
            str(rows),
            "--output",
            str(pipe),
            "--model",
            "fake",
        ]
    )

    assert (finished.returncode, finished.stdout) == (0, ""), finished.stderr
    assert [json.loads(line)["row"] for line in written().splitlines()] == [0, 1, 2]


def test_an_output_that_is_standard_output_piped_to_another_program_is_written(
    tmp_path: Path,
) -> None:
    rows = write_rows(tmp_path / "rows.jsonl", 2)

    # `--output /dev/stdout | other-program`: the output is the pipe to the other program.
    finished = run_python(
        [
            "-m",
            "langtree",
            "run",
            TARGET,
            "--input",
            str(rows),
            "--output",
            "/dev/stdout",
            "--model",
            "fake",
        ]
    )

    assert finished.returncode == 0, finished.stderr
    assert [json.loads(line)["row"] for line in finished.stdout.splitlines()] == [0, 1]


def test_an_output_that_is_a_folder_is_a_usage_error_before_any_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = write_rows(tmp_path / "rows.jsonl", 2)
    folder = tmp_path / "results"
    folder.mkdir()

    err = refused(
        capsys, "run", TARGET, "--input", str(rows), "--output", str(folder), "--model", "fake"
    )

    assert err == (
        f"langtree: error: --output {str(folder)!r} is a folder\n"
        f"  hint: name a file in it, e.g. {str(folder / 'results.jsonl')!r}\n"
    )
