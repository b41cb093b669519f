"""A provider string, ``openai:gpt-4o-mini``, runs a tree through ``init_chat_model``'s
``ChatOpenAI``, from Python and from the command line; the API key and the base URL come
from the environment, as ChatOpenAI reads them, and the server is a stub on 127.0.0.1."""

import importlib.util
import json
from pathlib import Path

import pytest
from stub_openai import StubServer

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.cli import main

pytestmark = [
    pytest.mark.allow_hosts(["127.0.0.1"]),
    pytest.mark.allow_model_requests,
    pytest.mark.skipif(
        importlib.util.find_spec("langchain") is None,
        reason="langchain is not installed: pip install -e '.[dev]'",
    ),
]

TREE = '''
from langtree import TreeNode


class TaskGreet(TreeNode):
    """Greet the person by name."""

    name: str
    greeting: str
'''


class TaskGreet(TreeNode):
    """Greet the person by name."""

    name: str
    greeting: str


@pytest.fixture
def openai_environment(stub_openai_server: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "not-needed")
    monkeypatch.setenv("OPENAI_BASE_URL", stub_openai_server.base_url)


@pytest.mark.usefixtures("openai_environment")
def test_a_provider_string_runs_a_tree(stub_openai_server: StubServer) -> None:
    structure = RunStructure(provider=LLMProvider({"default": "openai:gpt-4o-mini"}))
    structure.add(TaskGreet)

    result = structure.run({TaskGreet: {"name": "Ada"}})

    assert result[TaskGreet].greeting == "greeting ok"
    assert [request["model"] for request in stub_openai_server.requests] == ["gpt-4o-mini"]


@pytest.mark.usefixtures("openai_environment")
def test_the_command_line_runs_on_a_provider_string(
    stub_openai_server: StubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "greet.py").write_text(TREE)
    (tmp_path / "inputs.json").write_text(json.dumps({"TaskGreet": {"name": "Ada"}}))

    status = main(
        [
            "run",
            str(tmp_path / "greet.py"),
            "--input",
            str(tmp_path / "inputs.json"),
            "--model",
            "openai:gpt-4o-mini",
        ]
    )

    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert json.loads(captured.out) == {"TaskGreet": {"name": "Ada", "greeting": "greeting ok"}}
    assert [request["model"] for request in stub_openai_server.requests] == ["gpt-4o-mini"]
