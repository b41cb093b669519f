"""The flags of ``langtree run`` that give run settings: one table from setting to flag.

``RunStructure.run`` names its settings as Python does (``max_concurrency=8``,
``usage_limits=UsageLimits(calls=500)``); the command line names them by their flags.
The table below declares the flags, and it is how the command line speaks of a setting:
a value a setting refuses is an error about its flag, with a hint that shows the flag
(``--max-concurrency 0``: ``hint: e.g. --max-concurrency 8``), and the hints of a run's
errors name the flags through `flag_for()` (``langtree.cli._hints``).

A flag's help starts with the description of its setting in `RunSettings`' docstring (or
in the docstring of the setting that holds it, `UsageLimits`, `ResponseCache`); a setting
without a flag is in `CONFIG_ONLY_SETTINGS`, with the reason (``tests/test_run_settings.py``
checks both).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from langtree.errors import LangTreeError, problems_error
from langtree.runtime import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    METHOD_CHOICES,
    ResponseCache,
    RunOptions,
    RunSettings,
    setting_problems,
)

__all__ = [
    "CONFIG_ONLY_SETTINGS",
    "RUN_FLAGS",
    "RunFlag",
    "add_run_flags",
    "flag_for",
    "run_options",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFlag:
    """A flag of ``langtree run`` that gives a run setting a number.

    Attributes:
        flag: The flag, as typed (``"--max-calls"``).
        setting: The setting it gives: a name of `RunSettings`, or a setting of one that
            holds several (``"usage_limits.calls"``), as `setting_problems()` takes it.
        kind: The type of its value (``float``: seconds).
        meaning: What it sets, for ``--help``: the description of its setting, then
            what the flag adds.
        example: A value it takes, for the hints.
    """

    flag: str
    setting: str
    kind: type[int] | type[float]
    meaning: str
    example: str

    @property
    def dest(self) -> str:
        """The attribute ``argparse`` stores the value under."""
        return self.flag.removeprefix("--").replace("-", "_")


RUN_FLAGS: tuple[RunFlag, ...] = (
    RunFlag(
        flag="--max-concurrency",
        setting="max_concurrency",
        kind=int,
        meaning=f"the most model calls in flight at once (default {DEFAULT_MAX_CONCURRENCY})",
        example="8",
    ),
    RunFlag(
        flag="--max-retries",
        setting="max_retries",
        kind=int,
        meaning="how many times a step's invalid output is asked for again "
        f"(default {DEFAULT_MAX_RETRIES})",
        example="5",
    ),
    RunFlag(
        flag="--call-timeout",
        setting="call_timeout",
        kind=float,
        meaning="seconds one call may take before it counts as a transient failure",
        example="60",
    ),
    RunFlag(
        flag="--deadline",
        setting="deadline",
        kind=float,
        meaning="seconds the whole run may take",
        example="600",
    ),
    RunFlag(
        flag="--max-calls",
        setting="usage_limits.calls",
        kind=int,
        meaning="the most model calls the run may make, retries included",
        example="500",
    ),
    RunFlag(
        flag="--max-tokens",
        setting="usage_limits.total_tokens",
        kind=int,
        meaning="the most tokens (prompt and completion) the run may use",
        example="200000",
    ),
    RunFlag(
        flag="--journal-max-age",
        setting="journal_max_age",
        kind=float,
        meaning="seconds after which a journal's answer is no longer replayed but asked for again",
        example="86400",
    ),
    RunFlag(
        flag="--cache-max-age",
        setting="cache.max_age",
        kind=float,
        meaning="seconds after which a cached answer is asked for again and replaced "
        "(with --cache)",
        example="86400",
    ),
)

_BY_SETTING = {flag.setting: flag for flag in RUN_FLAGS}

CONFIG_ONLY_SETTINGS: Mapping[str, str] = {
    "retry": "a RetryPolicy holds several figures, and exception classes and functions "
    "that only a module can give",
    "rate_limit": "a RateLimit holds figures per model key, and is an object runs may share",
    "asset_folders": "the folders a run may read files from are a choice made once, with "
    "the tree's other settings, not on each command line",
    "max_asset_bytes": "the cap on those files goes with asset_folders",
}
"""The run settings ``langtree run`` has no flag for, each with the reason: they are
given in ``--config``, and ``--help`` names them."""


def add_run_flags(command: argparse.ArgumentParser) -> None:
    """Give ``command`` the run settings' flags, ``--method``, ``--journal`` and the
    cache's."""
    settings = command.add_argument_group(
        "run settings",
        "given only in --config: " + ", ".join(CONFIG_ONLY_SETTINGS),
    )
    settings.add_argument(
        "--method",
        choices=METHOD_CHOICES,
        help="how structured output is asked for (default: auto); for a chat model, not "
        "for an LLMProvider, which sets it per model with ModelConfig",
    )
    settings.add_argument(
        "--journal",
        type=Path,
        metavar="FILE.sqlite",
        help="the SQLite file that records every answer and replays those of an earlier "
        "run: a run that stopped resumes without repeating a finished call",
    )
    cache = settings.add_mutually_exclusive_group()
    cache.add_argument(
        "--cache",
        type=Path,
        metavar="FILE.sqlite",
        help="the response cache to use instead of the provider's: replay the answers of "
        "any earlier run it holds, and add this run's",
    )
    cache.add_argument(
        "--no-cache",
        action="store_true",
        help="bypass the provider's response cache: ask every model anew",
    )
    for flag in RUN_FLAGS:
        metavar = "SECONDS" if flag.kind is float else "N"
        settings.add_argument(flag.flag, type=flag.kind, metavar=metavar, help=flag.meaning)


