"""A run's settings: concurrency, retries, timeouts, limits, and the files assets come from.

They come from three places, the later winning: the structure's config
(``RunStructure({"call_timeout": 60, "retry": {"max_retries": 8}})``), the arguments of
``run``/``arun``/``build``, and, for ``call_timeout`` and ``retry``, the model's own
`ModelConfig` in the provider (a slow model may need a
longer timeout than the rest of the run).

`RunSettings` declares them: each setting's name, type, default and description (the
first clause of its entry in the docstring). `RunOptions` spells them out again for type
checkers, as the keyword options of ``run``; the flags of ``langtree run``
(``langtree.cli._flags``) give them from the command line. ``tests/test_run_settings.py``
fails when those drift from `RunSettings`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import partial
from typing import Any, Literal, TypedDict

from langtree.dsl import suggest
from langtree.errors import ExecutionError, StructureError, problems_error
from langtree.prompts import DEFAULT_MAX_ASSET_BYTES, AssetFiles
from langtree.runtime.durable._cache import CacheSetting, ResponseCache, cache_problems
from langtree.runtime.faults._rate_limit import RateLimit, RateLimiter
from langtree.runtime.faults._retry import RetryPolicy
from langtree.runtime.observe._usage import UsageLimits

__all__ = [
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_MAX_RETRIES",
    "DICT_SETTINGS",
    "RUN_SETTING_KEYS",
    "RunOptions",
    "RunSettings",
    "setting_problems",
]

DEFAULT_MAX_CONCURRENCY = 16
"""How many model calls a run has in flight at once unless told otherwise."""
DEFAULT_MAX_RETRIES = 2
"""How many times a failed call is retried unless told otherwise."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSettings:
    """How a run calls its models.

    Attributes:
        max_concurrency: The most model calls in flight at once.
        max_retries: How many times a step's invalid output is asked for again.
        retry: How transient provider failures are retried.
        call_timeout: Seconds one call may take before it counts as a transient failure
            (``None``: the client's own timeout only).
        deadline: Seconds the whole run may take (``None``: no limit).
        usage_limits: The most calls and tokens the run may use.
        journal: The SQLite file that records every answer and replays those of an
            earlier run (``None``: no journal; see ``langtree.runtime.durable._journal``).
        journal_max_age: Seconds after which a journal's answer is no longer replayed
            but asked for again (``None``: answers never expire).
        cache: The response cache to use instead of the provider's (a
            ``ResponseCache`` or its file; ``False``: none, bypassing the provider's;
            ``None``: the provider's; see ``langtree.runtime.durable._cache``).
        rate_limit: The pace of the model calls, in requests and tokens per minute
            for each model key (``None``: as fast as ``max_concurrency`` allows; see
            ``langtree.runtime.faults._rate_limit``).
        asset_folders: The folders an asset's local file may be read from (relative
            ones to the working directory); none by default, so that no path is read
            (see ``langtree.prompts._asset_files``).
        max_asset_bytes: The largest asset file read (20 MiB by default).
    """

    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    max_retries: int = DEFAULT_MAX_RETRIES
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    call_timeout: float | None = None
    deadline: float | None = None
    usage_limits: UsageLimits = field(default_factory=UsageLimits)
    journal: str | os.PathLike[str] | None = None
    journal_max_age: float | None = None
    cache: CacheSetting | Literal[False] | None = None
    rate_limit: RateLimiter | None = None
    asset_folders: Sequence[str | os.PathLike[str]] = ()
    max_asset_bytes: int = DEFAULT_MAX_ASSET_BYTES

    @property
    def asset_files(self) -> AssetFiles:
        """Where the run reads assets' files from, and how much of each."""
        return AssetFiles(folders=tuple(self.asset_folders), max_bytes=self.max_asset_bytes)

    @classmethod
    def from_mapping(cls, values: Mapping[str, object]) -> tuple[RunSettings, list[str]]:
        """Settings from config values (``retry`` and ``usage_limits`` may be dicts).

        Returns:
            The settings (defaults where a value is wrong) and what is wrong.
        """
        problems: list[str] = []
        known = {key: value for key, value in values.items() if key in RUN_SETTING_KEYS}
        for key, kind in DICT_SETTINGS.items():
            if key in known:
                converted, wrong = _converted(kind, known[key], key)
                known[key] = converted
                problems.extend(wrong)
        settings = cls(**known)  # type: ignore[arg-type]
        problems.extend(settings.problems())
        return (settings if not problems else cls()), problems

    def updated(self, **overrides: object) -> RunSettings:
        """These settings with the given ones (``None``: keep) replaced.

        Raises:
            ExecutionError: A setting is unknown, or a value is of the wrong type or out
                of range (every problem is listed).
        """
        unknown = sorted(set(overrides) - RUN_SETTING_KEYS)
        if unknown:
            raise _settings_error([_unknown_setting(name) for name in unknown])
        given = {key: value for key, value in overrides.items() if value is not None}
        for key, kind in DICT_SETTINGS.items():
            if key in given:
                converted, wrong = _converted(kind, given[key], key)
                if wrong:
                    raise _settings_error(wrong)
                given[key] = converted
        settings = replace(self, **given)  # type: ignore[arg-type]
        settings.check()
        return settings

    def check(self) -> None:
        """Raise when a setting is out of range.

        Raises:
            ExecutionError: Listing every problem, with a hint.
        """
        problems = list(self.problems())
        if problems:
            raise _settings_error(problems)

    def problems(self) -> Iterator[str]:
        """What is wrong with the settings, one sentence each."""
        if not _whole(self.max_concurrency):
            yield f"max_concurrency must be a whole number, got {self.max_concurrency!r}"
        elif self.max_concurrency < 1:
            yield f"max_concurrency must be at least 1, got {self.max_concurrency!r}"
        if not _whole(self.max_retries):
            yield f"max_retries must be a whole number, got {self.max_retries!r}"
        elif self.max_retries < 0:
            yield f"max_retries must not be negative, got {self.max_retries!r}"
        for name in ("call_timeout", "deadline", "journal_max_age"):
            value = getattr(self, name)
            if value is not None and not (_number(value) and value > 0):
                yield f"{name} must be a number of seconds above 0 or None, got {value!r}"
        if self.journal is not None and not isinstance(self.journal, str | os.PathLike):
            yield f"journal must be a file path (a str or a Path) or None, got {self.journal!r}"
        if self.cache is not None and self.cache is not False:
            yield from cache_problems(self.cache)
        yield from _rate_limit_problems(self.rate_limit)
        yield from _asset_problems(self.asset_folders, self.max_asset_bytes)
        yield from (f"retry: {problem}" for problem in self.retry.problems())
        yield from (f"usage_limits: {problem}" for problem in self.usage_limits.problems())


