"""Run a dataset on Ray: ``run_on_ray(make_structure, rows)`` (``pip install 'langtree-llm[ray]'``).

The rows are cut into *shards* of ``batch_size`` consecutive rows (shard ``k`` holds rows
``k * batch_size`` to ``(k + 1) * batch_size - 1``). Ray Data maps the shards over a pool of
``actors`` actors, one shard per call; each actor builds the structure once with
``make_structure()`` (a provider with live clients does not pickle, a function that makes
one does) and runs its shard with the normal async engine,
`run_many()`, so ``max_concurrency`` caps the calls in flight
of each actor. The driver puts the shards back in order: the result is what a local
``run_many`` of the same rows gives, one `RowResult` per
row, in input order.

**The rate limit is shared.** ``rate_limit=RateLimit(...)`` becomes one named actor holding
the buckets (`RateBuckets`); every worker reaches it
through `SharedRateLimit`, so the limits hold for the whole cluster and a provider's
``Retry-After`` seen by one worker pauses the model's calls on all of them.

**One journal per shard.** With ``journal_dir``, shard ``k`` records its answers in
``journal_dir/shard-<k>.sqlite``. Shards depend only on the rows' order and
``batch_size``, so running the same rows again with the same ``batch_size`` and
``journal_dir`` replays every finished call and makes only the missing ones. On a
cluster, ``journal_dir`` must be a folder every node can write (a shared file system).
"""

from __future__ import annotations

import asyncio
import math
import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Unpack

from langtree.errors import ExecutionError, problems_error
from langtree.runtime import RateBuckets, RateLimit, RowResult, RunOptions, RunSettings

if TYPE_CHECKING:
    from langtree._api import RunStructure
    from langtree.prompts import PromptTokens

__all__ = ["SharedRateLimit", "run_on_ray"]

_HINT = (
    "e.g. run_on_ray(make_structure, rows, actors=4, batch_size=100, "
    "journal_dir='journals', rate_limit=RateLimit(requests_per_minute=500))"
)


def run_on_ray(
    make_structure: Callable[[], RunStructure],
    rows: Iterable[object],
    *,
    actors: int = 2,
    batch_size: int = 100,
    journal_dir: str | os.PathLike[str] | None = None,
    variables: Mapping[str, object] | None = None,
    num_cpus: float = 1.0,
    **options: Unpack[RunOptions],
) -> list[RowResult]:
    """Run the tree once per row on Ray, sharing one rate limit; see the module docstring.

    Connects to the Ray instance ``ray.init()`` chose (call it first to reach a cluster,
    or set ``RAY_ADDRESS``); without one, Ray starts a local instance.

    Args:
        make_structure: Builds the ``RunStructure`` (with its provider) in each actor;
            it must pickle (a module-level function, or a closure over picklable
            values).
        rows: Each row is what ``run`` takes as ``inputs``; they are read at once.
        actors: How many actors run shards at the same time.
        batch_size: Rows per shard (and per journal).
        journal_dir: The folder of the shards' journals (``None``: no journal).
        variables: External prompt variables, the same for every row.
        num_cpus: CPUs Ray reserves for each actor (the actors mostly wait for models).
        **options: Settings as `run_many()` takes them (`RunOptions`), except ``journal``;
            ``rate_limit`` must be a ``RateLimit``: its limits hold for the whole
            cluster.

    Returns:
        One result per row, in input order, as a local ``run_many`` gives them.

    Raises:
        ExecutionError: Ray is not installed, or an argument or setting is wrong (every
            problem is listed), before anything runs.
    """
    rate_limit = options.pop("rate_limit", None)
    _check(make_structure, actors, batch_size, journal_dir, rate_limit, num_cpus, options)
    assert rate_limit is None or isinstance(rate_limit, RateLimit)
    ray = _ray()
    shards = _shards(list(rows), batch_size)
    if not shards:
        return []
    if journal_dir is not None:
        Path(journal_dir).mkdir(parents=True, exist_ok=True)
    limiter = None if rate_limit is None else SharedRateLimit.start(rate_limit)
    setup = {
        "journal_dir": None if journal_dir is None else os.fspath(journal_dir),
        "limiter": None if limiter is None else limiter.name,
        "variables": variables,
        "options": options,
    }
    try:
        runs = _map_shards(ray, shards, make_structure, actors, num_cpus, setup)
    finally:
        if limiter is not None:
            limiter.stop()
    return _in_order(runs, batch_size)


