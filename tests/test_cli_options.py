"""The command line says what it ignores: options that cannot apply are refused, a
``--var`` no task uses is a warning, targets without a task are an error, and the hints
name flags, not Python arguments."""

import json
from pathlib import Path

import pytest
from command_line import REVIEW_INPUTS, REVIEWS, RUN_REVIEW, refused, shown, write

GREETING = '''
from pydantic import Field

from langtree import TreeNode


class TaskGreet(TreeNode):
    """Greet the {audience} of the shop, in a {tone} tone."""

    greeting: str = Field(description="One sentence.")
'''

NODES_ONLY = '''
from langtree import TreeNode


class Section(TreeNode):
    """A section."""

    title: str


class Paragraph(TreeNode):
    """A paragraph."""

    text: str
'''


# -- options for something the command does not do -------------------------------------


@pytest.mark.parametrize(
    ("option", "message"),
    [
        pytest.param(
            ["--as-completed"],
            "langtree: error: --as-completed is for a dataset run: --input FILE.jsonl, one row "
            "per line\n"
            "  hint: without a .jsonl input, the filled tasks are printed once the run "
            "finishes; leave --as-completed out\n",
            id="as-completed-without-a-dataset",
        ),
        pytest.param(
            ["--journal-max-age", "3600"],
            "langtree: error: --journal-max-age applies to the journal given with --journal\n"
            "  hint: add --journal FILE.sqlite, or give the journal in --config\n",
            id="journal-max-age-without-a-journal",
        ),
    ],
)
def test_an_option_without_what_it_applies_to_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], option: list[str], message: str
) -> None:
    assert refused(capsys, *RUN_REVIEW, *option) == message


def test_output_without_a_dataset_is_refused_in_a_dry_run_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    output = tmp_path / "out.jsonl"

    err = refused(capsys, *RUN_REVIEW, "--dry-run", "--output", output)

    assert err.startswith("langtree: error: --output is for a dataset run: ")