RUN_SETTING_KEYS: frozenset[str] = frozenset(item.name for item in fields(RunSettings))
"""The names of every run setting, as `RunSettings` declares them."""

DICT_SETTINGS: Mapping[str, type[RetryPolicy] | type[UsageLimits]] = {
    "retry": RetryPolicy,
    "usage_limits": UsageLimits,
}
"""The settings also given as a dict of their fields (``retry={"max_retries": 5}``),
which a run's config and options convert."""


def setting_problems(setting: str, value: object) -> list[str]:
    """What is wrong with ``value`` given for one run setting alone (for a caller that
    names the settings its own way, as the command line does with its flags).

    Args:
        setting: A name of `RunSettings` (``"max_concurrency"``), or, for one setting of
            a setting that holds several, both names (``"usage_limits.calls"``,
            ``"retry.max_retries"``, ``"cache.max_age"``): its problems are then said as
            that setting says them.
        value: The value.

    Raises:
        StructureError: A ``retry.transient_errors`` that is not a list of exception
            classes (``RetryPolicy`` refuses it as it is built).

    Examples:
        >>> setting_problems("max_concurrency", 0)
        ['max_concurrency must be at least 1, got 0']
        >>> setting_problems("usage_limits.calls", 0)
        ['calls must be a whole number of at least 1 or None, got 0']
    """
    name, _, part = setting.partition(".")
    if part:
        return list(_HOLDERS[name](**{part: value}).problems())
    return list(replace(RunSettings(), **{name: value}).problems())  # type: ignore[arg-type]


_HOLDERS: Mapping[str, Callable[..., RetryPolicy | UsageLimits | ResponseCache]] = {
    **DICT_SETTINGS,
    # A cache's max_age is checked apart from its file.
    "cache": partial(ResponseCache, ""),
}
"""The settings that hold settings of their own, built from one of them."""


