"""Fixtures shared by the runtime tests."""

import signal
from collections.abc import Iterator

import pytest

from langtree.prompts import _tokens as tokens


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """Ctrl-C handled as Python handles it in a terminal (``KeyboardInterrupt``), also
    where the shell that started the tests ignores SIGINT (a background job without job
    control), so that the Ctrl-C tests run everywhere instead of being skipped."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture
def no_encoding_chosen() -> Iterator[None]:
    """No count made yet in this process, as far as ``encoding_loaded()`` tells."""
    tokens._tokenizer.cache_clear()
    yield
    tokens._tokenizer.cache_clear()
