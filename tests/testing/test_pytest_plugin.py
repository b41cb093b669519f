"""LangTree's pytest plugin: the block on model requests, its marker and ini option, the
fixtures, and the prompt snapshots; and the context managers it is built on.

The plugin is run as users get it: ``pytester`` runs small test files in a pytest session
of their own, which loads the plugin through its ``pytest11`` entry point.
"""

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import ConfigurableField
from pydantic import Field

from langtree import ExecutionError, LLMProvider, ModelConfig, RunStructure, TreeNode
from langtree.testing import (
    FakeChatModel,
    allow_model_requests,
    block_model_requests,
    offline_model,
    prompt_text,
)

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def users_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sessions pytester runs are a user's own, not workers of the suite's parallel run
    (``make test`` runs pytest-xdist): told that they are (``PYTEST_XDIST_WORKER``),
    syrupy reports as a worker does and a failed snapshot's diff loses lines."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)


# The head of every test file run by pytester: a task, and a chat model LangTree does not
# know to be offline, which counts its calls.
HEAD = '''
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from langtree import ExecutionError, LLMProvider, RunStructure, TreeNode
from langtree.testing import FakeChatModel, offline_model, prompt_text


class TaskTitle(TreeNode):
    """Write a title for the article."""

    article: str = Field(description="The article.")
    title: str = Field(description="At most eight words.")


class Remote(BaseChatModel):
    calls: int = 0

    @property
    def _llm_type(self):
        return "remote"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.calls += 1
        reply = AIMessage(content='{"title": "Cats"}')
        return ChatResult(generations=[ChatGeneration(message=reply)])


def run(model):
    structure = RunStructure(provider=LLMProvider({"default": model}))
    structure.add(TaskTitle)
    return structure.run({TaskTitle: {"article": "Cats sleep a lot."}})
'''

BLOCKED = (
    "Model 'default' ('Remote') may make real requests, and this test blocks model requests\n"
    "  hint: inject a FakeChatModel (LLMProvider({'default': FakeChatModel()})), mark a fake "
    "class of your own with @langtree.testing.offline_model, or mark the test with "
    "@pytest.mark.allow_model_requests"
)


def run_tests(
    pytester: pytest.Pytester, source: str, *args: str, block: bool = True
) -> pytest.RunResult:
    """Run ``source`` as a suite of its own, with the block switched on (or not)."""
    if block:
        pytester.makeini("[pytest]\nlangtree_block_model_requests = true\n")
    pytester.makepyfile(test_it=HEAD + source)
    return pytester.runpytest(*args)


def test_entry_point_loads_the_plugin() -> None:
    (entry,) = entry_points(group="pytest11", name="langtree")

    assert entry.value == "langtree.testing.pytest_plugin"


# -- the block ---------------------------------------------------------------------------


def test_run_on_a_real_model_fails_before_any_call(pytester: pytest.Pytester) -> None:
    source = f"""
def test_it():
    model = Remote()
    with pytest.raises(ExecutionError) as caught:
        run(model)
    assert (str(caught.value), model.calls) == ({BLOCKED!r}, 0)
"""
    run_tests(pytester, source).assert_outcomes(passed=1)


def test_marker_allows_requests(pytester: pytest.Pytester) -> None:
    source = """
@pytest.mark.allow_model_requests
def test_it():
    model = Remote()
    assert (run(model)[TaskTitle].title, model.calls) == ("Cats", 1)
"""
    run_tests(pytester, source, "--strict-markers").assert_outcomes(passed=1)


def test_fake_chat_model_is_allowed(pytester: pytest.Pytester) -> None:
    source = """
def test_it():
    model = FakeChatModel()
    assert (run(model)[TaskTitle].title, len(model.calls)) == ("title 1", 1)
"""
    run_tests(pytester, source).assert_outcomes(passed=1)


def test_offline_model_marks_a_class_of_ones_own(pytester: pytest.Pytester) -> None:
    source = """
@offline_model
class Canned(Remote):
    pass


def test_it():
    assert run(Canned())[TaskTitle].title == "Cats"
"""
    run_tests(pytester, source).assert_outcomes(passed=1)


