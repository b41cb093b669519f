"""Resampling (DESIGN D12): n concurrent samples per instance, aggregated per field."""

import asyncio
import json
from enum import Enum

import pytest
from example_modules import load_example
from pydantic import BaseModel, Field

from langtree import RunStructure, TreeNode
from langtree.runtime import LLMProvider, StepFailedError
from langtree.runtime.engine._resampling import aggregate, nearest_member
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest, ResponderResult

review_rating = load_example("review_rating")


class Level(Enum):
    LOW = 1
    MID = 2
    HIGH = 3


class Mood(Enum):
    CALM = "calm"
    ANGRY = "angry"


class Sample(BaseModel):
    level: Level
    mood: Mood
    note: str


class TaskJudge(TreeNode):
    """
    ! resample(3)
    ! @resampled[level]->mean
    ! together
    Judge the text.
    """

    text: str = Field(description="The text.")
    level: Level = Field(description="How strong it is.")
    mood: Mood = Field(description="Its mood.")
    note: str = Field(description="A note.")


def sequence(*replies: ResponderResult) -> FakeChatModel:
    """A model that gives ``replies`` in the order the calls arrive."""
    queue = list(replies)
    return FakeChatModel(responder=lambda request: queue.pop(0))


def judge(model: FakeChatModel, **options: int):  # type: ignore[no-untyped-def]
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskJudge)
    return structure.run({TaskJudge: {"text": "Fine."}}, **options)


def reply(level: int, mood: str, note: str) -> dict[str, object]:
    return {"level": level, "mood": mood, "note": note}


# --- Aggregation functions -------------------------------------------------------------


def samples(*levels: Level) -> list[Sample]:
    return [Sample(level=level, mood=Mood.CALM, note=f"n{i}") for i, level in enumerate(levels)]


@pytest.mark.parametrize(
    ("function", "member", "number"),
    [
        ("mean", Level.MID, 7 / 3),
        ("median", Level.HIGH, 3.0),
        ("sum", Level.HIGH, 7.0),
        ("min", Level.LOW, 1.0),
        ("max", Level.HIGH, 3.0),
    ],
)
def test_numeric_aggregation_maps_to_the_nearest_member_and_keeps_the_number(
    function: str, member: Level, number: float
) -> None:
    combined = aggregate(samples(Level.LOW, Level.HIGH, Level.HIGH), ["level"], {"level": function})  # type: ignore[dict-item]

    assert (combined.output.level, combined.resampled_values) == (member, {"level": number})  # type: ignore[attr-defined]


def test_median_of_an_even_count_is_the_mean_of_the_middle_two() -> None:
    combined = aggregate(
        samples(Level.LOW, Level.LOW, Level.HIGH, Level.HIGH), ["level"], {"level": "median"}
    )
    assert (combined.output.level, combined.resampled_values) == (Level.MID, {"level": 2.0})  # type: ignore[attr-defined]


def test_a_tie_between_two_members_goes_to_the_lower_value() -> None:
    class Gap(Enum):
        LOW = 1
        HIGH = 3

    assert [nearest_member(Gap, n) for n in (1.99, 2.0, 2.01, 9.0, -4.0)] == [
        Gap.LOW,
        Gap.LOW,
        Gap.HIGH,
        Gap.HIGH,
        Gap.LOW,
    ]


def test_mode_takes_the_most_frequent_member_and_a_tie_goes_to_the_first_seen() -> None:
    most = aggregate(samples(Level.LOW, Level.HIGH, Level.HIGH), ["level"], {"level": "mode"})
    tie = aggregate(samples(Level.HIGH, Level.LOW), ["level"], {"level": "mode"})

    assert (most.output.level, tie.output.level, most.resampled_values) == (  # type: ignore[attr-defined]
        Level.HIGH,
        Level.HIGH,
        {},
    )


def test_enum_fields_without_a_command_take_the_mode_and_others_the_first_sample() -> None:
    outputs = [
        Sample(level=Level.LOW, mood=Mood.CALM, note="first"),
        Sample(level=Level.HIGH, mood=Mood.ANGRY, note="second"),
        Sample(level=Level.HIGH, mood=Mood.ANGRY, note="third"),
    ]
    combined = aggregate(outputs, ["level", "mood", "note"], {})

    assert combined.output == Sample(level=Level.HIGH, mood=Mood.ANGRY, note="first")
    assert combined.resampled_values == {}


