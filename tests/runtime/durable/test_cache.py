"""The response cache: answers kept across runs on the provider or the run, keyed like
the journal, so resampled calls stay distinct (see ``langtree.runtime.durable._cache`` and
docs/durable.md)."""

import itertools
import sqlite3
from pathlib import Path

import pytest
from journal_worker import answer
from pydantic import Field
from test_journal import NOTES, TaskNotes, TaskRatings

from langtree import (
    ExecutionError,
    LLMProvider,
    ModelConfig,
    ResponseCache,
    RunStructure,
    StructureError,
    TreeNode,
)
from langtree.runtime import CacheReport, JournalReport, RunResult
from langtree.testing import FakeChatModel


def run_notes(provider: LLMProvider, **options: object) -> RunResult:
    structure = RunStructure(provider=provider)
    structure.add(TaskNotes)
    return structure.run(NOTES, **options)  # type: ignore[arg-type]


def test_a_provider_cache_serves_every_later_run_without_a_model_call(tmp_path: Path) -> None:
    cache = tmp_path / "answers.sqlite"
    first = run_notes(LLMProvider({"fake": FakeChatModel(responder=answer)}, cache=cache))
    model = FakeChatModel(responder=answer)

    second = run_notes(LLMProvider({"fake": model}, cache=cache))

    assert model.calls == []
    assert second[TaskNotes] == first[TaskNotes]
    assert [r.replayed for r in second.trace] == [True] * 4
    assert (first.usage.calls, second.usage.calls) == (4, 0)
    assert first.cache == CacheReport(path=str(cache), replayed=0, recorded=4)
    assert second.cache == CacheReport(path=str(cache), replayed=4, recorded=0)
    assert (first.journal, second.journal) == (None, None)


def test_resampled_calls_stay_distinct_answers_in_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "answers.sqlite"
    numbers = itertools.count(1)
    sampling = FakeChatModel(responder=lambda _: {"rating": f"word {next(numbers)}"})
    inputs = {TaskRatings: {"items": [{"text": "one"}]}}
    runs = []
    for model in (sampling, FakeChatModel()):
        structure = RunStructure(provider=LLMProvider({"fake": model}, cache=cache))
        structure.add(TaskRatings)
        runs.append(structure.run(inputs))

    first, second = runs
    assert [r.raw_output for r in second.trace] == [r.raw_output for r in first.trace]
    assert [r.sample for r in second.trace] == [1, 2, 3]
    assert len({r.raw_output for r in second.trace}) == 3
    assert second.cache == CacheReport(path=str(cache), replayed=3, recorded=0)


def test_cache_false_bypasses_the_provider_cache_for_one_run(tmp_path: Path) -> None:
    cache = tmp_path / "answers.sqlite"
    run_notes(LLMProvider({"fake": FakeChatModel(responder=answer)}, cache=cache))
    model = FakeChatModel(responder=answer)

    bypassed = run_notes(LLMProvider({"fake": model}, cache=cache), cache=False)

    assert len(model.calls) == 4
    assert bypassed.cache is None
    assert not any(r.replayed for r in bypassed.trace)


def test_a_run_cache_replaces_the_provider_cache(tmp_path: Path) -> None:
    own, other = tmp_path / "own.sqlite", tmp_path / "other.sqlite"
    run_notes(LLMProvider({"fake": FakeChatModel(responder=answer)}, cache=own))
    model = FakeChatModel(responder=answer)

    result = run_notes(LLMProvider({"fake": model}, cache=own), cache=str(other))

    assert len(model.calls) == 4
    assert result.cache == CacheReport(path=str(other), replayed=0, recorded=4)


class Checked(TreeNode):
    """Check the paragraph.

    ! llm("careful")
    """

    text: str = Field(description="The paragraph.")
    verdict: str = Field(description="One word.")


class TaskChecks(TreeNode):
    """Check the paragraphs, then sum them up."""

    items: list[Checked] = Field(default=[], description="The paragraphs.")
    digest: str = Field(description="One sentence.")