class SharedRateLimit:
    """A `RateLimiter` whose buckets live in a named
    Ray actor, shared by every process of the Ray job: `start()` it once, find it
    with `named()` in each worker, and pass it as ``rate_limit=`` to their runs.

    Args:
        name: The actor's name.
        actor: The actor's handle.
        paces_tokens: Whether the limit has ``tokens_per_minute``: only then does
            `acquire()` read a prompt's token count.
    """

    def __init__(self, name: str, actor: Any, *, paces_tokens: bool) -> None:
        self.name = name
        self.actor = actor
        self.paces_tokens = paces_tokens

    @classmethod
    def start(cls, rate_limit: RateLimit, *, name: str | None = None) -> SharedRateLimit:
        """Start the actor holding ``rate_limit``'s buckets (it takes no CPU).

        Args:
            rate_limit: The limits (its own buckets are not used).
            name: The actor's name (default: a new unique one).

        Raises:
            ExecutionError: Ray is not installed.
        """
        name = name or f"langtree-rate-limit-{uuid.uuid4().hex}"
        actor = (
            _ray()
            .remote(_Buckets)
            .options(name=name, num_cpus=0)
            .remote(rate_limit.requests_per_minute, rate_limit.tokens_per_minute)
        )
        return cls(name, actor, paces_tokens=rate_limit.tokens_per_minute is not None)

    @classmethod
    def named(cls, name: str) -> SharedRateLimit:
        """The shared rate limit that `start()` started under ``name``; asks its actor
        once whether it paces tokens.

        Raises:
            ExecutionError: Ray is not installed.
            ValueError: No actor of the job has that name (Ray's error).
        """
        ray = _ray()
        actor = ray.get_actor(name)
        paces_tokens: bool = ray.get(actor.paces_tokens.remote())
        return cls(name, actor, paces_tokens=paces_tokens)

    def stop(self) -> None:
        """End the actor (every process's copy stops working)."""
        _ray().kill(self.actor)

    async def acquire(self, model: str, tokens: PromptTokens) -> float:
        """Wait until a call of ``model`` with a prompt of ``tokens`` may start, and
        through any pause that began meanwhile.

        ``tokens.count`` is read (and the prompt counted) only if the limit paces tokens.

        Returns:
            The seconds waited.
        """
        waited = 0.0
        count = tokens.count if self.paces_tokens else 0
        delay: float = await self.actor.reserve.remote(model, count)
        while delay > 0:
            await asyncio.sleep(delay)
            waited += delay
            delay = await self.actor.held.remote(model)
        return waited

    def hold(self, model: str, seconds: float) -> None:
        """Pause every worker's calls of ``model`` for ``seconds`` from now."""
        self.actor.hold.remote(model, seconds)


class _Buckets:
    """The rate limit's actor: `RateBuckets` on the actor's clock."""

    def __init__(self, requests_per_minute: float | None, tokens_per_minute: float | None):
        self.buckets = RateBuckets(requests_per_minute, tokens_per_minute)

    def reserve(self, model: str, tokens: int) -> float:
        return self.buckets.reserve(model, tokens, time.monotonic())

    def hold(self, model: str, seconds: float) -> None:
        self.buckets.hold(model, seconds, time.monotonic())

    def held(self, model: str) -> float:
        return self.buckets.held(model, time.monotonic())

    def paces_tokens(self) -> bool:
        """Whether the limit has ``tokens_per_minute`` (`SharedRateLimit.named()` asks)."""
        return self.buckets.tokens_per_minute is not None


