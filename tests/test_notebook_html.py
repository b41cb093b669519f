"""A notebook exported to HTML draws its plan as it shows in JupyterLab.

``jupyter nbconvert --to html`` puts a ```` ```mermaid ```` block of a Markdown output
into the page as it is and has the page load Mermaid from a CDN, which draws it. The
test runs the getting-started notebook (as ``tests/test_notebooks.py`` does), exports it
with nbconvert, and opens the page in headless Chromium, serving the page's requests for
Mermaid from a local copy and refusing every other request, so that nothing leaves the
machine. Each box of the drawn plan must keep its label's lines and text as LangTree
wrote them.

Marked ``browser``: ``make test-browser`` installs Playwright, nbconvert and Mermaid's
files (from npm, in ``build/mermaid``); without them the test is skipped, saying which is
missing.
"""

import copy
import importlib.util
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.test_notebooks import GETTING_STARTED, executed

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Route

NODE_MODULES = Path(__file__).parent.parent / "build" / "mermaid" / "node_modules"
# The CDN addresses nbconvert's template imports, and where npm puts the same files.
LIBRARIES = {
    "mermaid": NODE_MODULES / "mermaid" / "dist",
    "mermaid-layout-elk": NODE_MODULES / "@mermaid-js" / "layout-elk" / "dist",
}
CDN_FILE = re.compile(r"https://cdnjs\.cloudflare\.com/ajax/libs/([\w-]+)/[^/]+/(.+)")

# The lines of each drawn box's label, read from the image Mermaid made: its text
# between line breaks (an italic or a tag Mermaid made of the label loses characters).
DRAWN_LABELS_JS = """
() => {
  const image = document.querySelector(".jp-RenderedMermaid img");
  if (!image) return null;
  const svg = decodeURIComponent(image.src.slice(image.src.indexOf(",") + 1));
  const drawing = new DOMParser().parseFromString(svg, "image/svg+xml");
  return [...drawing.querySelectorAll(".nodeLabel")].map((label) => {
    const lines = [""];
    const walk = (node) => {
      for (const child of node.childNodes) {
        if (child.nodeName.toLowerCase() === "br") lines.push("");
        else if (child.nodeType === Node.TEXT_NODE) lines[lines.length - 1] += child.data;
        else walk(child);
      }
    };
    walk(label);
    return lines;
  });
}
"""


def html_export(notebook: Path) -> str:
    """The notebook run and exported as ``jupyter nbconvert --to html`` exports it."""
    if importlib.util.find_spec("nbconvert") is None:
        pytest.skip("nbconvert is not installed: `make test-browser` installs it")
    import nbformat
    from nbconvert import HTMLExporter

    data = copy.deepcopy(executed(notebook))
    for cell in data["cells"]:
        for output in cell.get("outputs", []):
            if output["output_type"] == "execute_result":  # as a kernel numbers it
                output["execution_count"] = cell["execution_count"]
    # Read as nbformat reads a file (a cell's source given as lines is joined).
    node = nbformat.reads(json.dumps(data), as_version=4)
    body, _ = HTMLExporter().from_notebook_node(node)
    return body


def serve_mermaid(route: "Route") -> None:
    """A request for Mermaid's files answered from npm's copy; any other refused."""
    found = CDN_FILE.fullmatch(route.request.url.split("?")[0])
    folder = LIBRARIES.get(found.group(1)) if found else None
    if found is None or folder is None or not (folder / found.group(2)).is_file():
        route.abort()
        return
    route.fulfill(
        path=folder / found.group(2),
        content_type="text/javascript",
        headers={"Access-Control-Allow-Origin": "*"},
    )


@pytest.mark.browser
def test_an_exported_notebook_draws_each_plan_box_on_its_lines_as_written(
    browser: "Browser", tmp_path: Path
) -> None:
    if not (LIBRARIES["mermaid"] / "mermaid.esm.min.mjs").is_file():
        pytest.skip(f"no Mermaid in {NODE_MODULES}: `make test-browser` installs it")
    page_file = tmp_path / "getting_started.html"
    page_file.write_text(html_export(GETTING_STARTED))
    page = browser.new_page()
    page.route(re.compile(r"^https?://"), serve_mermaid)
    page.goto(page_file.as_uri())
    page.wait_for_selector(".jp-RenderedMermaid", state="attached")

    assert page.evaluate(DRAWN_LABELS_JS) == [
        ["task.report.sections[*].paragraphs[*]", "summary, sentiment"],
        ["task.report.sections[*]", "summary"],
        ["task.abstract", "title, abstract"],
    ]
    page.close()
