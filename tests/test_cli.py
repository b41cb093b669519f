"""``langtree check``: find node classes, report syntax errors compiler-style."""

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from command_line import (
    EXAMPLES,
    REVIEW_INPUTS,
    REVIEWS,
    ROOT,
    RUN_REVIEW,
    refused,
    run_python,
    shown,
    write,
)

from langtree.cli import main
from tests.test_cli_rows import SECTIONS_FAILURE, continuing_tree

BROKEN = '''
from pydantic import Field

from langtree import TreeNode


class TaskBroken(TreeNode):
    """
    Intro.

    ! @each [items]->task.other@{{value.item=items}}*
    """

    items: list[str] = Field(description="! @all->task.other@{{prompt.a=items}} *")
    fine: str = Field(description="! llm(model, override=flag)")
'''


def test_check_passes_on_the_examples(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["check", str(EXAMPLES)])

    output = capsys.readouterr().out
    assert status == 0
    assert output.endswith("checked 11 task(s), 18 node class(es): 0 error(s), 1 warning(s)\n")
    assert ": warning: {company} is an external variable: supply it at run time " in output


def check_errors(capsys: pytest.CaptureFixture[str], target: str) -> str:
    """The standard output of ``langtree check target``, which must find errors (status 1)."""
    status, out, err = shown(capsys, "check", target)
    assert status == 1, err
    return out


def column_of(source: str, line: int, snippet: str) -> int:
    """The 1-based column of ``snippet`` on a 1-based line of ``source``."""
    return textwrap.dedent(source).splitlines()[line - 1].index(snippet) + 1


def test_check_reports_every_broken_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "broken.py", BROKEN)
    items_line = textwrap.dedent(BROKEN).splitlines()[13]
    star = column_of(BROKEN, 14, "}} *")

    assert check_errors(capsys, str(path)) == (
        f"{path}:11:12: error: Space before '[' not allowed - use '@each[items]' not "
        "'@each [items]' [TaskBroken]\n"
        "        ! @each [items]->task.other@{{value.item=items}}*\n"
        "               ^\n"
        "    hint: write '@each[' with no space\n"
        f"{path}:14:{star}: error: Space after '}}}}' not allowed - use '}}}}*' not '}}}} *' "
        "[TaskBroken.items]\n"
        f"    {items_line}\n"
        "    " + " " * (star - 1) + "^~~~\n"
        "    hint: write '}}*' with no space\n"
        "checked 0 task(s), 1 node class(es): 2 error(s), 0 warning(s)\n"
    )


def test_check_accepts_a_module_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "my_tree.py", BROKEN)
    monkeypatch.syspath_prepend(str(tmp_path))

    assert check_errors(capsys, "my_tree").endswith(
        "checked 0 task(s), 1 node class(es): 2 error(s), 0 warning(s)\n"
    )


# A target that names nothing: the target and the usage error.
MISSING_TARGETS = {
    "file": ("missing.py", "No such file: 'missing.py'"),
    "module": ("no_such.module", "No file or importable module named 'no_such.module'"),
}


@pytest.mark.parametrize(("target", "message"), MISSING_TARGETS.values(), ids=MISSING_TARGETS)
def test_check_reports_a_missing_target(
    target: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert refused(capsys, "check", target) == f"langtree: error: {message}\n"


def test_check_without_a_target_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["check"])

    assert caught.value.code == 2
    assert "PATH_OR_MODULE" in capsys.readouterr().err


SEMANTIC = '''
from pydantic import Field

from langtree import TreeNode


class TaskSource(TreeNode):
    """Hello {audience}."""

    notes: str = Field(description="! @all->task.missing@{{prompt.notes=notes}}")


class TaskOther(TreeNode):
    """
    ! @resampled[mood]->mode
    """

    mood: str = Field(description="How it feels.")
'''


def test_check_validates_the_tasks_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "semantic.py", SEMANTIC)

    status = main(["check", str(path)])

    output = capsys.readouterr().out.splitlines()
    assert status == 1
    assert [line for line in output if ": error: " in line or ": warning: " in line] == [
        f"{path}:8:{column_of(SEMANTIC, 8, '{audience}')}: warning: {{audience}} is an external "
        "variable: supply it at run time [TaskSource]",
        f"{path}:10:{column_of(SEMANTIC, 10, 'task.missing')}: error: Path 'task.missing' does "
        "not resolve: No task 'task.missing' has been added [TaskSource.notes]",
        f"{path}:15:{column_of(SEMANTIC, 15, 'mood]')}: error: @resampled needs an Enum field; "
        "'mood' is str [TaskOther]",
    ]
    assert output[-1] == "checked 2 task(s), 2 node class(es): 2 error(s), 1 warning(s)"


