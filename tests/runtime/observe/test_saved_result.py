"""What ``RunResult.to_json()`` saves beyond the values, the trace and the provenance: the
plan the run followed, why each task does not validate, and which calls were replayed."""

import json
from pathlib import Path

from parts_run import parts_run


def test_a_result_keeps_the_plan_its_run_followed_and_saves_it(tmp_path: Path) -> None:
    result = parts_run(tmp_path / "run.sqlite")
    assert result.plan is not None

    data = json.loads(result.to_json())

    assert data["plan"] == result.plan.to_dict()
    assert data["plan"]["steps"] == [
        {
            "id": "task.parts.parts:note",
            "node_tag": "task.parts.parts",
            "element_path": "task.parts.parts[*]",
            "fields": ["note"],
            "modifier": "sequential",
            "model": None,
            "resample": 1,
            "list_levels": 1,
            "transform": None,
            "depends_on": [],
        },
        {
            "id": "task.parts:summary",
            "node_tag": "task.parts",
            "element_path": "task.parts",
            "fields": ["summary"],
            "modifier": "sequential",
            "model": None,
            "resample": 1,
            "list_levels": 0,
            "transform": None,
            "depends_on": ["task.parts.parts:note"],
        },
    ]


def test_a_saved_result_says_why_each_task_does_not_validate(tmp_path: Path) -> None:
    result = parts_run(tmp_path / "run.sqlite")

    data = json.loads(result.to_json())

    assert data["invalid"] == dict(result.invalid)
    assert list(data["invalid"]) == ["task.parts"]


def test_a_saved_trace_marks_each_replayed_call(tmp_path: Path) -> None:
    first = parts_run(tmp_path / "run.sqlite")
    again = parts_run(tmp_path / "run.sqlite")

    saved = [json.loads(run.to_json())["trace"] for run in (first, again)]

    assert [[record["replayed"] for record in trace] for trace in saved] == [
        [False, False],
        [True, True],
    ]
