"""Every notebook in notebooks/ runs top to bottom, and shows what it should.

The code cells run in order in one namespace, as an IPython kernel runs them: a cell whose
last statement is an expression (with no ``;`` after it) shows its value as an
``execute_result``, ``display(...)`` (a builtin in Jupyter) shows each argument as a
``display_data``, and what a cell prints is a ``stream``. Each shown value carries the
MIME bundle IPython's formatter makes: ``text/plain`` from ``repr()``, ``text/markdown``
from ``_repr_markdown_()`` (the only rich display LangTree's objects offer). The cells see
a stand-in for the ``IPython`` modules, so that code that looks for a kernel (the
``ProgressBar``) finds one, and an output shown with a display id is updated in place, as
frontends do. No kernel is started: running a notebook needs no Jupyter package.

What the notebooks show (``text/markdown``, else ``text/plain``) is pinned as one
Markdown snapshot per notebook under ``__snapshots__/test_notebooks/``, each output after a
comment naming its cell; regenerate them with
``pytest tests/test_notebooks.py --snapshot-update`` and read every change.
"""

import ast
import functools
import io
import json
import re
import sys
from contextlib import redirect_stdout
from pathlib import Path
from types import ModuleType
from unittest.mock import patch

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
GETTING_STARTED = Path(__file__).parent.parent / "notebooks" / "getting_started.ipynb"

Output = dict[str, object]


class MarkdownSnapshot(SingleFileSnapshotExtension):
    """One ``.md`` file per snapshot, written as text."""

    file_extension = "md"
    _write_mode = WriteMode.TEXT


class CellStream(io.TextIOBase):
    """A cell's stdout, kept in the cell's outputs in the order it was written."""

    def __init__(self, outputs: list[Output]) -> None:
        self.outputs = outputs

    def write(self, text: str) -> int:
        last = self.outputs[-1] if self.outputs else None
        if last is not None and last["output_type"] == "stream":
            last["text"] = str(last["text"]) + text
        else:
            self.outputs.append({"output_type": "stream", "name": "stdout", "text": text})
        return len(text)


def bundle(value: object) -> dict[str, str]:
    """The MIME bundle IPython's formatter makes of ``value`` (the types used here)."""
    data = {"text/plain": repr(value)}
    markdown = getattr(value, "_repr_markdown_", None)
    if callable(markdown) and not isinstance(value, type):
        data["text/markdown"] = markdown()
    return data


class DisplayHandle:
    """An output shown with ``display_id=True``, which ``update`` replaces in place."""

    def __init__(self, output: Output) -> None:
        self.output = output

    def update(self, value: object, *, raw: bool = False) -> None:
        self.output["data"] = shown_data(value, raw=raw)