def test_graph_prints_the_plan_as_mermaid(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["graph", str(REVIEWS)])

    assert status == 0
    assert capsys.readouterr().out == (
        "flowchart TD\n"
        '    s0["task.rate_review\nrating\nmodel: default, resample: 5"]\n'
        '    s1["task.rate_review\nverdict\nmodel: default, resample: 5"]\n'
        "    s0 --> s1\n"
    )


SPLIT = """
from pydantic import Field

from langtree import TreeNode


class Chapter(TreeNode):
    heading: str = Field(description="The heading.")
    blurb: str = Field(description='! llm("fast")\\nOne line.')


class TaskBook(TreeNode):
    chapters: list[Chapter] = Field(description="The chapters.")
"""


def test_graph_draws_a_split_step_after_the_step_that_creates_its_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["graph", str(write(tmp_path, "book.py", SPLIT))])

    assert status == 0
    assert capsys.readouterr().out == (
        "flowchart TD\n"
        '    s0["task.book\nchapters"]\n'
        '    s1["task.book.chapters[#42;]\nblurb\nmodel: fast"]\n'
        "    s0 --> s1\n"
    )


def test_graph_refuses_a_tree_with_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = shown(capsys, "graph", write(tmp_path, "semantic.py", SEMANTIC))

    assert (status, out) == (1, "")
    assert err.count(": error: ") == 2


def test_prompts_prints_every_prompt_with_its_token_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = write(tmp_path, "review.json", '{"review": "Great kettle, boils fast."}')

    status, output, _ = shown(capsys, "prompts", f"{REVIEWS}:TaskRateReview", "--input", inputs)

    headings = [
        line for line in output.splitlines() if line.startswith(("## 1.", "## 2.", "## 3."))
    ]
    assert status == 0
    assert headings == ["## 1. task.rate_review: rating", "## 2. task.rate_review: verdict"]
    assert output.startswith("# 2 prompt(s), ")
    assert "Step `task.rate_review:rating`, " in output
    assert "tokens (cl100k_base), model `default`." in output
    assert "## Review\n\nGreat kettle, boils fast.\n" in output


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param(
            ["prompts", f"{REVIEWS}:TaskNope"],
            "langtree: error: No task 'TaskNope' found; the tasks are TaskRateReview\n",
            id="unknown-task",
        ),
        pytest.param(
            ["prompts", str(REVIEWS), "--var", "oops"],
            "langtree: error: --var takes NAME=VALUE, got 'oops'\n",
            id="bad-variable",
        ),
    ],
)
def test_prompts_reports_bad_arguments(
    arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(arguments)

    assert status == 2
    assert capsys.readouterr().err == message


def test_prompts_reports_unreadable_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = write(tmp_path, "broken.json", "{not json")

    status, _, err = shown(capsys, "prompts", f"{REVIEWS}:TaskRateReview", "--input", broken)

    assert status == 2
    assert err.startswith(f"langtree: error: Cannot read inputs from {str(broken)!r}: ")


# --- langtree run ---------------------------------------------------------------------

SUMMARY = re.compile(r"^langtree: (\d+) call\(s\), \d+ tokens, \d+\.\d\ds wall time$")
REVIEW_FIELDS = {"review", "rating", "rating_resampled_value", "verdict"}
"""A filled review as ``RunResult.dump()`` gives it: the rating's mean beside it."""


def run_review(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return shown(capsys, "run", REVIEWS, *extra)


@pytest.mark.parametrize("suffix", [":TaskRateReview", ""])
def test_run_with_the_fake_model_prints_the_filled_task_as_json(
    capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    status = main(
        [
            "run",
            f"{REVIEWS}{suffix}",
            "--input",
            str(REVIEW_INPUTS),
            "--model",
            "fake",
        ]
    )

    captured = capsys.readouterr()
    assert status == 0
    output = json.loads(captured.out)
    task = output if suffix else output["TaskRateReview"]
    assert set(task) == REVIEW_FIELDS
    assert task["review"].startswith("I've used this kettle")
    lines = captured.err.splitlines()
    assert re.fullmatch(r"langtree: (\d+)/\1 calls done, 0 failed", lines[-2])
    summary = SUMMARY.match(lines[-1])
    assert summary is not None
    assert int(summary.group(1)) >= 2


# A module of models for --model: an LLMProvider and a chat model.
MY_MODELS = """
from langtree import LLMProvider
from langtree.testing import FakeChatModel

provider = LLMProvider({"default": FakeChatModel()})
chat = FakeChatModel()
"""


def test_run_with_a_provider_from_a_module(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    models = write(tmp_path, "my_models.py", MY_MODELS)
    for attribute in ("provider", "chat"):
        status, out, err = run_review(
            capsys, "--input", str(REVIEW_INPUTS), "--model", f"{models}:{attribute}"
        )
        assert status == 0, err
        assert set(json.loads(out)["TaskRateReview"]) == REVIEW_FIELDS


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            "bogus",
            "--model takes 'fake', provider:model or module:attribute, got 'bogus'\n"
            "  hint: e.g. --model openai:gpt-4o-mini, or --model my_models:provider",
        ),
        (
            "openai:",
            "langtree: error: --model 'openai:' names no model\n"
            "  hint: e.g. 'openai:gpt-4o-mini'\n",
        ),
        ("no_such_module_xyz:provider", "cannot import 'no_such_module_xyz'"),
        ("os:no_such_attribute", "'os' has no attribute 'no_such_attribute'"),
        ("os:sep", "is a 'str', not an LLMProvider or a chat model"),
    ],
)
def test_run_with_a_bad_model_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], model: str, message: str
) -> None:
    status, out, err = run_review(capsys, "--input", str(REVIEW_INPUTS), "--model", model)

    assert status == 2
    assert out == ""
    assert message in err
    assert "Traceback" not in err


