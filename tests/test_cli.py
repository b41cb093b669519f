"""``langtree check``: find node classes, report syntax errors compiler-style."""

import textwrap
from pathlib import Path

import pytest

from langtree.cli import main

EXAMPLES = Path(__file__).parent.parent / "examples"

BROKEN = '''
from pydantic import Field

from langtree import TreeNode


class TaskBroken(TreeNode):
    """
    Intro.

    ! @each [items]->task.other@{{value.item=items}}*
    """

    items: list[str] = Field(description="! @all->task.other@{{prompt.a=items}} *")
    fine: str = Field(description="! llm(model, override=flag)")
'''


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def test_check_passes_on_the_examples(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["check", str(EXAMPLES)])

    assert status == 0
    assert capsys.readouterr().out == "checked 5 node class(es): 0 error(s)\n"


def test_check_reports_every_broken_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "broken.py", BROKEN)

    status = main(["check", str(path)])

    assert status == 1
    assert capsys.readouterr().out == (
        f"{path}:11:12: error: Space before '[' not allowed - use '@each[items]' not "
        "'@each [items]' [TaskBroken]\n"
        "        ! @each [items]->task.other@{{value.item=items}}*\n"
        "               ^\n"
        "    hint: write '@each[' with no space\n"
        f"{path}:14:36: error: Space after '}}}}' not allowed - use '}}}}*' not '}}}} *' "
        "[TaskBroken.items]\n"
        "    ! @all->task.other@{{prompt.a=items}} *\n"
        "    " + " " * 35 + "^~~~\n"
        "    hint: write '}}*' with no space\n"
        "checked 1 node class(es): 2 error(s)\n"
    )


def test_check_accepts_a_module_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "my_tree.py", BROKEN)
    monkeypatch.syspath_prepend(str(tmp_path))

    status = main(["check", "my_tree"])

    assert status == 1
    assert capsys.readouterr().out.endswith("checked 1 node class(es): 2 error(s)\n")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        pytest.param("missing.py", "langtree: error: No such file: 'missing.py'\n", id="file"),
        pytest.param(
            "no_such.module",
            "langtree: error: No file or importable module named 'no_such.module'\n",
            id="module",
        ),
    ],
)
def test_check_reports_a_missing_target(
    target: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["check", target])

    assert status == 2
    assert capsys.readouterr().err == message


def test_check_without_a_target_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["check"])

    assert caught.value.code == 2
    assert "PATH_OR_MODULE" in capsys.readouterr().err