def run_options(arguments: argparse.Namespace, settings: RunSettings) -> RunOptions:
    """The run settings the flags give, which override ``settings`` (the config's):
    ``--max-calls`` and ``--max-tokens`` replace those figures of its ``usage_limits``,
    not the rest.

    Raises:
        LangTreeError: A flag that applies to something the run does not have
            (``--journal-max-age`` without a journal, ``--cache-max-age`` without
            ``--cache``), or values the settings refuse (each named by its flag, with a
            hint that shows the flag).
    """
    _check_applies(arguments, settings)
    _check_values(arguments)
    options: RunOptions = {}
    for name in ("max_concurrency", "max_retries", "call_timeout", "deadline"):
        value = getattr(arguments, name)
        if value is not None:
            options[name] = value
    if arguments.journal is not None:
        options["journal"] = arguments.journal
    if arguments.journal_max_age is not None:
        options["journal_max_age"] = arguments.journal_max_age
    if arguments.cache is not None:
        options["cache"] = ResponseCache(arguments.cache, max_age=arguments.cache_max_age)
    if arguments.no_cache:
        options["cache"] = False
    given = {"calls": arguments.max_calls, "total_tokens": arguments.max_tokens}
    if any(value is not None for value in given.values()):
        options["usage_limits"] = replace(
            settings.usage_limits,
            **{name: value for name, value in given.items() if value is not None},
        )
    return options


def _check_applies(arguments: argparse.Namespace, settings: RunSettings) -> None:
    """Refuse an age for answers the run does not keep.

    Raises:
        LangTreeError: Naming the flag and what it needs.
    """
    if arguments.journal_max_age is not None and arguments.journal is None and not settings.journal:
        raise LangTreeError(
            "--journal-max-age applies to the journal given with --journal\n"
            "  hint: add --journal FILE.sqlite, or give the journal in --config"
        )
    if arguments.cache_max_age is not None and arguments.cache is None:
        raise LangTreeError(
            "--cache-max-age applies to the cache given with --cache\n"
            "  hint: add --cache FILE.sqlite, or set max_age on the provider's "
            "ResponseCache(...)"
        )


def _check_values(arguments: argparse.Namespace) -> None:
    """Refuse the flags' values that their settings refuse, all at once.

    Raises:
        ExecutionError: Each problem after its flag; the hint shows the flags with
            values they take.
    """
    wrong = list(_wrong_values(arguments))
    if wrong:
        flags = dict.fromkeys(flag for flag, _ in wrong)
        raise problems_error(
            [f"{flag.flag}: {problem}" for flag, problem in wrong],
            what="options",
            hint="e.g. " + " ".join(f"{flag.flag} {flag.example}" for flag in flags),
        )


def _wrong_values(arguments: argparse.Namespace) -> Iterator[tuple[RunFlag, str]]:
    for flag in RUN_FLAGS:
        value = getattr(arguments, flag.dest)
        if value is not None:
            yield from ((flag, problem) for problem in setting_problems(flag.setting, value))


def flag_for(setting: str) -> str:
    """How the command line gives ``setting`` (a name as `RunFlag.setting` holds it):
    its flag, or, for a setting without one, the setting in ``--config``.

    Examples:
        >>> flag_for("usage_limits.calls")
        '--max-calls'
        >>> flag_for("usage_limits.input_tokens")
        'usage_limits.input_tokens in --config'
    """
    flag = _BY_SETTING.get(setting)
    return flag.flag if flag is not None else f"{setting} in --config"