def test_run_without_a_model_and_no_local_model_says_how_to_get_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "langtree.models", None)

    status, _, err = run_review(capsys, "--input", str(REVIEW_INPUTS))

    assert status == 2
    assert err == (
        "langtree: error: no model configured: pass --model fake, --model provider:model "
        "(e.g. openai:gpt-4o-mini), --model module:attribute, or install the local model "
        "with `make local-model`\n"
    )


def test_run_on_a_provider_string_without_langchain_names_the_packages(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "langchain", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "langchain_openai", None)

    err = refused(
        capsys, "run", REVIEWS, "--input", str(REVIEW_INPUTS), "--model", "openai:gpt-4o-mini"
    )

    assert err == (
        "langtree: error: --model 'openai:gpt-4o-mini' is built by LangChain's "
        "init_chat_model with the package 'langchain' and 'langchain-openai', which are not "
        "installed\n"
        "  hint: pip install langchain langchain-openai\n"
    )


def test_run_reports_a_failed_step_with_status_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write(
        tmp_path,
        "broken_models.py",
        """
        from langtree.testing import FakeChatModel

        chat = FakeChatModel(responder=lambda request: "no structured output")
        """,
    )

    status, out, err = run_review(
        capsys,
        "--input",
        str(REVIEW_INPUTS),
        "--model",
        f"{tmp_path / 'broken_models.py'}:chat",
    )

    assert status == 1
    assert json.loads(out) == json.loads(REVIEW_INPUTS.read_text())
    lines = err.splitlines()
    assert SUMMARY.match(lines[-1])
    assert any(
        re.fullmatch(r"langtree: \d+/\d+ calls done, [1-9]\d* failed", line) for line in lines
    )


