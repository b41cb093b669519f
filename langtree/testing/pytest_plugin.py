"""LangTree's pytest plugin, loaded by pytest wherever LangTree is installed (``pytest11``).

- **Model requests are blocked in every test of a suite that switches the block on**
  (the ini option ``langtree_block_model_requests = true``): a run on a model not known
  to be offline fails before its first call (see `langtree.testing._model_requests`);
  the marker ``@pytest.mark.allow_model_requests`` allows them in one test. The block
  covers the test's setup, call and teardown, so a fixture that runs a tree is blocked
  too. It is off unless asked for: installing LangTree does not change how another
  suite's tests pass.
- **Fixtures:** ``fake_model`` (a fresh ``FakeChatModel``), ``fake_provider`` (an
  ``LLMProvider`` with it as ``"default"``) and ``prompt_snapshot`` (syrupy's ``snapshot``,
  keeping each snapshot in a Markdown file; compare it with
  `prompt_text()`).

``pytest -p no:langtree`` turns the plugin off.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

import pytest

from langtree.runtime import LLMProvider, model_check
from langtree.testing._fake_model import FakeChatModel
from langtree.testing._model_requests import RealModelCheck, allow_model_requests

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion

__all__ = ["fake_model", "fake_provider", "prompt_snapshot"]

MARKER = "allow_model_requests"
INI_OPTION = "langtree_block_model_requests"
_CHECK = RealModelCheck(
    blocked_by="this test blocks model requests",
    allow=f"mark the test with @pytest.mark.{MARKER}",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Declare the ini option that turns the block off for a whole suite."""
    parser.addini(
        INI_OPTION,
        "Block model requests in every test not marked allow_model_requests (LangTree)",
        type="bool",
        default=False,
    )


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker, so that ``--strict-markers`` accepts it."""
    config.addinivalue_line(
        "markers", f"{MARKER}: let LangTree runs in this test use real models (LangTree)"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """Run the test (setup, call and teardown) with model requests blocked or allowed."""
    with _requests(item):
        return (yield)


def _requests(item: pytest.Item) -> AbstractContextManager[None]:
    if item.get_closest_marker(MARKER) is not None:
        return allow_model_requests()
    if not item.config.getini(INI_OPTION):
        return nullcontext()
    return model_check(_CHECK)


@pytest.fixture
def fake_model() -> FakeChatModel:
    """A fresh ``FakeChatModel``: default answers, no calls recorded yet."""
    return FakeChatModel()


@pytest.fixture
def fake_provider(fake_model: FakeChatModel) -> LLMProvider:
    """An ``LLMProvider`` holding ``fake_model`` as ``"default"``."""
    return LLMProvider({"default": fake_model})


@pytest.fixture
def prompt_snapshot(request: pytest.FixtureRequest) -> SnapshotAssertion:
    """syrupy's ``snapshot``, keeping each snapshot as a Markdown file under
    ``__snapshots__/<test file>/<test name>.md``; ``pytest --snapshot-update`` writes it.

    Compare it with the prompts' text: ``assert prompt_text(prompts) == prompt_snapshot``.
    """
    try:
        snapshot: SnapshotAssertion = request.getfixturevalue("snapshot")
    except pytest.FixtureLookupError:
        pytest.fail(
            "prompt_snapshot needs syrupy's 'snapshot' fixture, and syrupy is not installed "
            "(or is turned off)\n  hint: pip install syrupy",
            pytrace=False,
        )
    # Imported here, not at the top: syrupy is the user's test dependency, not LangTree's,
    # and the plugin is loaded in every pytest run where LangTree is installed.
    from langtree.testing._markdown_snapshot import PromptSnapshot

    return snapshot.use_extension(PromptSnapshot)