class Kernel:
    """What an IPython kernel offers a notebook's code, recording the outputs.

    ``IPython.get_ipython()`` is a shell with a ``kernel`` (how code tells that it runs
    in a notebook); ``IPython.display.display`` (also the ``display`` builtin) shows
    values, or MIME bundles with ``raw=True``, as ``display_data``.
    """

    def __init__(self) -> None:
        self.kernel = self
        self.outputs: list[Output] = []

    def modules(self) -> dict[str, ModuleType]:
        ipython = ModuleType("IPython")
        ipython.get_ipython = lambda: self  # type: ignore[attr-defined]
        display = ModuleType("IPython.display")
        display.display = self.display  # type: ignore[attr-defined]
        return {"IPython": ipython, "IPython.display": display}

    def display(
        self, *values: object, raw: bool = False, display_id: bool = False
    ) -> DisplayHandle | None:
        shown = [
            {"output_type": "display_data", "data": shown_data(value, raw=raw), "metadata": {}}
            for value in values
        ]
        self.outputs.extend(shown)
        return DisplayHandle(shown[-1]) if display_id and shown else None

    def run_cell(self, source: str, name: str, namespace: dict[str, object]) -> list[Output]:
        """Run one code cell as IPython does and return its outputs."""
        self.outputs = outputs = []
        namespace["display"] = self.display
        body = ast.parse(source).body
        last = body.pop() if body and isinstance(body[-1], ast.Expr) else None
        value: object = None
        with redirect_stdout(CellStream(outputs)):
            exec(compile(ast.Module(body=body, type_ignores=[]), name, "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), name, "eval"), namespace)
        if value is not None and not source.rstrip().endswith(";"):
            outputs.append({"output_type": "execute_result", "data": bundle(value), "metadata": {}})
        return outputs


def shown_data(value: object, *, raw: bool) -> dict[str, str]:
    return dict(value) if raw and isinstance(value, dict) else bundle(value)


@functools.cache
def executed(notebook: Path) -> dict[str, object]:
    """The notebook as a kernel would leave it: every code cell run, with its outputs."""
    data = json.loads(notebook.read_text())
    namespace: dict[str, object] = {"__name__": "__main__"}
    kernel = Kernel()
    with patch.dict(sys.modules, kernel.modules()):
        for count, cell in enumerate(c for c in data["cells"] if c["cell_type"] == "code"):
            source = "".join(cell["source"])
            cell["outputs"] = kernel.run_cell(source, f"{notebook.name}[{count}]", namespace)
            cell["execution_count"] = count + 1
    return data


def shown(notebook: Path) -> list[tuple[str, str]]:
    """Each ``execute_result`` and ``display_data`` as (cell id, Markdown or text)."""
    return [
        (cell["id"], output["data"].get("text/markdown", output["data"]["text/plain"]))
        for cell in executed(notebook)["cells"]
        if cell["cell_type"] == "code"
        for output in cell["outputs"]
        if output["output_type"] != "stream"
    ]


def markdown_outputs(notebook: Path) -> list[str]:
    return [
        output["data"]["text/markdown"]
        for cell in executed(notebook)["cells"]
        if cell["cell_type"] == "code"
        for output in cell["outputs"]
        if "text/markdown" in output.get("data", {})
    ]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_runs(notebook: Path) -> None:
    cells = executed(notebook)["cells"]
    code = [cell for cell in cells if cell["cell_type"] == "code"]

    assert code, f"{notebook.name} has no code cell"
    assert any(cell["outputs"] for cell in code)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_shows_what_its_snapshot_holds(
    notebook: Path, snapshot: SnapshotAssertion
) -> None:
    text = "\n\n".join(f"<!-- {cell} -->\n\n{output}" for cell, output in shown(notebook))

    assert text + "\n" == snapshot.use_extension(MarkdownSnapshot)


def test_getting_started_shows_the_plan_as_a_mermaid_diagram() -> None:
    plans = [text for text in markdown_outputs(GETTING_STARTED) if "```mermaid" in text]

    assert len(plans) == 1
    assert "```mermaid\nflowchart TD\n" in plans[0]


def test_getting_started_shows_a_prompt_with_its_token_count() -> None:
    prompts = [text for text in markdown_outputs(GETTING_STARTED) if text.startswith("**Prompt**")]

    assert [re.findall(r"\d+ tokens \(cl100k_base\)", text) for text in prompts] == [
        ["148 tokens (cl100k_base)"]
    ]


def test_getting_started_shows_the_run_and_its_tasks() -> None:
    runs = [text for text in markdown_outputs(GETTING_STARTED) if text.startswith("**Run**")]

    assert len(runs) == 1
    assert runs[0].startswith("**Run**: 6 calls, ")
    assert "`task.report`\n\n```json\n" in runs[0]
    assert "`task.abstract`\n\n```json\n" in runs[0]


def test_getting_started_shows_a_structure_error() -> None:
    errors = [text for text in markdown_outputs(GETTING_STARTED) if "problems**" in text]

    assert [text.split("\n", 1)[0] for text in errors] == ["**LangTree found 2 problems**"]


def test_getting_started_shows_a_finished_progress_bar() -> None:
    bars = [text for _, text in shown(GETTING_STARTED) if text.startswith("langtree ▕")]

    assert bars == ["langtree ▕████████████████████▏ 6/6 calls, 0 failed"]


def test_there_is_a_notebook() -> None:
    assert NOTEBOOKS