@pytest.mark.parametrize("task", [":TaskSummarize", ""])
def test_run_that_goes_on_after_a_failure_but_whose_task_does_not_validate_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, task: str
) -> None:
    target, *options = continuing_tree(tmp_path)
    values = {"sections": [{"title": "Costs"}, {"title": "BROKEN"}]}
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps(values if task else {"TaskSummarize": values}))

    tree = target.removesuffix(":TaskSummarize") + task

    status = main(["run", tree, *options, "--input", str(inputs)])

    captured = capsys.readouterr()
    partial = {"sections": [{"title": "Costs", "summary": "In short."}, {"title": "BROKEN"}]}
    assert (status, json.loads(captured.out)) == (
        1,
        partial if task else {"TaskSummarize": partial},
    )
    lines = captured.err.splitlines()
    assert lines[0] == "langtree: 2/2 calls done, 1 failed"
    failure = SECTIONS_FAILURE.replace("sections.0", "sections.1")
    assert "\n".join(lines[1:-2]) == f"langtree: error: {failure}"
    assert lines[-2] == (
        "langtree: printed what had finished; partial, as they do not validate: TaskSummarize"
    )
    assert SUMMARY.match(lines[-1])


@pytest.mark.parametrize("method", ["function_calling", "json_schema", "json_mode"])
def test_run_asks_for_structured_output_by_the_method_given(
    capsys: pytest.CaptureFixture[str], method: str
) -> None:
    status, out, err = run_review(
        capsys, "--input", str(REVIEW_INPUTS), "--model", "fake", "--method", method
    )

    assert status == 0, err
    assert set(json.loads(out)["TaskRateReview"]) == REVIEW_FIELDS


def test_method_does_not_apply_to_a_provider(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write(tmp_path, "my_provider.py", MY_MODELS)

    status, _, err = run_review(
        capsys,
        "--input",
        str(REVIEW_INPUTS),
        "--model",
        f"{tmp_path / 'my_provider.py'}:provider",
        "--method",
        "json_mode",
    )

    assert status == 2
    assert err == (
        f"langtree: error: --method does not apply to --model "
        f"{str(tmp_path / 'my_provider.py') + ':provider'!r}, an LLMProvider\n"
        "  hint: set the method per model in the provider: "
        "LLMProvider({'key': ModelConfig(model, method=...)})\n"
    )


def test_run_stops_at_its_call_limit_with_status_1(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_review(
        capsys, "--input", str(REVIEW_INPUTS), "--model", "fake", "--max-calls", "1"
    )

    # What had finished: the review given, no rating yet.
    assert (status, json.loads(out)) == (1, json.loads(REVIEW_INPUTS.read_text()))
    lines = err.splitlines()
    assert "langtree: error: The run reached its limit of 1 calls (1 used) before a call" in err
    assert lines[-1].startswith("langtree: 1 call(s), ")


# --- modules that do not import, inputs that cannot be read, closed output --------------

# A module that does not import: its source, and the problem check reports after its path.
NOT_IMPORTABLE = {
    "syntax-error": (
        """
        from langtree import TreeNode


        class TaskA(TreeNode)
            name: str
        """,
        "5:22: error: SyntaxError: expected ':'\n"
        "    class TaskA(TreeNode)\n"
        "                         ^\n"
        "    hint: fix the Python syntax: LangTree imports the module to find its tasks\n",
    ),
    "raises-on-import": (
        """
        from langtree import TreeNode


        def load_examples():
            raise RuntimeError("examples.csv is missing")


        EXAMPLES = load_examples()
        """,
        "6:5: error: Importing the module raised RuntimeError: examples.csv is missing\n"
        '        raise RuntimeError("examples.csv is missing")\n'
        "        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        "    hint: the module must import without errors: LangTree imports it to find its "
        "tasks\n",
    ),
    "fails-to-import": (
        "\nimport no_such_package_for_langtree_tests\n",
        "2:1: error: Importing the module raised ModuleNotFoundError: No module named "
        "'no_such_package_for_langtree_tests'\n"
        "    import no_such_package_for_langtree_tests\n"
        "    ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        "    hint: install 'no_such_package_for_langtree_tests', or run langtree where it can "
        "be imported (PYTHONPATH)\n",
    ),
}


@pytest.mark.parametrize(("source", "problem"), NOT_IMPORTABLE.values(), ids=NOT_IMPORTABLE)
def test_check_reports_a_module_that_does_not_import_as_a_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, problem: str
) -> None:
    path = write(tmp_path, "tree.py", source)

    status = main(["check", str(path)])

    captured = capsys.readouterr()
    assert status == 1
    assert captured.out == (
        f"{path}:{problem}checked 0 task(s), 0 node class(es): 1 error(s), 0 warning(s)\n"
    )
    assert captured.err == ""


@pytest.mark.parametrize(
    "command",
    [["graph"], ["prompts"], ["run", "--model", "fake"]],
    ids=["graph", "prompts", "run"],
)
@pytest.mark.parametrize(("source", "problem"), NOT_IMPORTABLE.values(), ids=NOT_IMPORTABLE)
def test_a_module_that_does_not_import_is_a_problem_without_a_traceback(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
    source: str,
    problem: str,
) -> None:
    path = write(tmp_path, "tree.py", source)

    status = main([command[0], str(path), *command[1:]])

    captured = capsys.readouterr()
    assert status == 1
    assert captured.out == ""
    assert captured.err == f"{path}:{problem}"


def test_check_reports_every_module_of_a_folder_that_does_not_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "a_broken.py", "x = (\n")
    write(
        tmp_path,
        "b_good.py",
        "from langtree import TreeNode\n\n\nclass TaskA(TreeNode):\n    a: str\n",
    )
    write(tmp_path, "c_raises.py", "raise ValueError\n")

    assert check_errors(capsys, str(tmp_path)) == (
        f"{tmp_path / 'a_broken.py'}:1:5: error: SyntaxError: '(' was never closed\n"
        "    x = (\n"
        "        ^\n"
        "    hint: fix the Python syntax: LangTree imports the module to find its tasks\n"
        f"{tmp_path / 'c_raises.py'}:1:1: error: Importing the module raised ValueError\n"
        "    raise ValueError\n"
        "    ^~~~~~~~~~~~~~~~\n"
        "    hint: the module must import without errors: LangTree imports it to find its "
        "tasks\n"
        "checked 0 task(s), 0 node class(es): 2 error(s), 0 warning(s)\n"
    )


