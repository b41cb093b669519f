"""``langtree run --dry-run`` prints what the run would cost and builds no model."""

from __future__ import annotations

from pathlib import Path

import pytest
from command_line import EXAMPLES, REVIEWS, refused, shown, write

from langtree.cli import main


def test_dry_run_prints_the_cost_and_calls_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # No --model: a real run would build the embedded local model; a dry run builds none.
    status = main(
        [
            "run",
            f"{REVIEWS}:TaskRateReview",
            "--input",
            str(EXAMPLES / "inputs" / "review_rating.json"),
            "--dry-run",
        ]
    )

    captured = capsys.readouterr()
    assert status == 0
    assert captured.err == ""
    lines = captured.out.splitlines()
    assert lines[0].startswith("**10 call(s), ")
    assert lines[0].endswith(
        " input tokens** (2 prompt(s); retries and model-written lists add to it)"
    )
    assert lines[4].startswith("| `task.rate_review:rating` | 1 | 5 | ")
    assert lines[5].startswith("| `task.rate_review:verdict` | 1 | 5 | ")
    assert lines[9].startswith("| `default` | 2 | 10 | ")


def test_dry_run_of_a_dataset_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"review": "Fine."}\n')

    status = main(
        [
            "run",
            f"{REVIEWS}:TaskRateReview",
            "--input",
            str(rows),
            "--dry-run",
        ]
    )

    assert status == 2
    assert capsys.readouterr().err == (
        "langtree: error: --dry-run estimates one run, not a dataset\n"
        "  hint: pass one row's values as a .json file, or see `langtree prompts`\n"
    )


PITCH = '''
from pydantic import Field

from langtree import TreeNode


class TaskPitch(TreeNode):
    """Pitch a product."""

    product: str
    slogan: str = Field(description="A slogan.")
    price: str = Field(description="""A price.
    ! llm("smart")""")
'''

MODELS = """
from langtree import LLMProvider
from langtree.testing import FakeChatModel

provider = LLMProvider({"fast": FakeChatModel(), "smart": FakeChatModel()})
lacking = LLMProvider({"fast": FakeChatModel()})
"""

STEPS = (
    "**2 call(s), 222 input tokens** (2 prompt(s); retries and model-written lists add to it)\n"
    "\n"
    "| step | prompts | calls | input tokens | over budget |\n"
    "| --- | --- | --- | --- | --- |\n"
    "| `task.pitch:slogan` | 1 | 1 | 106 | 0 |\n"
    "| `task.pitch:price` | 1 | 1 | 116 | 0 |\n"
    "\n"
    "| model | prompts | calls | input tokens | over budget |\n"
    "| --- | --- | --- | --- | --- |\n"
)


def pitch_dry_run(tmp_path: Path, *model: str) -> list[str]:
    """The arguments of a dry run of the pitch, its files written to ``tmp_path``; a
    ``{models}`` in ``model`` stands for the path of its models module."""
    tree = write(tmp_path, "pitch.py", PITCH)
    models = write(tmp_path, "models.py", MODELS)
    inputs = write(tmp_path, "pitch.json", '{"product": "Kettle"}')
    model_arguments = [part.format(models=models) for part in model]
    return ["run", f"{tree}:TaskPitch", "--input", str(inputs), "--dry-run", *model_arguments]


@pytest.mark.parametrize(
    ("model", "default_key"),
    [
        pytest.param(["--model", "{models}:provider"], "fast", id="the-providers-key"),
        # Without a provider of the user's, the CLI gives its one model the keys the steps
        # name, "default" for the steps that name none.
        pytest.param([], "default", id="no-model"),
        pytest.param(["--model", "fake"], "default", id="fake"),
    ],
)
def test_dry_run_files_the_default_model_under_its_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model: list[str], default_key: str
) -> None:
    status, out, err = shown(capsys, *pitch_dry_run(tmp_path, *model))

    assert (status, err) == (0, "")
    assert out == STEPS + f"| `{default_key}` | 1 | 1 | 106 | 0 |\n| `smart` | 1 | 1 | 116 | 0 |\n"


def test_dry_run_refuses_a_provider_without_a_key_a_step_names_as_the_run_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    err = refused(capsys, *pitch_dry_run(tmp_path, "--model", "{models}:lacking"))

    assert err == (
        "langtree: error: LangTree found 1 problem:\n\n"
        "error: Model 'smart' is not in the provider\n"
        '        ! llm("smart")""")\n'
        "        ^~~~~~~~~~~~~~\n"
        f"  in TaskPitch.price ({tmp_path / 'pitch.py'}:13)\n"
        "  hint: the provider's models are 'fast'\n"
    )