# The inner session runs in this test's process: this test lifts its own block, so that
# the inner one starts unblocked, as a session of its own would.
@pytest.mark.allow_model_requests
def test_a_suite_that_does_not_switch_the_block_on_is_not_blocked(
    pytester: pytest.Pytester,
) -> None:
    source = """
def test_it():
    assert run(Remote())[TaskTitle].title == "Cats"
"""
    run_tests(pytester, source, block=False).assert_outcomes(passed=1)


def test_block_covers_fixtures(pytester: pytest.Pytester) -> None:
    source = """
@pytest.fixture
def titled():
    return run(Remote())


def test_it(titled):
    pass
"""
    result = run_tests(pytester, source)

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*ExecutionError: Model 'default' ('Remote') may make real*"])


# -- fixtures ----------------------------------------------------------------------------


def test_fake_model_is_fresh_in_each_test(pytester: pytest.Pytester) -> None:
    source = """
@pytest.mark.parametrize("attempt", [1, 2])
def test_it(fake_model, attempt):
    run(fake_model)
    assert len(fake_model.calls) == 1
"""
    run_tests(pytester, source).assert_outcomes(passed=2)


def test_fake_provider_holds_fake_model_as_default(pytester: pytest.Pytester) -> None:
    source = """
def test_it(fake_provider, fake_model):
    assert (fake_provider.list_models(), fake_provider.get()) == (["default"], fake_model)
"""
    run_tests(pytester, source).assert_outcomes(passed=1)


# -- prompt snapshots --------------------------------------------------------------------

SNAPSHOT_TEST = """
def test_title(prompt_snapshot):
    structure = RunStructure()
    structure.add(TaskTitle)
    prompts = structure.prompts({TaskTitle: {"article": "Cats sleep a lot."}})
    assert prompt_text(prompts) == prompt_snapshot
"""


def test_prompt_snapshot_is_written_as_markdown(pytester: pytest.Pytester) -> None:
    run_tests(pytester, SNAPSHOT_TEST, "--snapshot-update").assert_outcomes(passed=1)

    written = pytester.path / "__snapshots__" / "test_it" / "test_title.md"
    assert written.read_text().splitlines()[:5] == [
        "<!-- step task.title:title at task.title -->",
        "",
        "<!-- system -->",
        "",
        "You write one part of a larger structured document. The task below describes the whole",
    ]


def test_prompt_snapshot_matches_an_unchanged_prompt(pytester: pytest.Pytester) -> None:
    run_tests(pytester, SNAPSHOT_TEST, "--snapshot-update")

    run_tests(pytester, SNAPSHOT_TEST).assert_outcomes(passed=1)


def test_prompt_snapshot_fails_on_a_changed_prompt_with_a_diff(
    pytester: pytest.Pytester,
) -> None:
    run_tests(pytester, SNAPSHOT_TEST, "--snapshot-update")
    changed = (HEAD + SNAPSHOT_TEST).replace("Write a title", "Write a catchy title")
    pytester.makepyfile(test_it=changed)

    result = pytester.runpytest()

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*- Write a title for the article.*",
            "*+ Write a catchy title for the article.*",
            "1 snapshot failed.",
        ]
    )


def test_prompt_snapshot_without_syrupy_says_so(pytester: pytest.Pytester) -> None:
    result = run_tests(pytester, SNAPSHOT_TEST, "-p", "no:syrupy")

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*prompt_snapshot needs syrupy's 'snapshot' fixture, and syrupy is not installed "
            "(or is turned off)",
            "*hint: pip install syrupy",
        ]
    )


# -- the context managers and what they check (this test is blocked by the plugin) -------


class Remote(BaseChatModel):
    """A chat model LangTree does not know to be offline."""

    replies: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "remote"

    def _generate(self, messages: list[BaseMessage], *args: object, **kwargs: object) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="{}"))])