def test_journal_max_age_applies_to_the_journal_of_the_config(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "settings.json"
    config.write_text(json.dumps({"journal": str(tmp_path / "review.sqlite")}))
    arguments = (*RUN_REVIEW, "--config", config)

    first = shown(capsys, *arguments)
    expired = shown(capsys, *arguments, "--journal-max-age", "1e-9")

    assert (first[0], expired[0]) == (0, 0)
    assert expired[2].splitlines()[-2] == "langtree: 10/10 calls done, 0 failed"


# -- --var ----------------------------------------------------------------------------


def test_the_same_var_with_two_values_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tree = write(tmp_path, "greeting.py", GREETING)
    arguments = ("run", tree, "--model", "fake", "--var", "tone=warm")

    err = refused(capsys, *arguments, "--var", "audience=kids", "--var", "audience=adults")

    assert err == (
        "langtree: error: --var 'audience' is given twice, as 'kids' and as 'adults'\n"
        "  hint: give each variable once\n"
    )


def test_the_same_var_with_the_same_value_twice_is_one_variable(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tree = write(tmp_path, "greeting.py", GREETING)
    arguments = ("prompts", tree, "--var", "tone=warm")

    status, out, err = shown(capsys, *arguments, "--var", "audience=kids", "--var", "audience=kids")

    assert (status, err) == (0, "")
    assert "Greet the kids of the shop, in a warm tone." in out


@pytest.mark.parametrize("command", ["run", "prompts"])
def test_a_var_no_task_uses_is_a_warning_naming_the_closest_variable(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    tree = write(tmp_path, "greeting.py", GREETING)
    model = ["--model", "fake"] if command == "run" else []
    arguments = (command, tree, *model, "--var", "audience=kids", "--var", "tone=warm")

    status, out, err = shown(capsys, *arguments, "--var", "audiance=adults", "--var", "x=1")

    assert status == 0
    assert out
    assert err.splitlines()[:2] == [
        "langtree: warning: --var 'audiance': no task's text uses {audiance}; did you mean "
        "'audience'?",
        "langtree: warning: --var 'x': no task's text uses {x}; the tasks' external "
        "variables are 'audience', 'tone'",
    ]


def test_a_var_for_a_tree_without_variables_is_a_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, _, err = shown(capsys, *RUN_REVIEW, "--var", "audience=kids")

    assert status == 0
    assert err.splitlines()[0] == (
        "langtree: warning: --var 'audience': no task's text uses {audience}; the tasks use "
        "no external variable"
    )


# -- targets without a task ------------------------------------------------------------


NO_TASK_HINT = (
    "  hint: a root task is a TreeNode class named Task<Name>, e.g. "
    "'class TaskReport(TreeNode): ...'\n"
)


@pytest.mark.parametrize("command", ["check", "graph", "prompts", "run"])
def test_a_file_without_a_task_is_an_error_naming_its_node_classes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    nodes = write(tmp_path, "nodes.py", NODES_ONLY)
    model = ["--model", "fake"] if command == "run" else []

    status, out, err = shown(capsys, command, nodes, *model)

    assert (status, out) == (1, "")
    assert err == (
        f"langtree: error: No task found in {str(nodes)!r}: the node classes there "
        f"(Section, Paragraph) are not tasks\n{NO_TASK_HINT}"
    )


def test_check_on_a_folder_without_a_node_class_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "helpers"
    folder.mkdir()
    write(folder, "numbers.py", "ANSWER = 42\n")

    status, out, err = shown(capsys, "check", folder)

    assert (status, out) == (1, "")
    assert err == (
        f"langtree: error: No task found in {str(folder)!r}: no TreeNode class is defined "
        f"there\n{NO_TASK_HINT}"
    )


# -- hints that name flags -------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "value", "problem", "example"),
    [
        ("--max-concurrency", "0", "max_concurrency must be at least 1, got 0", "8"),
        ("--max-retries", "-1", "max_retries must not be negative, got -1", "5"),
        (
            "--call-timeout",
            "0",
            "call_timeout must be a number of seconds above 0 or None, got 0.0",
            "60",
        ),
        (
            "--deadline",
            "nan",
            "deadline must be a number of seconds above 0 or None, got nan",
            "600",
        ),
        ("--max-calls", "0", "calls must be a whole number of at least 1 or None, got 0", "500"),
        (
            "--max-tokens",
            "-5",
            "total_tokens must be a whole number of at least 1 or None, got -5",
            "200000",
        ),
    ],
)
def test_a_run_setting_the_flag_gives_wrong_is_refused_with_the_flag_as_the_hint(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, problem: str, example: str
) -> None:
    err = refused(capsys, *RUN_REVIEW, flag, value)

    assert err == f"langtree: error: {flag}: {problem}\n  hint: e.g. {flag} {example}\n"


def test_every_wrong_flag_is_listed_and_the_ages_name_their_flags(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    journal, cache = tmp_path / "journal.sqlite", tmp_path / "cache.sqlite"

    err = refused(
        capsys,
        *RUN_REVIEW,
        "--journal",
        journal,
        "--journal-max-age",
        "0",
        "--cache",
        cache,
        "--cache-max-age",
        "-1",
        "--max-concurrency",
        "0",
    )

    assert err == (
        "langtree: error: 3 options are wrong:\n"
        "  - --max-concurrency: max_concurrency must be at least 1, got 0\n"
        "  - --journal-max-age: journal_max_age must be a number of seconds above 0 or "
        "None, got 0.0\n"
        "  - --cache-max-age: cache max_age must be a number of seconds above 0 or None, "
        "got -1.0\n"
        "  hint: e.g. --max-concurrency 8 --journal-max-age 86400 --cache-max-age 86400\n"
    )
    assert not journal.exists()


def test_a_limit_the_run_reached_names_the_flag_that_raises_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = shown(capsys, *RUN_REVIEW, "--max-calls", "1")

    # What had finished: the review given, no rating yet.
    assert (status, json.loads(out)) == (1, json.loads(REVIEW_INPUTS.read_text()))
    assert err.splitlines()[1:3] == [
        "langtree: error: The run reached its limit of 1 calls (1 used) before a call of "
        "step 'task.rate_review:rating' for 'task.rate_review'",
        "  hint: raise --max-calls",
    ]


def test_a_limit_without_a_flag_names_the_config_setting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "limits.json"
    config.write_text(json.dumps({"usage_limits": {"input_tokens": 10}}))

    status, _, err = shown(capsys, *RUN_REVIEW, "--config", config)

    assert status == 1
    assert "\n  hint: raise usage_limits.input_tokens in --config\n" in err


def test_a_dataset_stopped_by_a_limit_names_the_flag_that_raises_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"review": f"Review {row}."}) + "\n" for row in range(3)))
    target = f"{REVIEWS}:TaskRateReview"

    status, out, err = shown(
        capsys, "run", target, "--input", rows, "--model", "fake", "--max-calls", "1"
    )

    assert status == 1
    assert err.splitlines()[1:] == [
        "langtree: error: The run reached its limit of 1 calls (1 used) before a call of "
        "step 'task.rate_review:rating' for 'task.rate_review'",
        "  hint: raise --max-calls",
        "langtree: give --output FILE.jsonl to resume a stopped dataset run",
    ]
    errors = [json.loads(line)["error"] for line in out.splitlines()]
    assert errors
    assert all(error.endswith("\n  hint: raise --max-calls") for error in errors)


def test_a_journal_that_is_the_cache_too_is_refused_without_python_in_the_hint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    answers = tmp_path / "answers.sqlite"

    err = refused(capsys, *RUN_REVIEW, "--journal", answers, "--cache", answers)

    assert err == (
        f"langtree: error: The run's journal and its cache are the same file "
        f"({str(answers)!r})\n"
        "  hint: a journal already replays the calls it holds: give the run either a "
        "journal or a cache, or two different files\n"
    )
