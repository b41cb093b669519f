"""What the runs of one dataset share: the cap on calls in flight, the usage limits, each
model's cooldown after a rate limit, and the journal and response cache.

A single run makes its own; `langtree.runtime.datasets._dataset` makes one for all its rows,
so ``max_concurrency`` and ``usage_limits`` hold across the dataset, a ``Retry-After``
from a provider pauses every row's calls to that model, and the journal is opened once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from langtree.runtime._settings import RunSettings
from langtree.runtime.calls._provider import LLMProvider
from langtree.runtime.durable._answer_files import AnswerFiles
from langtree.runtime.faults._cooldown import Cooldown
from langtree.runtime.observe._usage import UsageMeter

__all__ = ["SharedCalls"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedCalls:
    """What the model calls of several runs share.

    Attributes:
        semaphore: Caps the model calls in flight across the runs.
        meter: Counts the calls and tokens against the usage limits.
        files: The journal and response cache, open until `close()`.
        cooldowns: Each model key's pause after a ``Retry-After``.
    """

    semaphore: asyncio.Semaphore
    meter: UsageMeter
    files: AnswerFiles
    cooldowns: dict[str, Cooldown] = field(default_factory=dict)

    @classmethod
    def start(
        cls, settings: RunSettings, provider: LLMProvider, *, many: bool = False
    ) -> SharedCalls:
        """Shared state for runs with these settings (opens the journal and cache);
        ``many``: for the rows of a dataset, whose journal is looked up call by call
        rather than read into memory.

        Raises:
            ExecutionError: The journal or the cache cannot be opened.
        """
        return cls(
            semaphore=asyncio.Semaphore(settings.max_concurrency),
            meter=UsageMeter(settings.usage_limits),
            files=AnswerFiles.open(settings, provider, preload=not many),
        )

    def close(self) -> None:
        """Commit the last answers and close the journal and cache (a write that fails
        is kept for ``files.check_written()``)."""
        self.files.close()
