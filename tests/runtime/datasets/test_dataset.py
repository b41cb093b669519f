"""Dataset runs: one tree over many rows (``run_many``/``arun_many``), rows sharing the
run's settings, failures per row, resume through the journal (see
``langtree.runtime.datasets._dataset`` and docs/datasets.md)."""

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path

import pytest
from journal_worker import answer
from notes_tree import TaskNotes, notes_structure

from langtree import (
    ExecutionError,
    LLMProvider,
    RowResult,
    RunLimitError,
    RunStructure,
    StepFailedError,
    StructureError,
    UsageLimits,
)
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest


def notes(row: int, paragraphs: int = 2) -> dict[object, object]:
    return {TaskNotes: {"paragraphs": [{"text": f"row {row}, {i}"} for i in range(paragraphs)]}}


def test_every_row_gives_what_its_own_run_gives_in_input_order() -> None:
    rows = [notes(row, paragraphs=row % 3) for row in range(12)]
    alone = [notes_structure(FakeChatModel(responder=answer)).run(row)[TaskNotes] for row in rows]

    results = list(notes_structure(FakeChatModel(responder=answer)).run_many(rows))

    assert [row.index for row in results] == list(range(12))
    assert all(row.ok and row.error is None for row in results)
    assert [row.result[TaskNotes] for row in results if row.result] == alone


def test_unordered_rows_come_out_as_they_finish() -> None:
    async def slow_first_row(request: FakeRequest) -> Mapping[str, object]:
        await asyncio.sleep(0.3 if "row 0" in request.text else 0)
        return answer(request)

    tree = notes_structure(FakeChatModel(responder=slow_first_row))

    unordered = [row.index for row in tree.run_many([notes(0), notes(1)], ordered=False)]
    ordered = [row.index for row in tree.run_many([notes(0), notes(1)])]

    assert (unordered, ordered) == ([1, 0], [0, 1])


def test_a_failed_row_is_reported_and_the_other_rows_finish() -> None:
    def broken(request: FakeRequest) -> Mapping[str, object]:
        if "row 1, 0" in request.text:
            raise ValueError("the provider rejects this one")
        return answer(request)

    rows = [notes(0), notes(1), {"NoSuchTask": {}}, "not inputs", notes(4)]
    results = list(notes_structure(FakeChatModel(responder=broken)).run_many(rows))

    assert [(row.index, row.ok) for row in results] == [
        (0, True),
        (1, False),
        (2, False),
        (3, False),
        (4, True),
    ]
    failed = results[1].error
    assert isinstance(failed, StepFailedError)
    assert failed.node_path == "task.notes.paragraphs[0]"
    assert failed.result is not None
    assert isinstance(results[2].error, StructureError)
    assert isinstance(results[3].error, StructureError)
    assert "Inputs must be a dict of task classes (or tags)" in str(results[3].error)


def test_a_row_whose_task_does_not_validate_is_a_failed_row() -> None:
    def no_summary_in_row_1(request: FakeRequest) -> Mapping[str, object]:
        if "row 1, 0" in request.text and request.fields == ("summary",):
            return {"summary": None}
        return answer(request)

    model = FakeChatModel(responder=no_summary_in_row_1)
    tree = RunStructure({"on_error": "continue"}, provider=LLMProvider({"fake": model}))
    tree.add(TaskNotes)

    results = list(tree.run_many([notes(0), notes(1)], max_retries=0))

    assert [(row.index, row.ok) for row in results] == [(0, True), (1, False)]
    failed = results[1]
    assert failed.result is not None
    assert [error.node_path for error in failed.result.errors] == ["task.notes.paragraphs[0]"]
    assert isinstance(failed.error, ExecutionError)
    assert str(failed.error) == (
        "The values of 'TaskNotes' do not validate: 1 step instance(s) failed and 1 were "
        "skipped:\n"
        "  - paragraphs.0.summary: Field required\n"
        "  - digest: Field required\n"
        "  hint: see result.errors and result.skipped; result.partial('TaskNotes') gives "
        "the values as plain data"
    )


