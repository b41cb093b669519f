"""The command line's hints name its flags, not Python: a failed step, a run interrupted
and an external variable nobody gave are told with ``--method``, ``--max-retries``,
``--call-timeout``, ``--var`` ..., where ``RunStructure.run`` says ``run(...)``,
``ModelConfig(...)`` or ``error.result``."""

import json
import textwrap
from pathlib import Path

import pytest

from langtree.cli import main
from langtree.cli._hints import error_text
from langtree.runtime.durable._journal import JournalWriteError

GREETING = '''
from pydantic import Field

from langtree import TreeNode


class TaskGreet(TreeNode):
    """Greet the {audience} of the shop, in a {tone} tone."""

    greeting: str = Field(description="One sentence.")
'''

MODELS = '''
from langtree.testing import FakeChatModel


class LengthFinishReasonError(Exception):
    """Named as OpenAI's client names an answer cut off at the output limit."""


def cut_off(request):
    raise LengthFinishReasonError("Length limit reached")


def timing_out(request):
    raise TimeoutError("the call timed out")


def refusing(request):
    raise PermissionError("no access to this model")


prose = FakeChatModel(lambda request: "Hello, shop!")
invalid = FakeChatModel(lambda request: {"greeting": ["not", "a", "sentence"]})
truncated = FakeChatModel(cut_off)
transient = FakeChatModel(timing_out)
permanent = FakeChatModel(refusing)
'''


@pytest.fixture
def greeting(tmp_path: Path) -> Path:
    (tmp_path / "greeting.py").write_text(textwrap.dedent(GREETING))
    (tmp_path / "models.py").write_text(textwrap.dedent(MODELS))
    # One attempt of each kind: the provider's retries off, no invalid output asked again.
    (tmp_path / "once.json").write_text(json.dumps({"retry": {"max_retries": 0}}))
    return tmp_path


def run_on(folder: Path, model: str, *more: str) -> list[str]:
    return [
        "run",
        str(folder / "greeting.py"),
        "--model",
        f"{folder / 'models.py'}:{model}",
        "--var",
        "audience=regulars",
        "--var",
        "tone=warm",
        "--config",
        str(folder / "once.json"),
        "--max-retries",
        "0",
        *more,
    ]


def error_lines(err: str) -> list[str]:
    """The lines of the error, from ``langtree: error:`` to the next line of langtree's."""
    lines = err.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("langtree: error: "))
    end = next(n for n in range(start + 1, len(lines)) if lines[n].startswith("langtree: "))
    return lines[start:end]


NO_VALID_OUTPUT = (
    "langtree: error: Step 'task.greet:greeting' gave no valid output for 'task.greet' in 1 "
    "attempt(s); the last error:"
)

STEP_FAILURES = {
    "invalid": [
        NO_VALID_OUTPUT,
        "- greeting: Input should be a valid string",
        "  hint: check the model's support for structured output (or choose another method "
        "with --method, or with ModelConfig(model, method=...) in an LLMProvider), or raise "
        "--max-retries",
    ],
    "truncated": [
        NO_VALID_OUTPUT,
        "- the answer was cut off at the model's output limit (LengthFinishReasonError)",
        "  hint: the model stopped at its output limit; raise the max_tokens of the model "
        "that --model names (--max-tokens limits the whole run), or split the step's fields "
        "(@sequential)",
    ],
    "prose": [
        NO_VALID_OUTPUT,
        "- the answer held no tool call, only text: 'Hello, shop!'",
        "  hint: the model answered in text instead of calling the tool: servers that ignore "
        "tool_choice (llama.cpp, Ollama) need --method json_schema (in an LLMProvider: "
        "ModelConfig(model, method='json_schema'))",
    ],
    "transient": [
        "langtree: error: Step 'task.greet:greeting' could not get an answer for "
        "'task.greet': 1 attempt(s) failed; the last error:",
        "TimeoutError: the call timed out",
        "  hint: the provider kept failing (timeouts, rate limits, server errors); raise "
        '--call-timeout or "retry": {"max_retries": ...} in --config, or lower '
        "--max-concurrency",
    ],
    "permanent": [
        "langtree: error: Step 'task.greet:greeting' failed for 'task.greet' with an error "
        "that retrying cannot fix:",
        "PermissionError: no access to this model",
        "  hint: retrying cannot fix this (credentials, model name, request settings); check "
        "the model that --model names against the error above",
    ],
}


@pytest.mark.parametrize("model", list(STEP_FAILURES))
def test_a_failed_step_is_told_in_flags(
    greeting: Path, model: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(run_on(greeting, model))

    assert status == 1
    assert error_lines(capsys.readouterr().err) == STEP_FAILURES[model]


def test_a_failed_rows_result_line_is_told_in_flags(
    greeting: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = greeting / "rows.jsonl"
    rows.write_text('{"TaskGreet": {}}\n')

    status = main(run_on(greeting, "transient", "--input", str(rows)))

    assert status == 1
    [line] = capsys.readouterr().out.splitlines()
    assert json.loads(line)["error"].splitlines() == [
        text.removeprefix("langtree: error: ") for text in STEP_FAILURES["transient"]
    ]


@pytest.mark.parametrize("command", ["run", "prompts"])
def test_a_missing_external_variable_is_told_with_var(
    greeting: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    model = ["--model", "fake"] if command == "run" else []

    status = main([command, str(greeting / "greeting.py"), *model, "--var", "tone=warm"])

    assert status == 2
    assert capsys.readouterr().err == (
        "langtree: error: Missing external variable(s) 'audience': the texts of "
        "'task.greet' use them and nothing supplies them\n"
        "  hint: give --var audience=...\n"
    )


def test_every_missing_variable_gets_its_var(
    greeting: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["run", str(greeting / "greeting.py"), "--model", "fake"])

    assert status == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "  hint: give --var audience=... --var tone=..."
    )


@pytest.mark.parametrize("kind", ["journal", "cache"])
def test_a_read_only_file_is_told_with_its_flag(kind: str) -> None:
    problem = f"The {kind} 'answers.sqlite' is read-only (a read-only file system): ..."
    python = "copy it to a folder this process may write to, and give the run the copy"
    error = JournalWriteError(problem, kind=kind, read_only=True, hint=python)

    assert error_text(error) == (
        f"{problem}\n"
        f"  hint: to make new calls, copy the {kind} to a folder this process may write to, "
        f"and give --{kind} the copy"
    )
