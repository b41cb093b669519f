"""The response cache: the answers of every run through a provider, kept in one file.

A journal belongs to a run: it lets that run resume. A cache belongs to the models: set
once on the provider (``LLMProvider(models, cache="answers.sqlite")``) or given to a run
(``run(..., cache=...)``), it gives any later run the answer of any call it has seen,
keyed exactly like the journal (see `langtree.runtime.durable._call_key`), so the n samples
of ``resample(n)`` stay n answers. The file has the journal's format; unlike a journal,
the cache looks each call up by key instead of reading the whole file, because it
collects the calls of many runs.

``run(..., cache=False)`` bypasses the provider's cache for one run;
``ModelConfig(model, cache=False)`` keeps one model out of it; ``ResponseCache(path,
max_age=...)`` asks again for answers older than ``max_age`` seconds (the new answer
replaces the old one).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import TypeAlias

from langtree.errors import ExecutionError
from langtree.runtime.durable._journal import Journal

__all__ = ["CacheReport", "CacheSetting", "ResponseCache"]


@dataclass(frozen=True, slots=True)
class ResponseCache:
    """A file of model answers that runs read from and add to.

    Attributes:
        path: The SQLite file (created on the first run that uses it).
        max_age: Seconds after which a cached answer is asked for again and replaced
            (``None``: answers never expire).
        clock: Seconds since the epoch (default ``time.time``): when an answer is
            cached, and how old ``max_age`` finds it. Tests pass a fake clock.

    Examples:
        >>> ResponseCache("answers.sqlite", max_age=86_400).max_age
        86400
    """

    path: str | os.PathLike[str]
    _: KW_ONLY
    max_age: float | None = None
    clock: Callable[[], float] = field(default=time.time, repr=False, compare=False)

    def problems(self) -> Iterator[str]:
        """What is wrong with the cache's settings, one sentence each."""
        if not isinstance(self.path, str | os.PathLike):
            yield f"cache path must be a file path (a str or a Path), got {self.path!r}"
        age = self.max_age
        seconds = isinstance(age, int | float) and not isinstance(age, bool) and math.isfinite(age)
        if age is not None and not (seconds and age > 0):
            yield f"cache max_age must be a number of seconds above 0 or None, got {age!r}"
        if not callable(self.clock):
            yield (
                "cache clock must be a function returning seconds since the epoch, "
                f"got {self.clock!r}"
            )


CacheSetting: TypeAlias = ResponseCache | str | os.PathLike[str]
"""A cache: a ``ResponseCache``, or the path of its file (answers never expire)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheReport:
    """How a run used its response cache.

    Attributes:
        path: The cache file.
        replayed: Answers taken from the cache instead of calling a model.
        recorded: Answers this run added to it.
    """

    path: str
    replayed: int
    recorded: int


def cache_problems(value: object) -> Iterator[str]:
    """What is wrong with a cache setting (a ``ResponseCache`` or a path)."""
    if isinstance(value, ResponseCache):
        yield from value.problems()
    elif not isinstance(value, str | os.PathLike):
        yield (
            "cache must be a ResponseCache, a file path (a str or a Path), False or None, "
            f"got {value!r}"
        )


def as_cache(value: CacheSetting) -> ResponseCache:
    """A cache setting as a ``ResponseCache``."""
    return value if isinstance(value, ResponseCache) else ResponseCache(value)


def open_cache(cache: ResponseCache, journal: Journal | None) -> Journal:
    """The cache's file, open for one run.

    Raises:
        ExecutionError: The file is the run's journal too (a journal already replays its
            own calls), or it cannot be opened.
    """
    if journal is not None and _same_file(journal.path, Path(cache.path)):
        raise ExecutionError(
            f"The run's journal and its cache are the same file ({str(journal.path)!r})\n"
            "  hint: a journal already replays the calls it holds: give the run either "
            "a journal or a cache, or two different files"
        )
    # Not preloaded: the cache holds the calls of every run that used it, and a run
    # reads only its own.
    return Journal(
        cache.path, max_age=cache.max_age, preload=False, kind="cache", clock=cache.clock
    )


def cache_report(cache: Journal) -> CacheReport:
    """Close the cache's file and say how the run used it (a write that fails is kept for
    ``Journal.check_written``)."""
    report = cache.close()
    return CacheReport(path=report.path, replayed=report.replayed, recorded=report.recorded)


def _same_file(first: Path, second: Path) -> bool:
    # Resolved: a relative path, a ``..`` or a symbolic link may name the same file.
    return first.resolve() == second.resolve()
