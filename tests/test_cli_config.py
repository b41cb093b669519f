"""``--config SPEC``: the settings of ``RunStructure(config)`` from a JSON file or a module,
for ``check``, ``graph``, ``prompts`` and ``run`` (see ``langtree.cli._config``)."""

import json
import re
import textwrap
from pathlib import Path

import pytest
from command_line import REVIEW_INPUTS, REVIEWS, refused, shown

REPORT = '''
from pydantic import Field

from langtree import TreeNode


class Section(TreeNode):
    """Summarise one section."""

    text: str
    summary: str = Field(description="Two sentences.")


class TaskReport(TreeNode):
    """You summarise a report for a busy reader."""

    sections: list[Section]
'''

COUNTS = '''
from pydantic import Field

from langtree import TreeNode


class TaskCounts(TreeNode):
    """! @all->task.score@{{value.points=label}}"""

    label: str = Field(default="", description="The label.")


class TaskScore(TreeNode):
    points: int = Field(description="The points.")
'''

PITCH = '''
from pydantic import Field

from langtree import TreeNode


class TaskPitch(TreeNode):
    """Pitch a product."""

    slogan: str = Field(description="A slogan.")
    price: str = Field(description="A price.")
'''


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


def settings(tmp_path: Path, values: object, name: str = "settings.json") -> Path:
    return write(tmp_path / name, json.dumps(values))


def report_prompts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, *extra: object
) -> tuple[int, str, str]:
    tree = write(tmp_path / "report.py", REPORT)
    inputs = settings(tmp_path, {"sections": [{"text": "Sales rose."}]}, "inputs.json")
    return shown(capsys, "prompts", f"{tree}:TaskReport", "--input", inputs, *extra)


def fenced(output: str, heading: str) -> str:
    """The text of the first code block under ``### heading`` in the Markdown output."""
    found = re.search(rf"^### {heading}\n\n```markdown\n(.*?)\n```$", output, re.S | re.M)
    assert found is not None, output
    return found.group(1)


# --- langtree prompts -------------------------------------------------------------------


def test_prompts_with_a_token_budget_reports_each_prompt_over_it_with_status_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert report_prompts(capsys, tmp_path)[0] == 0

    status, out, err = report_prompts(
        capsys, tmp_path, "--config", settings(tmp_path, {"token_budget": 10})
    )

    assert status == 1
    assert "tokens (cl100k_base), model `default`. **Over the budget of 10 tokens.**" in out
    assert re.fullmatch(
        r"langtree: task\.report\.sections\[0\]: \d+ tokens, over the budget of 10\n", err
    )