def test_a_model_kept_out_of_the_cache_is_asked_anew_in_every_run(tmp_path: Path) -> None:
    cache = tmp_path / "answers.sqlite"
    inputs = {TaskChecks: {"items": [{"text": "one"}, {"text": "two"}]}}
    models: list[tuple[FakeChatModel, FakeChatModel]] = []
    results = []
    for _ in range(2):
        fast, careful = FakeChatModel(responder=answer), FakeChatModel(responder=answer)
        models.append((fast, careful))
        provider = LLMProvider(
            {"fast": fast, "careful": ModelConfig(careful, cache=False)}, cache=cache
        )
        structure = RunStructure(provider=provider)
        structure.add(TaskChecks)
        results.append(structure.run(inputs))

    (fast_1, careful_1), (fast_2, careful_2) = models
    assert [len(m.calls) for m in (fast_1, careful_1, fast_2, careful_2)] == [1, 2, 0, 2]
    assert results[1].cache == CacheReport(path=str(cache), replayed=1, recorded=0)


class FakeClock:
    """Seconds since the epoch that move only when a test moves them."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_cached_answers_older_than_max_age_are_asked_for_again_and_replaced(
    tmp_path: Path,
) -> None:
    path = tmp_path / "answers.sqlite"
    clock = FakeClock(1_000_000.0)
    first = LLMProvider({"fake": FakeChatModel(responder=answer)})
    run_notes(first, cache=ResponseCache(path, clock=clock))
    clock.now += 100  # the answers are 100 s old
    model = FakeChatModel(responder=answer)
    provider = LLMProvider({"fake": model})

    fresh = run_notes(provider, cache=ResponseCache(path, max_age=101, clock=clock))
    expired = run_notes(provider, cache=ResponseCache(path, max_age=99, clock=clock))
    renewed = run_notes(provider, cache=ResponseCache(path, max_age=1, clock=clock))

    assert [fresh.cache, expired.cache, renewed.cache] == [
        CacheReport(path=str(path), replayed=4, recorded=0),
        CacheReport(path=str(path), replayed=0, recorded=4),
        CacheReport(path=str(path), replayed=4, recorded=0),
    ]
    assert len(model.calls) == 4
    with sqlite3.connect(path) as connection:
        (rows,) = connection.execute("SELECT COUNT(*) FROM answers").fetchone()
    assert rows == 4


def test_a_journal_and_a_cache_both_record_and_either_replays(tmp_path: Path) -> None:
    cache, journal = tmp_path / "answers.sqlite", tmp_path / "run.sqlite"
    first = run_notes(
        LLMProvider({"fake": FakeChatModel(responder=answer)}, cache=cache), journal=journal
    )
    model = FakeChatModel(responder=answer)

    from_journal = run_notes(LLMProvider({"fake": model}), journal=journal)
    from_cache = run_notes(
        LLMProvider({"fake": model}, cache=cache), journal=tmp_path / "new.sqlite"
    )

    assert model.calls == []
    assert first.journal == JournalReport(path=str(journal), replayed=0, recorded=4, unmatched=0)
    assert first.cache == CacheReport(path=str(cache), replayed=0, recorded=4)
    assert from_journal.journal == JournalReport(
        path=str(journal), replayed=4, recorded=0, unmatched=0
    )
    assert from_cache.cache == CacheReport(path=str(cache), replayed=4, recorded=0)
    assert from_cache.journal == JournalReport(
        path=str(tmp_path / "new.sqlite"), replayed=0, recorded=0, unmatched=0
    )


def test_a_cache_that_is_the_run_journal_is_an_error_before_any_call(tmp_path: Path) -> None:
    path = tmp_path / "run.sqlite"
    model = FakeChatModel(responder=answer)

    with pytest.raises(ExecutionError) as caught:
        run_notes(LLMProvider({"fake": model}, cache=path), journal=tmp_path / "." / "run.sqlite")

    assert str(caught.value) == (
        f"The run's journal and its cache are the same file ({str(path)!r})\n"
        "  hint: a journal already replays the calls it holds: give the run either a journal "
        "or a cache, or two different files"
    )
    assert model.calls == []


def test_a_cache_that_cannot_be_opened_is_an_error_before_any_call(tmp_path: Path) -> None:
    path = tmp_path / "missing-folder" / "answers.sqlite"
    model = FakeChatModel(responder=answer)

    with pytest.raises(ExecutionError) as caught:
        run_notes(LLMProvider({"fake": model}, cache=path))

    assert str(caught.value) == (
        f"The cache {str(path)!r} cannot be created: its folder {str(path.parent)!r} does "
        "not exist\n  hint: create the folder, or give the run a cache in a folder that exists"
    )
    assert model.calls == []


def test_a_cache_holds_many_runs_answers_and_replays_only_matching_calls(tmp_path: Path) -> None:
    cache = tmp_path / "answers.sqlite"
    for count in (1, 3):
        notes = {TaskNotes: {"paragraphs": [{"text": f"run {count}, {i}"} for i in range(count)]}}
        structure = RunStructure(provider=LLMProvider({"fake": FakeChatModel()}, cache=cache))
        structure.add(TaskNotes)
        structure.run(notes)
    model = FakeChatModel(responder=answer)

    result = run_notes(LLMProvider({"fake": model}, cache=cache))

    assert len(model.calls) == 4
    assert result.cache == CacheReport(path=str(cache), replayed=0, recorded=4)
    with sqlite3.connect(cache) as connection:
        (rows,) = connection.execute("SELECT COUNT(*) FROM answers").fetchone()
    assert rows == 2 + 4 + 4


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(
            lambda: LLMProvider({"fake": FakeChatModel()}, cache=3),  # type: ignore[arg-type]
            "cache must be a ResponseCache, a file path (a str or a Path), False or None, got 3",
            id="provider-cache-not-a-path",
        ),
        pytest.param(
            lambda: LLMProvider({"fake": FakeChatModel()}, cache=ResponseCache("a", max_age=-1)),
            "cache max_age must be a number of seconds above 0 or None, got -1",
            id="negative-max-age",
        ),
        pytest.param(
            lambda: LLMProvider({"fake": ModelConfig(FakeChatModel(), cache="no")}),  # type: ignore[arg-type]
            "Model 'fake': cache must be True or False, got 'no'",
            id="model-config-cache",
        ),
    ],
)
def test_a_wrong_provider_cache_is_a_structure_error(make: object, message: str) -> None:
    with pytest.raises(StructureError) as caught:
        make()  # type: ignore[operator]

    assert [d.message for d in caught.value.diagnostics] == [message]


@pytest.mark.parametrize(
    ("cache", "message"),
    [
        pytest.param(
            True,
            "cache must be a ResponseCache, a file path (a str or a Path), False or None, got True",
            id="true",
        ),
        pytest.param(
            ResponseCache(Path("a.sqlite"), max_age=float("nan")),
            "cache max_age must be a number of seconds above 0 or None, got nan",
            id="nan-max-age",
        ),
        pytest.param(
            ResponseCache(Path("a.sqlite"), clock=3),  # type: ignore[arg-type]
            "cache clock must be a function returning seconds since the epoch, got 3",
            id="clock-not-a-function",
        ),
    ],
)
def test_a_wrong_run_cache_is_an_error_before_any_call(cache: object, message: str) -> None:
    model = FakeChatModel(responder=answer)

    with pytest.raises(ExecutionError) as caught:
        run_notes(LLMProvider({"fake": model}), cache=cache)

    assert str(caught.value).startswith(message + "\n  hint: ")
    assert model.calls == []


def test_the_provider_repr_names_its_cache() -> None:
    provider = LLMProvider({"fake": FakeChatModel()}, cache="answers.sqlite")

    assert repr(provider) == (
        "LLMProvider(models=['fake'], default='fake', cache='answers.sqlite')"
    )
