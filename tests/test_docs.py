"""Every ``python`` code block in the README and in docs/ runs.

Blocks run in order in one namespace per document (``__file__`` is the document). A block
is skipped only when the line right above its fence is a comment that says why::

    <!-- not run: needs an OpenAI API key -->
    ```python
    ...
    ```

The reason is printed, and a skip comment with no reason, or one that is not followed by a
``python`` block, fails the test.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PYTHON_BLOCK = re.compile(
    r"^(?:<!-- not run:(?P<reason>[^\n]*?)-->\n)?```python(?:[ \t][^\n]*)?\n(?P<code>.*?)^```",
    re.DOTALL | re.MULTILINE,
)
SKIP_COMMENT = re.compile(r"^<!-- not run:", re.MULTILINE)
# Any fence that opens Python code, so that an indented or ```py block is not missed.
ANY_PYTHON_FENCE = re.compile(r"^[ \t]*```(?:python|py|python3)\b", re.MULTILINE)
# Pages that hold no code at all (docs/changelog.md includes CHANGELOG.md).
WITHOUT_CODE = {"changelog.md"}


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_python_blocks_run(document: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = document.read_text()
    blocks = list(PYTHON_BLOCK.finditer(text))
    namespace: dict[str, object] = {"__name__": f"docs_{document.stem}", "__file__": str(document)}
    skipped = [block for block in blocks if block["reason"] is not None]

    assert len(blocks) == len(ANY_PYTHON_FENCE.findall(text)), (
        f"{document.name}: write Python blocks as ```python fences at the start of a line"
    )
    assert len(skipped) == len(SKIP_COMMENT.findall(text)), (
        f"{document.name}: a '<!-- not run: ... -->' comment must stand right above a "
        "```python fence"
    )
    for block in blocks:
        line = text.count("\n", 0, block.start("code")) + 1
        if block["reason"] is not None:
            reason = block["reason"].strip()
            assert reason, f"{document.name}:{line}: say why the block is not run"
            with capsys.disabled():
                print(f"\n{document.name}:{line}: not run: {reason}", end="")
            continue
        # Pad with blank lines so that tracebacks point at the document's own lines.
        code = "\n" * (line - 1) + block["code"]
        exec(compile(code, str(document), "exec"), namespace)

    if document.name not in WITHOUT_CODE:
        assert len(blocks) > len(skipped), f"{document.name} has no python block to run"