def test_prompts_take_the_outline_and_field_descriptions_of_the_config(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = settings(tmp_path, {"outline": "node", "field_descriptions": "schema"})

    _, default, _ = report_prompts(capsys, tmp_path)
    status, lean, err = report_prompts(capsys, tmp_path, "--config", config)

    assert (status, err) == (0, "")
    assert fenced(default, "Human") == (
        "# Report\n\nYou summarise a report for a busy reader.\n\n## Sections\n\n"
        "### Section\n\nSummarise one section.\n\n#### Summary\n\nTwo sentences.\n\n"
        "# Context\n\n## Text\n\nSales rose.\n\n# Output\n\nWrite Summary."
    )
    assert fenced(lean, "Human") == (
        "# Section\n\nSummarise one section.\n\n# Context\n\n## Text\n\nSales rose.\n\n"
        "# Output\n\nWrite Summary."
    )


def test_a_config_from_a_module_holds_what_json_cannot_say(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    module = write(
        tmp_path / "my_settings.py",
        """
        from langtree.prompts._template import LEAN_TEMPLATE

        CONFIG = {
            "outline": "root",
            "field_descriptions": "schema",
            "prompt_template": LEAN_TEMPLATE,
        }
        """,
    )

    status, out, err = report_prompts(capsys, tmp_path, "--config", f"{module}:CONFIG")

    assert (status, err) == (0, "")
    assert fenced(out, "System") == (
        "# Report\n\nYou summarise a report for a busy reader.\n\n"
        "## Section\n\nSummarise one section."
    )
    assert fenced(out, "Human") == "# Context\n\n## Text\n\nSales rose."


# --- langtree check and graph -----------------------------------------------------------


def test_check_validates_with_the_settings_of_the_config(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tree = write(tmp_path / "counts.py", COUNTS)
    permissive = settings(tmp_path, {"validation_strategy": "permissive"})

    strict_status, strict, _ = shown(capsys, "check", tree)
    status, out, err = shown(capsys, "check", tree, "--config", permissive)

    assert strict_status == 1
    assert strict.endswith("1 error(s), 0 warning(s)\n")
    assert (status, err) == (0, "")
    assert ": warning: Type incompatibility in variable mapping " in out
    assert out.endswith("checked 2 task(s), 2 node class(es): 0 error(s), 1 warning(s)\n")


def test_graph_plans_with_the_default_modifier_of_the_config(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tree = write(tmp_path / "pitch.py", PITCH)
    parallel = settings(tmp_path, {"default_modifier": "parallel"})

    assert shown(capsys, "graph", tree) == (
        0,
        'flowchart TD\n    s0["task.pitch\nslogan"]\n    s1["task.pitch\nprice"]\n    s0 --> s1\n',
        "",
    )
    assert shown(capsys, "graph", tree, "--config", parallel) == (
        0,
        'flowchart TD\n    s0["task.pitch\nslogan, price"]\n',
        "",
    )


# --- langtree run -----------------------------------------------------------------------


def run_review(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, config: object, *extra: object
) -> tuple[int, str, str]:
    spec = settings(tmp_path, config)
    return shown(
        capsys,
        "run",
        REVIEWS,
        "--input",
        REVIEW_INPUTS,
        "--model",
        "fake",
        "--config",
        spec,
        *extra,
    )


def test_run_takes_the_run_settings_of_the_config(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = run_review(capsys, tmp_path, {"usage_limits": {"calls": 1}})

    # What had finished: the review given, no rating yet.
    assert (status, json.loads(out)) == (1, json.loads(REVIEW_INPUTS.read_text()))
    assert "langtree: error: The run reached its limit of 1 calls (1 used) before a call" in err


@pytest.mark.parametrize(
    ("config", "flag"),
    [
        ({"usage_limits": {"calls": 1}}, ["--max-calls", "100"]),
        ({"deadline": 0.000001}, ["--deadline", "600"]),
    ],
    ids=["usage-limits", "deadline"],
)
def test_the_options_of_run_override_the_run_settings_of_the_config(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, config: object, flag: list[str]
) -> None:
    stopped, _, _ = run_review(capsys, tmp_path, config)
    status, out, err = run_review(capsys, tmp_path, config, *flag)

    assert stopped == 1
    assert status == 0, err
    assert set(json.loads(out)["TaskRateReview"]) == {
        "review",
        "rating",
        "rating_resampled_value",
        "verdict",
    }


def test_max_calls_keeps_the_other_limits_of_the_config(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = {"usage_limits": {"calls": 1, "total_tokens": 1}}

    status, out, err = run_review(capsys, tmp_path, config, "--max-calls", "100")

    # What had finished: the review given, no rating yet.
    assert (status, json.loads(out)) == (1, json.loads(REVIEW_INPUTS.read_text()))
    assert "langtree: error: The run reached its limit of 1 total tokens (0 used)" in err


BUSY_MODELS = '''
from langtree import LLMProvider
from langtree.testing import FakeChatModel


class GatewayBusyError(Exception):
    """The gateway's own transient error."""


FAULTS = [GatewayBusyError("busy")]


def answer(request):
    if FAULTS:
        raise FAULTS.pop()
    return {name: f"{name} ok" for name in request.fields}


provider = LLMProvider({"default": FakeChatModel(answer)})
CONFIG = {"retry": {"transient_errors": [GatewayBusyError], "initial_delay": 0.001}}
'''


def test_a_config_module_lists_transient_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = write(tmp_path / "pitch.py", PITCH)
    write(tmp_path / "busy_gateway_models.py", BUSY_MODELS)
    # Imported by name, the module runs once: its error class is the one the config lists.
    monkeypatch.syspath_prepend(str(tmp_path))

    status, out, err = shown(
        capsys,
        "run",
        tree,
        "--model",
        "busy_gateway_models:provider",
        "--config",
        "busy_gateway_models:CONFIG",
    )

    assert status == 0, err
    assert json.loads(out)["TaskPitch"] == {"slogan": "slogan ok", "price": "price ok"}
    assert "langtree: 3 call(s), " in err  # the slogan's first call failed, then was retried


def test_a_json_config_cannot_name_transient_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tree = write(tmp_path / "pitch.py", PITCH)
    spec = settings(tmp_path, {"retry": {"transient_errors": ["TimeoutError"]}})
    where = f"--config {str(spec)!r}"

    assert shown(capsys, "run", tree, "--model", "fake", "--config", spec) == (
        2,
        "",
        f"langtree: error: {where}: RunStructure(config) refuses these settings:\n"
        f"{where}: error: retry: transient_errors[0] must be an exception class, got the text "
        "'TimeoutError' (a .json config cannot hold classes: give them in a Python dict)\n"
        "  hint: e.g. RunStructure({'call_timeout': 60, 'retry': {'max_retries': 5}})\n",
    )


def test_a_dataset_run_takes_the_config(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rows = write(tmp_path / "rows.jsonl", '{"review": "Fine."}\n{"review": "Bad."}\n')
    spec = settings(tmp_path, {"usage_limits": {"calls": 1}})
    target = f"{REVIEWS}:TaskRateReview"

    status, out, _ = shown(
        capsys, "run", target, "--input", rows, "--model", "fake", "--config", spec
    )
    lines = [json.loads(line) for line in out.splitlines()]

    assert status == 1
    assert [sorted(line) for line in lines] == [["error", "row"], ["error", "row"]]
    assert str(lines[0]["error"]).startswith("The run reached its limit of 1 calls (1 used)")


def test_a_dry_run_takes_the_config(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    spec = settings(tmp_path, {"token_budget": 10})

    status, out, err = shown(
        capsys, "run", REVIEWS, "--input", REVIEW_INPUTS, "--dry-run", "--config", spec
    )

    assert (status, err) == (0, "")
    assert out.splitlines()[-1].startswith("| `default` | 2 | 10 | ")
    assert out.splitlines()[-1].endswith(" | 2 |")


# --- a config that cannot be used -------------------------------------------------------


def test_settings_that_runstructure_refuses_are_each_reported_with_status_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = settings(tmp_path, {"outlin": "node", "field_descriptions": "json", "max_retries": -1})
    tree = write(tmp_path / "pitch.py", PITCH)
    where = f"--config {str(spec)!r}"

    for command in (["check", tree], ["graph", tree], ["prompts", tree], ["run", tree]):
        assert shown(capsys, *command, "--config", spec) == (
            2,
            "",
            f"langtree: error: {where}: RunStructure(config) refuses these settings:\n"
            f"{where}: error: Unknown setting 'outlin'\n"
            "  hint: did you mean 'outline'?\n"
            f"{where}: error: 'field_descriptions' must be 'text' or 'schema', got 'json'\n"
            "  hint: pass 'text' (the default: in the prompt and in the output schema) or "
            "'schema' (in the output schema alone)\n"
            f"{where}: error: max_retries must not be negative, got -1\n"
            "  hint: e.g. RunStructure({'call_timeout': 60, 'retry': {'max_retries': 5}})\n",
        )


SPEC_ERRORS = {
    "missing": (
        "{tmp}/missing.json",
        "langtree: error: Cannot read --config settings from '{tmp}/missing.json': there is no "
        "such file\n"
        "  hint: check the path (a relative one starts from the working folder)\n",
    ),
    "not-json": (
        "{tmp}/broken.json",
        "langtree: error: Cannot read --config settings from '{tmp}/broken.json': Expecting "
        "property name enclosed in double quotes: line 2 column 1 (char 2)\n",
    ),
    "not-an-object": (
        "{tmp}/list.json",
        "langtree: error: --config settings in '{tmp}/list.json' must be a JSON object, not an "
        "array\n"
        '  hint: write the settings by name, e.g. {{"outline": "root", "token_budget": 4000}}\n',
    ),
    "no-module": (
        "no_such_settings_module:CONFIG",
        "langtree: error: --config 'no_such_settings_module:CONFIG': cannot import "
        "'no_such_settings_module': No file or importable module named "
        "'no_such_settings_module'\n",
    ),
    "no-attribute": (
        "{tmp}/my_settings.py:MISSING",
        "langtree: error: --config '{tmp}/my_settings.py:MISSING': '{tmp}/my_settings.py' has "
        "no attribute 'MISSING'\n",
    ),
    "not-a-dict": (
        "{tmp}/my_settings.py:NAME",
        "langtree: error: --config '{tmp}/my_settings.py:NAME' is a 'str', not a dict of "
        "settings\n"
        "  hint: name a dict of RunStructure's settings, e.g. CONFIG = "
        '{{"outline": "root", "token_budget": 4000}}\n',
    ),
    "malformed": (
        "{tmp}/my_settings.py",
        "langtree: error: --config takes a .json file or module:attribute, got "
        "'{tmp}/my_settings.py'\n"
        "  hint: e.g. --config settings.json, or --config my_settings:CONFIG (a dict of "
        "RunStructure's settings)\n",
    ),
    "json-text": (
        '{{"on_error": "continue"}}',
        "langtree: error: --config takes a .json file or module:attribute, not the settings "
        'themselves: \'{{"on_error": "continue"}}\'\n'
        "  hint: write them to a file and give its path, e.g. --config settings.json\n",
    ),
}


@pytest.mark.parametrize(("spec", "message"), SPEC_ERRORS.values(), ids=SPEC_ERRORS)
def test_a_config_that_cannot_be_read_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    spec: str,
    message: str,
) -> None:
    write(tmp_path / "broken.json", "{\n")
    write(tmp_path / "list.json", "[1]\n")
    write(tmp_path / "my_settings.py", 'NAME = "report"\n')
    tree = write(tmp_path / "pitch.py", PITCH)

    err = refused(capsys, "prompts", tree, "--config", spec.format(tmp=tmp_path))

    assert err == message.format(tmp=tmp_path)


def test_a_config_module_that_does_not_import_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    module = write(tmp_path / "my_settings.py", "CONFIG = (\n")
    spec = f"{module}:CONFIG"

    err = refused(capsys, "check", tmp_path / "missing.py", "--config", spec)

    assert err == (
        f"langtree: error: --config {spec!r}: cannot import {str(module)!r}:\n"
        f"{module}:1:10: error: SyntaxError: '(' was never closed\n"
        "    CONFIG = (\n"
        "             ^\n"
        "    hint: fix the Python syntax: LangTree imports the module to find its tasks\n"
    )
