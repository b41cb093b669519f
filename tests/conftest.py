"""Shared test configuration: Hypothesis profiles, and real models for ``local_model`` tests.

``ci`` is deterministic (same examples every run) and is loaded when the ``CI`` environment
variable is set; ``dev`` keeps Hypothesis' defaults apart from the deadline, which a shared,
noisy machine would trip spuriously.

This suite switches on the block of LangTree's pytest plugin (``pyproject.toml``): runs
on real models fail in every test. A test marked ``local_model`` talks to the embedded
model or a local server on purpose, so it is allowed to (as if marked
``allow_model_requests``), and no test needs both marks.
"""

import os

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=200)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if "CI" in os.environ else "dev")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("local_model") is not None:
            item.add_marker(pytest.mark.allow_model_requests)