def test_check_reports_a_module_name_that_does_not_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "langtree_test_broken_tree.py", "class TaskA(\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    assert check_errors(capsys, "langtree_test_broken_tree") == (
        f"{path}:1:12: error: SyntaxError: '(' was never closed\n"
        "    class TaskA(\n"
        "               ^\n"
        "    hint: fix the Python syntax: LangTree imports the module to find its tasks\n"
        "checked 0 task(s), 0 node class(es): 1 error(s), 0 warning(s)\n"
    )


INPUT_COMMANDS = [
    pytest.param(["prompts", f"{REVIEWS}"], id="prompts"),
    pytest.param(["run", f"{REVIEWS}", "--model", "fake"], id="run"),
]


def inputs_refused(
    capsys: pytest.CaptureFixture[str], command: list[str], path: Path, task: str = ""
) -> str:
    """The usage error of ``command`` (of the review example, ``task`` appended to its
    target) on the inputs file at ``path``."""
    return refused(capsys, command[0], command[1] + task, *command[2:], "--input", path)


@pytest.mark.parametrize("command", INPUT_COMMANDS)
def test_inputs_that_are_not_utf8_are_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    path = tmp_path / "review.json"
    path.write_bytes('{"review": "Gr\u00fcn"}'.encode("latin-1"))

    err = inputs_refused(capsys, command, path, ":TaskRateReview")

    assert err == (
        f"langtree: error: Cannot read inputs from {str(path)!r}: it is not UTF-8 text "
        "(byte 0xfc at position 14)\n"
        "  hint: save the file as UTF-8\n"
    )


