"""Every ``python`` code block in the README and in docs/ runs."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_python_blocks_run(document: Path) -> None:
    blocks = PYTHON_BLOCK.findall(document.read_text())
    namespace: dict[str, object] = {"__name__": f"docs_{document.stem}"}

    for block in blocks:
        exec(compile(block, str(document), "exec"), namespace)

    assert blocks, f"{document.name} has no python block to run"
