"""What the commands import: a tree file imports the modules beside it, and a
``module:attribute`` (``--model``, ``--config``) is found in the working folder, as
``python tree.py`` and ``python -m`` find them, whether the command runs as the
``langtree`` script or as ``python -m langtree``."""

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from command_line import run_python, write

from langtree.cli import main

TREE = '''
from pydantic import Field

from labels import LABEL_TEXT
from langtree import TreeNode


class TaskLabel(TreeNode):
    """Label the parcel."""

    label: str = Field(description=LABEL_TEXT)
'''

LABELS = 'LABEL_TEXT = "The text printed on the label."\n'

MODELS = """
from langtree import LLMProvider
from langtree.testing import FakeChatModel

provider = LLMProvider({"default": FakeChatModel()})
"""

SETTINGS = 'CONFIG = {"outline": "root"}\n'


@pytest.fixture
def working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A working folder of its own, which no entry of the import path names: the
    ``langtree`` script starts with its own folder first on the path, not the working
    folder (``""`` names it under ``python -c`` and some test runners). The import path
    and the modules imported from ``tmp_path`` are restored afterwards."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(sys, "path", [entry for entry in sys.path if entry not in ("", ".")])
    before = set(sys.modules)
    yield work
    for name in set(sys.modules) - before:
        if str(tmp_path) in str(getattr(sys.modules[name], "__file__", "") or ""):
            del sys.modules[name]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A tree in a folder that is not the working folder, importing a module beside it."""
    write(tmp_path / "trees", "labels.py", LABELS)
    return write(tmp_path / "trees", "parcel.py", TREE)


# Each command that imports a tree, with ``{tree}`` for the tree file's path.
COMMANDS = [
    pytest.param(["check", "{tree}"], id="check"),
    pytest.param(["graph", "{tree}"], id="graph"),
    pytest.param(["prompts", "{tree}:TaskLabel"], id="prompts"),
    pytest.param(["run", "{tree}:TaskLabel", "--model", "fake"], id="run"),
]


@pytest.mark.parametrize(
    "command", [*COMMANDS, pytest.param(["check", "{folder}"], id="check-folder")]
)
def test_a_tree_file_imports_the_modules_beside_it(
    working_folder: Path, tree: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [part.format(tree=tree, folder=tree.parent) for part in command]

    status = main(argv)

    captured = capsys.readouterr()
    assert status == 0, captured.out + captured.err
    assert "labels" not in captured.err


def test_a_model_module_in_the_working_folder_is_found(
    working_folder: Path, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(working_folder, "my_models.py", MODELS)

    status = main(["run", f"{tree}:TaskLabel", "--model", "my_models:provider"])

    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.out.startswith('{\n  "label": ')


def test_a_model_file_imports_the_modules_beside_it(
    working_folder: Path, tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "models", "chat.py", MODELS)
    models = write(tmp_path / "models", "my_provider.py", "from chat import provider\n")

    status = main(["run", f"{tree}:TaskLabel", "--model", f"{models}:provider"])

    assert status == 0, capsys.readouterr().err


@pytest.mark.parametrize("command", COMMANDS)
def test_a_config_module_in_the_working_folder_is_found(
    working_folder: Path, tree: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    write(working_folder, "my_settings.py", SETTINGS)
    argv = [part.format(tree=tree) for part in command]

    status = main([*argv, "--config", "my_settings:CONFIG"])

    assert status == 0, capsys.readouterr().err


def test_a_tree_module_in_the_working_folder_is_found(
    working_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(working_folder, "labels.py", LABELS)
    write(working_folder, "parcel_tree.py", TREE)

    status = main(["check", "parcel_tree"])

    assert status == 0, capsys.readouterr().out


def test_the_langtree_script_finds_a_model_module_in_the_working_folder(
    tmp_path: Path, tree: Path
) -> None:
    # What the installed `langtree` script does: its own folder, not the working
    # folder, is first on the import path.
    script = write(
        tmp_path / "bin",
        "langtree_script.py",
        "import sys\nfrom langtree.cli import main\nsys.exit(main())\n",
    )
    work = tmp_path / "work"
    write(work, "my_models.py", MODELS)

    finished = run_python(
        [str(script), "run", f"{tree}:TaskLabel", "--model", "my_models:provider"], cwd=work
    )

    assert finished.returncode == 0, finished.stderr
    assert json.loads(finished.stdout)["label"]
