"""Every notebook in notebooks/ runs top to bottom (code cells in order, one namespace)."""

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_runs(notebook: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cells = json.loads(notebook.read_text())["cells"]
    code = ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"]
    namespace: dict[str, object] = {"__name__": "__main__"}

    for index, source in enumerate(code):
        exec(compile(source, f"{notebook.name}[{index}]", "exec"), namespace)

    assert code, f"{notebook.name} has no code cell"
    assert capsys.readouterr().out


def test_there_is_a_notebook() -> None:
    assert NOTEBOOKS