def test_block_model_requests_names_how_to_allow_them() -> None:
    provider = LLMProvider({"writer": Remote()})

    with block_model_requests(), pytest.raises(ExecutionError) as caught:
        provider.get("writer")

    assert str(caught.value) == (
        "Model 'writer' ('Remote') may make real requests, and model requests are blocked "
        "(block_model_requests())\n"
        "  hint: inject a FakeChatModel (LLMProvider({'writer': FakeChatModel()})), mark a "
        "fake class of your own with @langtree.testing.offline_model, or allow them around "
        "the run: with allow_model_requests(): ..."
    )


def test_allow_model_requests_lifts_the_tests_block() -> None:
    model = Remote()

    with allow_model_requests():
        assert LLMProvider({"default": model}).get() is model


def test_block_ends_with_its_block() -> None:
    provider = LLMProvider({"default": Remote()})
    with allow_model_requests():
        with block_model_requests(), pytest.raises(ExecutionError):
            provider.get()

        assert isinstance(provider.get(), Remote)


REAL_INSIDE = [
    pytest.param(lambda: Remote().with_retry(), id="with-retry"),
    pytest.param(lambda: Remote().bind(stop=["END"]), id="bind"),
    pytest.param(lambda: FakeChatModel().with_fallbacks([Remote()]), id="fallback"),
    pytest.param(lambda: ModelConfig(Remote(), method="json_mode"), id="model-config"),
    pytest.param(lambda: lambda: Remote(), id="factory"),
    pytest.param(
        lambda: FakeChatModel().configurable_alternatives(
            ConfigurableField(id="model"), default_key="fake", remote=Remote()
        ),
        id="alternative",
    ),
    pytest.param(
        lambda: Remote().configurable_fields(replies=ConfigurableField(id="replies")),
        id="configurable-field",
    ),
]


@pytest.mark.parametrize("source", REAL_INSIDE)
def test_every_model_inside_a_runnable_is_checked(source: object) -> None:
    provider = LLMProvider({"default": source()})  # type: ignore[operator]

    with pytest.raises(ExecutionError, match=r"^Model 'default' \('Remote'\) may make real"):
        provider.get()


def test_every_model_not_offline_is_named_once() -> None:
    chain = Remote().with_fallbacks([FakeChatModel(), Remote().with_retry()])

    with pytest.raises(ExecutionError, match=r"^Model 'default' \('Remote'\) may make real"):
        LLMProvider({"default": chain}).get()


OFFLINE = [
    pytest.param(lambda: FakeChatModel(), id="fake"),
    pytest.param(lambda: FakeChatModel().with_fallbacks([FakeChatModel()]), id="fallback"),
    pytest.param(lambda: ModelConfig(FakeChatModel().with_retry()), id="model-config"),
]


@pytest.mark.parametrize("source", OFFLINE)
def test_offline_models_pass(source: object) -> None:
    LLMProvider({"default": source()}).get()  # type: ignore[operator]


def test_offline_model_takes_only_a_class() -> None:
    with pytest.raises(ExecutionError) as caught:
        offline_model(FakeChatModel())  # type: ignore[type-var]

    assert str(caught.value) == (
        "offline_model takes a class, got a 'FakeChatModel' instance\n"
        "  hint: decorate the class: @offline_model above 'class MyFake(BaseChatModel):'"
    )


def test_validate_and_prompts_take_no_model() -> None:
    class TaskTitle(TreeNode):
        """Write a title."""

        title: str = Field(description="At most eight words.")

    structure = RunStructure(provider=LLMProvider({"default": Remote()}))
    structure.add(TaskTitle)
    structure.validate()

    assert prompt_text(structure.prompts()).startswith("<!-- step task.title:title")


def test_the_suite_collects_with_the_plugin_turned_off() -> None:
    root = Path(__file__).resolve().parents[2]
    options = ["-p", "no:langtree", "--strict-markers", "--co", "-q", "-p", "no:cacheprovider"]
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", *options, str(Path(__file__))],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )

    assert collected.returncode == 0, collected.stdout + collected.stderr
