"""Shared test configuration: Hypothesis profiles, and real models for ``local_model`` tests.

``ci`` is deterministic (same examples every run) and is loaded when the ``CI`` environment
variable is set; ``dev`` keeps Hypothesis' defaults apart from the deadline, which a shared,
noisy machine would trip spuriously.

This suite switches on the block of LangTree's pytest plugin (``pyproject.toml``): runs
on real models fail in every test. A test marked ``local_model`` talks to the embedded
model or a local server on purpose, so it is allowed to (as if marked
``allow_model_requests``), and no test needs both marks.

The tests marked ``browser`` (the docs site, a run's page, an exported notebook) share one
headless Chromium: Debian's ``chromium``, driven by Playwright. ``make test-browser``
installs both; without either, those tests are skipped, saying which is missing.
"""

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

from tests.photos import PNG

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = Path("/usr/bin/chromium")
# Without the flags that stop background networking, Chromium waits on update and sync
# services that a closed network never answers.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=200)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if "CI" in os.environ else "dev")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("local_model") is not None:
            item.add_marker(pytest.mark.allow_model_requests)


@pytest.fixture(scope="session")
def browser() -> Iterator["Browser"]:
    """Headless Chromium, or a skip that says what is missing."""
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: `make test-browser` installs it")
    if importlib.util.find_spec("playwright") is None:
        pytest.skip("Playwright is not installed: `make test-browser` installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # Scrollbars shown, as a desktop browser shows them: a screenshot then tells a
        # block that scrolls from one that is cut off.
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, ignore_default_args=["--hide-scrollbars"]
        )
        yield chromium
        chromium.close()


@pytest.fixture
def photos(tmp_path: Path) -> Path:
    """A folder of photos (``kettle.png``), beside a secret the inputs must not reach."""
    folder = tmp_path.resolve() / "photos"  # the messages show resolved paths
    folder.mkdir()
    (folder / "kettle.png").write_bytes(PNG)
    (tmp_path / "secret.txt").write_text("password")
    return folder