def _converted(
    kind: type[RetryPolicy] | type[UsageLimits], value: object, key: str
) -> tuple[Any, list[str]]:
    """``value`` as ``kind``: an instance as it is, a dict by its fields (a
    ``RetryPolicy`` refuses wrong ``transient_errors`` as it is built)."""
    if isinstance(value, kind):
        return value, []
    names = sorted(item.name for item in fields(kind))
    if not isinstance(value, Mapping):
        return kind(), [f"{key} must be a {kind.__name__} or a dict of its fields, got {value!r}"]
    unknown = sorted(str(name) for name in value if name not in names)
    if unknown:
        listed = ", ".join(repr(name) for name in names)
        return kind(), [f"{key} has no setting {unknown[0]!r}; its settings are {listed}"]
    try:
        return kind(**value), []
    except StructureError as error:
        return kind(), [f"{key}: {diagnostic.message}" for diagnostic in error.diagnostics]


def _rate_limit_problems(limit: object) -> Iterator[str]:
    if limit is not None and not isinstance(limit, RateLimiter):
        yield (f"rate_limit must be a RateLimit (or another RateLimiter) or None, got {limit!r}")
    elif isinstance(limit, RateLimit):
        yield from (f"rate_limit: {problem}" for problem in limit.problems())


def _asset_problems(folders: object, max_bytes: int) -> Iterator[str]:
    # A single str is a sequence too, of one-letter folders: refuse it rather than read it so.
    if isinstance(folders, str | bytes) or not (
        isinstance(folders, Sequence) and all(isinstance(f, str | os.PathLike) for f in folders)
    ):
        yield f"asset_folders must be a list of folders (str or Path), got {folders!r}"
    if not _whole(max_bytes) or max_bytes < 1:
        yield f"max_asset_bytes must be a whole number of bytes of at least 1, got {max_bytes!r}"


def _unknown_setting(name: str) -> str:
    listed = ", ".join(repr(key) for key in sorted(RUN_SETTING_KEYS))
    close = suggest(name, sorted(RUN_SETTING_KEYS), fallback=f"the run settings are {listed}")
    return f"{name!r} is not a run setting; {close}"


def _settings_error(problems: list[str]) -> ExecutionError:
    return problems_error(
        problems,
        what="run settings",
        hint="e.g. run(..., max_concurrency=8, call_timeout=60, "
        "retry=RetryPolicy(max_retries=5), usage_limits=UsageLimits(calls=500))",
    )


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class RunOptions(TypedDict, total=False):
    """The settings ``run``, ``arun``, ``run_many`` and ``build`` take; each overrides the
    config's, and one left out keeps it.

    They are the settings of `RunSettings`, by the same names.

    Attributes:
        max_concurrency: The most model calls in flight at once (default 16).
        max_retries: How many times a step's invalid output is asked for again
            (default 2).
        retry: How transient provider failures are retried (a ``RetryPolicy`` or a
            dict of its fields).
        call_timeout: Seconds one call may take before it counts as a transient failure.
        deadline: Seconds the whole run may take.
        usage_limits: The most calls and tokens the run may use (a ``UsageLimits`` or
            a dict of its fields).
        journal: The SQLite file that records every answer and replays those of an
            earlier run.
        journal_max_age: Seconds after which a journal's answer is no longer replayed
            but asked for again.
        cache: The response cache to use instead of the provider's (a
            ``ResponseCache`` or its file), or ``False`` to bypass the provider's.
        rate_limit: The pace of the model calls, in requests and tokens per minute
            for each model key (a ``RateLimit``, which runs may share).
        asset_folders: The folders an asset's local file may be read from (none by
            default).
        max_asset_bytes: The largest asset file read (20 MiB by default).
    """

    max_concurrency: int
    max_retries: int
    retry: RetryPolicy | Mapping[str, object]
    call_timeout: float
    deadline: float
    usage_limits: UsageLimits | Mapping[str, object]
    journal: str | os.PathLike[str]
    journal_max_age: float
    cache: CacheSetting | Literal[False]
    rate_limit: RateLimiter
    asset_folders: Sequence[str | os.PathLike[str]]
    max_asset_bytes: int
