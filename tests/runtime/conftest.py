"""Fixtures shared by the runtime tests."""

import signal
from collections.abc import Iterator

import pytest


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