def test_max_concurrency_caps_the_calls_of_all_rows_together() -> None:
    in_flight = peak = 0

    async def counted(request: FakeRequest) -> Mapping[str, object]:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return answer(request)

    rows = [notes(row, paragraphs=4) for row in range(10)]
    results = list(
        notes_structure(FakeChatModel(responder=counted)).run_many(rows, max_concurrency=3)
    )

    assert all(row.ok for row in results)
    assert peak == 3


def test_rows_are_read_lazily_and_at_most_rows_in_flight_are_held() -> None:
    pulled: list[int] = []

    def rows() -> Iterator[dict[object, object]]:
        for row in range(20):
            pulled.append(row)
            yield notes(row)

    seen: list[tuple[int, int]] = []
    for row in notes_structure(FakeChatModel(responder=answer)).run_many(rows(), rows_in_flight=3):
        seen.append((row.index, len(pulled)))

    assert [index for index, _ in seen] == list(range(20))
    assert all(pulled_then <= index + 3 for index, pulled_then in seen)


def test_on_row_sees_every_row_as_it_finishes() -> None:
    finished: list[RowResult] = []

    results = list(
        notes_structure(FakeChatModel(responder=answer)).run_many(
            [notes(row) for row in range(5)], on_row=finished.append
        )
    )

    assert sorted(row.index for row in finished) == [0, 1, 2, 3, 4]
    assert {row.index: row for row in finished} == {row.index: row for row in results}