@pytest.mark.parametrize("command", INPUT_COMMANDS)
@pytest.mark.parametrize("depth", [101, 100_000], ids=["past-the-limit", "past-the-parser"])
def test_inputs_nested_too_deep_are_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], depth: int
) -> None:
    path = tmp_path / "review.json"
    path.write_text('{"review": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}")

    err = inputs_refused(capsys, command, path, ":TaskRateReview")

    assert err == (
        f"langtree: error: Cannot read inputs from {str(path)!r}: its values are nested more "
        "than 100 levels deep\n"
        "  hint: inputs are task values: objects and arrays a few levels deep\n"
    )


def test_inputs_100_levels_deep_are_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "review.json"
    path.write_text('{"review": ' + "[" * 99 + "]" * 99 + "}")

    err = inputs_refused(capsys, ["prompts", str(REVIEWS)], path, ":TaskRateReview")

    assert "Input task.rate_review.review = " in err  # the value is read, then refused


@pytest.mark.parametrize("command", INPUT_COMMANDS)
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('["Great kettle."]', "an array"),
        ('"Great kettle."', "a string"),
        ("5", "a number"),
        ("2.5", "a number"),
        ("true", "true or false"),
        ("null", "null"),
    ],
    ids=["array", "string", "whole-number", "number", "boolean", "null"],
)
@pytest.mark.parametrize(
    ("task", "hint"),
    [
        ("", 'write the values by task, e.g. {"TaskRateReview": {"field": "value"}}'),
        (":TaskRateReview", 'write TaskRateReview\'s own values, e.g. {"field": "value"}'),
    ],
    ids=["by-task", "one-task"],
)
def test_inputs_that_are_not_a_json_object_are_a_usage_error(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
    text: str,
    kind: str,
    task: str,
    hint: str,
) -> None:
    path = tmp_path / "review.json"
    path.write_text(text)

    err = inputs_refused(capsys, command, path, task)

    assert err == (
        f"langtree: error: Inputs in {str(path)!r} must be a JSON object, not {kind}\n"
        f"  hint: {hint}\n"
    )


FACTORY_HINT = (
    "  hint: check what building the model needs (an API key in the environment, an "
    "installed package, a reachable server)\n"
)


@pytest.mark.parametrize(
    ("attribute", "message"),
    [
        ("factory", "--model '{spec}' could not be built: RuntimeError: OPENAI_API_KEY is not set"),
        (
            "provider",
            "Model 'default' of --model '{spec}' could not be built: RuntimeError: "
            "OPENAI_API_KEY is not set",
        ),
    ],
    ids=["factory", "provider-with-a-factory"],
)
def test_a_model_factory_that_raises_is_an_environment_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, attribute: str, message: str
) -> None:
    path = write(
        tmp_path,
        "my_models.py",
        """
        from langtree import LLMProvider


        def factory():
            raise RuntimeError("OPENAI_API_KEY is not set")


        provider = LLMProvider({"default": factory})
        """,
    )
    spec = f"{path}:{attribute}"

    err = refused(capsys, "run", REVIEWS, "--input", str(REVIEW_INPUTS), "--model", spec)

    assert err == f"langtree: error: {message.format(spec=spec)}\n{FACTORY_HINT}"


def test_a_model_module_that_does_not_import_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "my_models.py", "chat = (\n")

    err = refused(capsys, "run", REVIEWS, "--input", str(REVIEW_INPUTS), "--model", f"{path}:chat")

    assert err == (
        f"langtree: error: --model {f'{path}:chat'!r}: cannot import {str(path)!r}:\n"
        f"{path}:1:8: error: SyntaxError: '(' was never closed\n"
        "    chat = (\n"
        "           ^\n"
        "    hint: fix the Python syntax: LangTree imports the module to find its tasks\n"
    )