# --- Runs --------------------------------------------------------------------------------


def test_resample_3_makes_3_calls_per_instance_each_with_its_own_sample_record() -> None:
    model = sequence(reply(1, "calm", "a"), reply(3, "angry", "b"), reply(3, "angry", "c"))

    result = judge(model)

    assert len(model.calls) == 3
    assert sorted(record.sample for record in result.trace) == [1, 2, 3]
    assert [record.to_dict()["sample"] for record in result.trace] == [
        record.sample for record in result.trace
    ]
    judged = result[TaskJudge]
    assert (judged.level, judged.mood) == (Level.MID, Mood.ANGRY)
    assert result.resampled_values == {("task.judge", "level"): pytest.approx(7 / 3)}


def test_non_enum_fields_take_the_first_valid_sample() -> None:
    model = sequence(reply(1, "calm", "a"), reply(2, "calm", "b"), reply(3, "calm", "c"))

    result = judge(model)

    first = next(record for record in result.trace if record.sample == 1)
    assert result[TaskJudge].note == json.loads(first.raw_output)["note"]


def test_an_invalid_sample_is_left_out_and_kept_in_the_trace() -> None:
    model = sequence({"level": "loud"}, reply(3, "calm", "b"), reply(3, "calm", "c"))

    result = judge(model, max_retries=0)

    failed = [record for record in result.trace if record.error is not None]
    assert len(failed) == 1
    assert result[TaskJudge].level == Level.HIGH
    assert result.resampled_values == {("task.judge", "level"): 3.0}
    valid = sorted((r.sample, r.raw_output) for r in result.trace if r.error is None)
    assert result[TaskJudge].note == json.loads(valid[0][1])["note"]


def test_the_instance_fails_only_when_every_sample_fails() -> None:
    model = FakeChatModel(responder=lambda request: {"level": "loud"})

    with pytest.raises(StepFailedError) as caught:
        judge(model, max_retries=1)

    assert len(caught.value.attempts) == 6
    assert sorted(record.sample for record in caught.value.attempts) == [1, 1, 2, 2, 3, 3]


def test_samples_run_concurrently_within_max_concurrency() -> None:
    in_flight = 0
    peak = 0

    async def respond(request: FakeRequest) -> ResponderResult:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1
        return reply(2, "calm", "x")

    judge(FakeChatModel(responder=respond))
    concurrent_peak = peak
    peak = 0
    judge(FakeChatModel(responder=respond), max_concurrency=2)

    assert (concurrent_peak, peak) == (3, 2)


def test_review_rating_example_takes_5_samples_per_step() -> None:
    ratings = iter([1, 2, 3, 4, 4])
    verdicts = iter(["recommend", "avoid", "recommend", "neutral", "recommend"])

    def respond(request: FakeRequest) -> ResponderResult:
        if request.fields == ("rating",):
            return {"rating": next(ratings)}
        return {"verdict": next(verdicts)}

    model = FakeChatModel(responder=respond)
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(review_rating.TaskRateReview)

    result = structure.run({review_rating.TaskRateReview: {"review": "Sturdy and cheap."}})

    assert [call.fields for call in model.calls] == [("rating",)] * 5 + [("verdict",)] * 5
    rated = result[review_rating.TaskRateReview]
    assert (rated.rating, rated.verdict) == (
        review_rating.Rating.GOOD,
        review_rating.Verdict.RECOMMEND,
    )
    assert result.dump(review_rating.TaskRateReview) == {
        "review": "Sturdy and cheap.",
        "rating": 3,
        "rating_resampled_value": pytest.approx(2.8),
        "verdict": "recommend",
    }
    dumped = json.loads(result.to_json())["tasks"]["task.rate_review"]
    assert list(dumped) == ["review", "rating", "rating_resampled_value", "verdict"]
    assert dumped["rating_resampled_value"] == pytest.approx(2.8)