class _ShardRunner:
    """A Ray Data actor: builds the structure once, then runs one shard per call."""

    def __init__(self, make_structure: Callable[[], RunStructure], setup: Mapping[str, Any]):
        self.structure = make_structure()
        self.journal_dir: str | None = setup["journal_dir"]
        self.variables: Mapping[str, object] | None = setup["variables"]
        self.options: dict[str, Any] = dict(setup["options"])
        if setup["limiter"] is not None:
            self.options["rate_limit"] = SharedRateLimit.named(setup["limiter"])

    def __call__(self, batch: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
        cloudpickle = _ray().cloudpickle
        runs = [
            cloudpickle.dumps(self._run(int(shard), cloudpickle.loads(rows)))
            for shard, rows in zip(batch["shard"], batch["rows"], strict=True)
        ]
        return {"shard": [int(shard) for shard in batch["shard"]], "rows": runs}

    def _run(self, shard: int, rows: list[object]) -> list[RowResult]:
        options = dict(self.options)
        if self.journal_dir is not None:
            options["journal"] = os.path.join(self.journal_dir, f"shard-{shard}.sqlite")
        return list(self.structure.run_many(rows, self.variables, **options))


def _ray() -> ModuleType:
    """Ray, imported on first use: ``langtree.ray`` itself imports without it.

    Raises:
        ExecutionError: Ray is not installed.
    """
    try:
        # Ray Data is a module of its own, imported here to fail now if it is missing.
        import ray
        import ray.data
    except ImportError as error:
        raise ExecutionError(
            "running on Ray needs Ray Data, which is not installed\n"
            "  hint: pip install 'langtree-llm[ray]'"
        ) from error
    # Typed here: without the extra installed, mypy sees the module as Any.
    module: ModuleType = ray
    return module


def _check(
    make_structure: object,
    actors: object,
    batch_size: object,
    journal_dir: object,
    rate_limit: object,
    num_cpus: object,
    options: Mapping[str, object],
) -> None:
    """Raise before anything runs when an argument or setting is wrong.

    Raises:
        ExecutionError: Listing every wrong argument with a hint, or (as ``run`` does)
            every wrong setting.
    """
    problems = list(_problems(make_structure, actors, batch_size, journal_dir, rate_limit))
    if not (_number(num_cpus) and num_cpus >= 0):  # type: ignore[operator]
        problems.append(f"num_cpus must be a number of at least 0, got {num_cpus!r}")
    if "journal" in options:
        problems.append("journal is one file per shard on Ray: pass journal_dir, a folder")
    if problems:
        raise problems_error(problems, what="arguments", hint=_HINT)
    RunSettings().updated(**options)


def _problems(
    make_structure: object,
    actors: object,
    batch_size: object,
    journal_dir: object,
    rate_limit: object,
) -> Iterator[str]:
    if not callable(make_structure):
        yield (
            "make_structure must be a function of no arguments that returns a "
            f"RunStructure, got {make_structure!r}"
        )
    for name, value in (("actors", actors), ("batch_size", batch_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            yield f"{name} must be a whole number of at least 1, got {value!r}"
    if journal_dir is not None and not isinstance(journal_dir, str | os.PathLike):
        yield f"journal_dir must be a folder (a str or a Path) or None, got {journal_dir!r}"
    if rate_limit is not None and not isinstance(rate_limit, RateLimit):
        yield f"rate_limit must be a RateLimit or None, got {rate_limit!r}"
    elif isinstance(rate_limit, RateLimit):
        yield from (f"rate_limit: {problem}" for problem in rate_limit.problems())


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _shards(rows: list[object], batch_size: int) -> list[list[object]]:
    return [rows[start : start + batch_size] for start in range(0, len(rows), batch_size)]


def _map_shards(
    ray: ModuleType,
    shards: list[list[object]],
    make_structure: Callable[[], RunStructure],
    actors: int,
    num_cpus: float,
    setup: Mapping[str, Any],
) -> dict[int, list[RowResult]]:
    """Each shard's results, by shard number."""
    cloudpickle = ray.cloudpickle
    items = [{"shard": k, "rows": cloudpickle.dumps(rows)} for k, rows in enumerate(shards)]
    mapped = ray.data.from_items(items).map_batches(
        _ShardRunner,
        batch_size=1,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=min(actors, len(shards))),
        fn_constructor_args=(make_structure, setup),
        num_cpus=num_cpus,
    )
    return {int(row["shard"]): cloudpickle.loads(row["rows"]) for row in mapped.iter_rows()}


def _in_order(runs: Mapping[int, list[RowResult]], batch_size: int) -> list[RowResult]:
    """The rows of every shard in input order, numbered from the first row of all."""
    return [
        replace(row, index=shard * batch_size + row.index)
        for shard in sorted(runs)
        for row in runs[shard]
    ]
