"""``langtree run --dry-run`` prints what the run would cost and builds no model."""

from __future__ import annotations

from pathlib import Path

import pytest

from langtree.cli import main

EXAMPLES = Path(__file__).parent.parent / "examples"


def test_dry_run_prints_the_cost_and_calls_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # No --model: a real run would build the embedded local model; a dry run builds none.
    status = main(
        [
            "run",
            f"{EXAMPLES / 'review_rating.py'}:TaskRateReview",
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
            f"{EXAMPLES / 'review_rating.py'}:TaskRateReview",
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
