"""``run_on_ray``'s arguments are checked before Ray is needed, and a missing Ray names
the extra to install (these tests run without Ray)."""

import sys

import pytest

from langtree import ExecutionError, RateLimit, RunStructure
from langtree.ray import run_on_ray

HINT = (
    "\n  hint: e.g. run_on_ray(make_structure, rows, actors=4, batch_size=100, "
    "journal_dir='journals', rate_limit=RateLimit(requests_per_minute=500))"
)


def structure() -> RunStructure:
    return RunStructure()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param(
            {"actors": 0}, "actors must be a whole number of at least 1, got 0", id="actors"
        ),
        pytest.param(
            {"batch_size": 2.5},
            "batch_size must be a whole number of at least 1, got 2.5",
            id="batch_size",
        ),
        pytest.param(
            {"journal_dir": 3},
            "journal_dir must be a folder (a str or a Path) or None, got 3",
            id="journal_dir",
        ),
        pytest.param(
            {"rate_limit": 500},
            "rate_limit must be a RateLimit or None, got 500",
            id="rate_limit",
        ),
        pytest.param(
            {"rate_limit": RateLimit(tokens_per_minute=0)},
            "rate_limit: tokens_per_minute must be a number above 0 or None, got 0",
            id="rate_limit-value",
        ),
        pytest.param(
            {"num_cpus": -1}, "num_cpus must be a number of at least 0, got -1", id="num_cpus"
        ),
        pytest.param(
            {"journal": "run.sqlite"},
            "journal is one file per shard on Ray: pass journal_dir, a folder",
            id="journal",
        ),
    ],
)
def test_a_wrong_argument_is_named(arguments: dict[str, object], message: str) -> None:
    with pytest.raises(ExecutionError) as raised:
        run_on_ray(structure, [], **arguments)  # type: ignore[arg-type]

    assert str(raised.value) == message + HINT


def test_every_wrong_argument_is_listed() -> None:
    with pytest.raises(ExecutionError) as raised:
        run_on_ray("tree", [], actors=0)  # type: ignore[arg-type]

    assert str(raised.value) == (
        "2 arguments are wrong:\n"
        "  - make_structure must be a function of no arguments that returns a RunStructure, "
        "got 'tree'\n"
        "  - actors must be a whole number of at least 1, got 0" + HINT
    )


def test_a_wrong_run_setting_is_named_as_run_names_it() -> None:
    with pytest.raises(ExecutionError, match=r"^max_concurrency must be at least 1, got 0\n"):
        run_on_ray(structure, [], max_concurrency=0)


def test_without_ray_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)

    with pytest.raises(ExecutionError) as raised:
        run_on_ray(structure, [])

    assert str(raised.value) == (
        "running on Ray needs Ray Data, which is not installed\n"
        "  hint: pip install 'langtree-llm[ray]'"
    )