def test_a_dataset_resumes_from_its_journal_and_skips_the_rows_it_was_told_to(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "dataset.sqlite"
    rows = [notes(row) for row in range(6)]

    def down_for_row_3(request: FakeRequest) -> Mapping[str, object]:
        if "row 3" in request.text and request.node_path == "task.notes":
            raise ValueError("the provider went down")
        return answer(request)

    first = list(
        notes_structure(FakeChatModel(responder=down_for_row_3)).run_many(rows, journal=journal)
    )
    model = FakeChatModel(responder=answer)
    written = {row.index for row in first if row.ok and row.index != 5}

    second = list(notes_structure(model).run_many(rows, journal=journal, skip=written))

    assert [row.index for row in first if not row.ok] == [3]
    assert [row.index for row in second] == [3, 5]
    assert all(row.ok for row in second)
    # Row 3's paragraphs had finished (replayed); its digest is the one call made.
    assert [request.node_path for request in model.calls] == ["task.notes"]
    assert second[1].result is not None
    assert all(record.replayed for record in second[1].result.trace)


def test_a_usage_limit_stops_the_dataset_after_the_rows_in_flight() -> None:
    model = FakeChatModel(responder=answer)
    rows = [notes(row) for row in range(50)]
    results: list[RowResult] = []

    dataset = notes_structure(model).run_many(
        rows, usage_limits=UsageLimits(calls=10), max_concurrency=2, rows_in_flight=2
    )
    with pytest.raises(RunLimitError) as caught:
        results.extend(dataset)

    assert caught.value.limit == "calls"
    assert len(model.calls) == 10
    assert len(results) < 50
    assert any(isinstance(row.error, RunLimitError) for row in results)


def test_arun_many_takes_an_async_iterable_of_rows() -> None:
    async def rows() -> AsyncIterator[dict[object, object]]:
        for row in range(4):
            await asyncio.sleep(0)
            yield notes(row)

    async def collect() -> list[int]:
        tree = notes_structure(FakeChatModel(responder=answer))
        return [row.index async for row in tree.arun_many(rows(), ordered=False)]

    assert sorted(asyncio.run(collect())) == [0, 1, 2, 3]


def test_leaving_the_loop_early_stops_the_rows_in_flight() -> None:
    model = FakeChatModel(responder=answer, latency=0.05)
    rows = [notes(row, paragraphs=3) for row in range(40)]

    for row in notes_structure(model).run_many(rows, rows_in_flight=4):
        assert row.index == 0
        break
    calls = len(model.calls)
    asyncio.run(asyncio.sleep(0.2))

    assert len(model.calls) == calls < 40 * 4


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param(
            {"rows": notes(0)},
            "rows must be an iterable of inputs (one per run), got a dict; to run one set of "
            "inputs, use run()",
            id="a-dict",
        ),
        pytest.param(
            {"rows": 3},
            "rows must be an iterable of inputs (one per run), got 'int'; to run one set of "
            "inputs, use run()",
            id="not-iterable",
        ),
        pytest.param(
            {"rows": [], "rows_in_flight": 0},
            "rows_in_flight must be at least 1, got 0",
            id="rows-in-flight",
        ),
        pytest.param(
            {"rows": [], "skip": ["3"]},
            "skip must be a collection of row positions (whole numbers), got ['3']",
            id="skip",
        ),
        pytest.param(
            {"rows": [notes(0)], "skip": {0, -1, -3}},
            "skip holds negative row positions (-3, -1): positions count the rows from 0, "
            "the first row is 0",
            id="skip-negative",
        ),
        pytest.param(
            {"rows": [notes(0), notes(1)], "skip": {0, 2, 7}},
            "skip holds row positions past the last row (2, 7): there are 2 rows, at "
            "positions 0 to 1",
            id="skip-past-the-end",
        ),
        pytest.param(
            {"rows": [], "skip": range(10)},
            "skip holds row positions past the last row (0, 1, 2, 3, 4, ... 10 in all): "
            "there are no rows",
            id="skip-past-no-rows",
        ),
        pytest.param(
            {"rows": iter([notes(0)]), "skip": [-2]},
            "skip holds negative row positions (-2): positions count the rows from 0, the "
            "first row is 0",
            id="skip-negative-of-an-iterator",
        ),
        pytest.param(
            {"rows": [], "ordered": "yes"},
            "ordered must be True or False, got 'yes'",
            id="ordered",
        ),
    ],
)
def test_wrong_dataset_arguments_are_an_error_before_any_row(
    arguments: dict[str, object], message: str
) -> None:
    tree = notes_structure(FakeChatModel())

    with pytest.raises(ExecutionError) as caught:
        tree.run_many(**arguments)  # type: ignore[arg-type]

    assert str(caught.value) == (
        f"{message}\n  hint: e.g. run_many([{{TaskReview: {{...}}}}, ...], ordered=False, "
        "rows_in_flight=64)"
    )


def test_skipping_past_the_end_of_rows_of_unknown_length_fails_after_the_last_row() -> None:
    def rows() -> Iterator[dict[object, object]]:
        yield from (notes(row) for row in range(3))

    results = notes_structure(FakeChatModel(responder=answer)).run_many(rows(), skip={1, 3, 4})
    handed_out: list[int] = []
    with pytest.raises(ExecutionError) as caught:
        handed_out.extend(row.index for row in results)

    assert handed_out == [0, 2]
    assert str(caught.value) == (
        "skip holds row positions past the last row (3, 4): there are 3 rows, at "
        "positions 0 to 2\n"
        "  hint: e.g. run_many([{TaskReview: {...}}, ...], ordered=False, rows_in_flight=64)"
    )


def test_skipping_every_row_of_rows_of_unknown_length_is_no_error() -> None:
    rows = (notes(row) for row in range(3))

    assert list(notes_structure(FakeChatModel()).run_many(rows, skip={0, 1, 2})) == []


def test_a_wrong_setting_is_an_error_before_any_row() -> None:
    with pytest.raises(ExecutionError, match="max_concurrency must be at least 1, got 0"):
        notes_structure(FakeChatModel()).arun_many([notes(0)], max_concurrency=0)