def langtree_into_a_closed_pipe(*arguments: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a new process whose stdout is a pipe nobody reads any more."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run(
            [sys.executable, "-m", "langtree.cli", *arguments],
            cwd=ROOT,
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(writer)


@pytest.mark.parametrize(
    "arguments",
    [
        ["check", "examples"],
        ["prompts", "examples/review_rating.py", "--input", str(REVIEW_INPUTS)],
        ["run", "examples/review_rating.py", "--input", str(REVIEW_INPUTS), "--model", "fake"],
    ],
    ids=["check", "prompts", "run"],
)
def test_output_into_a_closed_pipe_ends_quietly_with_status_141(arguments: list[str]) -> None:
    finished = langtree_into_a_closed_pipe(*arguments)

    assert finished.returncode == 141
    assert "Traceback" not in finished.stderr
    assert "BrokenPipeError" not in finished.stderr
    if arguments[0] != "run":  # a run reports its progress on stderr
        assert finished.stderr == ""


def test_output_piped_into_head_ends_quietly_with_status_141(tmp_path: Path) -> None:
    inputs = tmp_path / "review.json"
    inputs.write_text(json.dumps({"review": "Boils fast. " * 50_000}))  # far past a pipe's buffer
    command = [sys.executable, "-m", "langtree.cli", "prompts"]
    command += ["examples/review_rating.py:TaskRateReview", "--input", str(inputs)]

    with subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()  # what `head -1` does after its line
        err = process.stderr.read()
        status = process.wait(timeout=120)

    assert first.startswith("# 2 prompt(s), ")
    assert (status, err) == (141, "")


def test_python_dash_m_langtree_is_the_langtree_command() -> None:
    finished = run_python(["-m", "langtree", "--help"])

    assert (finished.returncode, finished.stderr) == (0, "")
    assert finished.stdout.startswith("usage: langtree [-h] [--version] COMMAND ...\n")


def test_run_resumes_from_its_journal_counting_replayed_calls_apart(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    arguments = ("--input", str(REVIEW_INPUTS), "--model", "fake")
    journal = ("--journal", str(tmp_path / "review.sqlite"))
    first = run_review(capsys, *arguments, *journal)
    second = run_review(capsys, *arguments, *journal)

    assert (first[0], second[0]) == (0, 0)
    assert second[1] == first[1]
    first_lines, second_lines = first[2].splitlines(), second[2].splitlines()
    assert first_lines[-2] == "langtree: 10/10 calls done, 0 failed"
    assert (
        second_lines[-2]
        == "langtree: 10/10 calls done (10 replayed without a model call), 0 failed"
    )
    assert second_lines[-1].startswith("langtree: 0 call(s), 0 tokens, ")


def test_a_journal_that_cannot_be_opened_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    journal = tmp_path / "no-such-folder" / "review.sqlite"
    err = refused(capsys, *RUN_REVIEW, "--journal", journal)

    assert err == (
        f"langtree: error: The journal {str(journal)!r} cannot be created: its folder "
        f"{str(journal.parent)!r} does not exist\n"
        "  hint: create the folder, or give the run a journal in a folder that exists\n"
    )


def test_run_with_a_cache_replays_any_earlier_run_and_no_cache_bypasses_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    arguments = ("--input", str(REVIEW_INPUTS), "--model", "fake")
    cache = tmp_path / "answers.sqlite"
    first = run_review(capsys, *arguments, "--cache", str(cache))
    second = run_review(capsys, *arguments, "--cache", str(cache), "--cache-max-age", "3600")
    expired = run_review(capsys, *arguments, "--cache", str(cache), "--cache-max-age", "1e-9")

    assert (first[0], second[0], expired[0]) == (0, 0, 0)
    assert second[1] == first[1]
    assert second[2].splitlines()[-2] == (
        "langtree: 10/10 calls done (10 replayed without a model call), 0 failed"
    )
    assert expired[2].splitlines()[-2] == "langtree: 10/10 calls done, 0 failed"


def test_run_cache_options_that_do_not_fit_are_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    arguments = ("--input", str(REVIEW_INPUTS), "--model", "fake")

    status, out, err = run_review(capsys, *arguments, "--cache-max-age", "60")
    assert (status, out) == (2, "")
    assert err == (
        "langtree: error: --cache-max-age applies to the cache given with --cache\n"
        "  hint: add --cache FILE.sqlite, or set max_age on the provider's "
        "ResponseCache(...)\n"
    )
    with pytest.raises(SystemExit) as exited:
        run_review(capsys, *arguments, "--cache", str(tmp_path / "a.sqlite"), "--no-cache")
    assert exited.value.code == 2
    assert "argument --no-cache: not allowed with argument --cache" in capsys.readouterr().err


def test_run_uses_the_cache_of_a_provider_from_a_module_unless_told_not_to(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write(
        tmp_path,
        "cached_models.py",
        f"""
        from langtree import LLMProvider
        from langtree.testing import FakeChatModel

        provider = LLMProvider({{"default": FakeChatModel()}}, cache={str(tmp_path / "c.sqlite")!r})
        """,
    )
    arguments = (
        "--input",
        str(REVIEW_INPUTS),
        "--model",
        f"{tmp_path / 'cached_models.py'}:provider",
    )
    runs = [
        run_review(capsys, *arguments),
        run_review(capsys, *arguments),
        run_review(capsys, *arguments, "--no-cache"),
    ]

    assert [status for status, _, _ in runs] == [0, 0, 0]
    assert [err.splitlines()[-2] for _, _, err in runs] == [
        "langtree: 10/10 calls done, 0 failed",
        "langtree: 10/10 calls done (10 replayed without a model call), 0 failed",
        "langtree: 10/10 calls done, 0 failed",
    ]
