"""``run_on_ray`` on a local Ray instance: the results of a local ``run_many``, one rate
limit for every worker, and a journal per shard that a second run resumes from."""

import asyncio
import functools
import zlib
from pathlib import Path

import pytest
from pydantic import Field

from langtree import LLMProvider, RateLimit, RowResult, RunStructure, StepFailedError, TreeNode
from langtree.prompts._tokens import PromptTokens
from langtree.testing import FakeChatModel, FakeRequest, ResponderResult

ray = pytest.importorskip(
    "ray", reason="Ray is not installed: pip install 'langtree-llm[ray]' (make test-ray does)"
)
pytest.importorskip("ray.data", reason="Ray Data is missing: pip install 'langtree-llm[ray]'")

from langtree.ray import SharedRateLimit, run_on_ray  # noqa: E402  (needs Ray)

# Ray's processes talk over local sockets; the rest of the suite keeps them off.
pytestmark = [pytest.mark.ray, pytest.mark.allow_hosts(["127.0.0.1"])]


class Item(TreeNode):
    """Describe one item."""

    name: str
    blurb: str = Field(description="One sentence about the item.")


class TaskCatalogue(TreeNode):
    """Describe every item of a catalogue."""

    items: list[Item] = Field(default=[], description="The items.")
    summary: str = Field(description="One line over all the items.")


class RefusedError(Exception):
    """A provider's refusal: permanent, never retried."""


def rows(count: int) -> list[dict[object, object]]:
    return [
        {TaskCatalogue: {"items": [{"name": f"row {row} item {item}"} for item in range(2)]}}
        for row in range(count)
    ]


def answer(refused: tuple[str, ...], request: FakeRequest) -> ResponderResult:
    """Values that depend on the prompt, so each row's result is its own."""
    if "summary" in request.fields and any(text in request.text for text in refused):
        raise RefusedError("this catalogue is refused")
    checksum = zlib.crc32(request.text.encode())
    return {field: f"{field} {checksum}" for field in request.fields}


def catalogue(refused: tuple[str, ...] = ()) -> RunStructure:
    model = FakeChatModel(responder=functools.partial(answer, refused))
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskCatalogue)
    return structure


def calls_made(results: list[RowResult]) -> int:
    """The model calls of a run: its trace records not replayed from a journal."""
    traces = [row.result.trace if row.result else row.error.trace for row in results]  # type: ignore[union-attr]
    return sum(not record.replayed for trace in traces for record in trace)


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> object:
    # The workers import this module (pytest imports it as 'test_ray') to unpickle
    # catalogue() and the task classes, as a user's workers import the user's module.
    here = {"PYTHONPATH": str(Path(__file__).parent)}
    ray.init(
        num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": here}
    )
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


def filled(results: list[RowResult]) -> list[TaskCatalogue]:
    return [row.result[TaskCatalogue] for row in results]  # type: ignore[index]


def test_a_dataset_on_ray_gives_the_results_of_a_local_run() -> None:
    # 5 calls a second, as many at once: the 60 calls of the two shards cannot all go at
    # once, however slowly a loaded machine starts them.
    limit = RateLimit(requests_per_minute=300, tokens_per_minute=10**7)

    on_ray = run_on_ray(catalogue, rows(20), actors=2, batch_size=10, rate_limit=limit)
    local = list(catalogue().run_many(rows(20)))

    assert [row.index for row in on_ray] == list(range(20))
    assert all(row.ok for row in on_ray)
    assert filled(on_ray) == filled(local)
    assert sum(record.waited for row in on_ray for record in row.result.trace) > 0  # type: ignore[union-attr]
    assert not any(name.startswith("langtree-rate-limit") for name in ray.util.list_named_actors())


def test_a_second_run_with_the_shard_journals_makes_only_the_missing_calls(
    tmp_path: Path,
) -> None:
    refused = catalogue_of(3, 12)

    first = run_on_ray(refused, rows(20), batch_size=5, journal_dir=tmp_path)
    second = run_on_ray(catalogue, rows(20), batch_size=5, journal_dir=tmp_path)

    assert [row.index for row in first if not row.ok] == [3, 12]
    assert all(isinstance(row.error, StepFailedError) for row in first if not row.ok)
    assert sorted(path.name for path in tmp_path.iterdir() if path.suffix == ".sqlite") == [
        f"shard-{shard}.sqlite" for shard in range(4)
    ]
    assert calls_made(first) == 20 * 3
    # Each refused row's items were answered and journaled: only its summary is asked.
    assert calls_made(second) == 2
    assert all(row.ok for row in second)
    assert filled(second) == filled(list(catalogue().run_many(rows(20))))


def catalogue_of(*refused_rows: int) -> functools.partial[RunStructure]:
    """A structure whose model refuses the summary of the given rows."""
    return functools.partial(catalogue, tuple(f"row {row} item" for row in refused_rows))


@ray.remote
def still_waiting_after(name: str, model: str, seconds: float) -> bool:
    """Whether a call of ``model`` waits longer than ``seconds`` in a worker process."""

    async def wait() -> bool:
        try:
            prompt = PromptTokens("Describe a lamp.")
            await asyncio.wait_for(SharedRateLimit.named(name).acquire(model, prompt), seconds)
        except TimeoutError:
            return True
        return False

    return asyncio.run(wait())


def test_a_pause_in_one_process_holds_the_models_calls_in_every_process() -> None:
    limit = SharedRateLimit.start(RateLimit())
    try:
        limit.hold("default", 60.0)
        waiting = ray.get(
            [still_waiting_after.remote(limit.name, model, 0.5) for model in ("default", "other")]
        )
    finally:
        limit.stop()

    assert waiting == [True, False]


def test_every_process_draws_from_the_same_buckets() -> None:
    first = SharedRateLimit.start(RateLimit(requests_per_minute=60))
    second = SharedRateLimit.named(first.name)

    async def two_calls() -> list[float]:
        prompt = PromptTokens("Describe a lamp.")
        return [await first.acquire("default", prompt), await second.acquire("default", prompt)]

    try:
        waited = asyncio.run(two_calls())
    finally:
        first.stop()

    # One call a second: the second handle's call waits for the first one's second.
    assert waited[0] == 0.0
    assert 0.5 < waited[1] <= 1.0


class WatchedTokens(PromptTokens):
    """A prompt's tokens that remember whether their count was read."""

    __slots__ = ("read",)

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.read = False

    @property
    def count(self) -> int:
        self.read = True
        return super().count


def test_a_shared_limit_counts_a_prompt_only_if_it_paces_tokens() -> None:
    by_requests = SharedRateLimit.start(RateLimit(requests_per_minute=6000))
    by_tokens = SharedRateLimit.start(RateLimit(tokens_per_minute=10**7))
    # named() learns from the actor what start() knew from the RateLimit.
    handles = {
        "started, requests": by_requests,
        "named, requests": SharedRateLimit.named(by_requests.name),
        "started, tokens": by_tokens,
        "named, tokens": SharedRateLimit.named(by_tokens.name),
    }
    prompts = {name: WatchedTokens(name) for name in handles}

    async def acquire_all() -> None:
        for name, handle in handles.items():
            await handle.acquire("default", prompts[name])

    try:
        asyncio.run(acquire_all())
    finally:
        by_requests.stop()
        by_tokens.stop()

    assert [name for name, prompt in prompts.items() if prompt.read] == [
        "started, tokens",
        "named, tokens",
    ]
