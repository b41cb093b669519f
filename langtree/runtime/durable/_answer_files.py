"""The files a run replays answers from and records them in: its journal and its cache.

A call looks in the run's journal first, then in the response cache of its model; a new
answer goes into both. Answers are taken from the file that holds the longer chain of
them (a retry after invalid output is the call's next answer).
"""

from __future__ import annotations

from dataclasses import dataclass

from langtree.errors import ExecutionError
from langtree.runtime._settings import RunSettings
from langtree.runtime.calls._provider import LLMProvider, ModelConfig
from langtree.runtime.durable._cache import CacheReport, as_cache, cache_report, open_cache
from langtree.runtime.durable._journal import Journal, JournalReport

__all__ = ["AnswerFiles"]


@dataclass(slots=True)
class AnswerFiles:
    """A run's journal and response cache, open until the run ends.

    Attributes:
        journal: The run's journal (``None``: none).
        cache: The response cache (``None``: none, or bypassed).
        journal_report: How the run used the journal, once closed.
        cache_report: How the run used the cache, once closed.
    """

    journal: Journal | None = None
    cache: Journal | None = None
    journal_report: JournalReport | None = None
    cache_report: CacheReport | None = None

    @classmethod
    def open(
        cls, settings: RunSettings, provider: LLMProvider, *, preload: bool = True
    ) -> AnswerFiles:
        """The files of a run: its ``journal`` setting, and its ``cache`` setting or else
        the provider's cache (``cache=False``: none). Without ``preload`` the journal
        looks each call up when asked, as a cache does, so that a dataset's journal is
        not held in memory (its report's ``unmatched`` is then 0).

        Raises:
            ExecutionError: A file cannot be opened, or the journal is the cache too.
        """
        journal = None
        if settings.journal is not None:
            journal = Journal(settings.journal, max_age=settings.journal_max_age, preload=preload)
        chosen = provider.cache if settings.cache is None else settings.cache
        if chosen is None or chosen is False:
            return cls(journal=journal)
        try:
            return cls(journal=journal, cache=open_cache(as_cache(chosen), journal))
        except ExecutionError:
            # The journal's writer thread is running: it is stopped before the error goes
            # up, so that the file is not left open.
            if journal is not None:
                journal.close()
            raise

    def of_model(self, config: ModelConfig) -> tuple[Journal, ...]:
        """The files that hold the answers of a model's calls, the journal first."""
        # The journal first: of two chains of answers equally long, the journal's is
        # replayed (the run's own answers before the models' shared ones).
        files = (self.journal, self.cache if config.cache else None)
        return tuple(file for file in files if file is not None)

    def close(self) -> None:
        """Commit the last answers and close the files (once); a write that fails is
        kept for `check_written()`."""
        if self.journal is not None and self.journal_report is None:
            self.journal_report = self.journal.close()
        if self.cache is not None and self.cache_report is None:
            self.cache_report = cache_report(self.cache)

    def check_written(self) -> None:
        """Raise if a write to a file failed: the run stops, whether the file is its own
        or a dataset's.

        Raises:
            JournalWriteError: Naming the file and the first failure.
        """
        for file in (self.journal, self.cache):
            if file is not None:
                file.check_written()
