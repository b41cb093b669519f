"""The documentation site as readers get it: built with ``mkdocs build --strict``, the API
page shows every doctest as code, and in a real browser no code block is clipped.

The tests marked ``browser`` open every page in headless Chromium (Debian's ``chromium``,
driven by Playwright) at a desktop and a phone width, and ask the page itself: a code
block wider than its box must scroll, and no box that hides its overflow may cut code
off. ``make test-browser`` installs both and runs them; without either they are skipped,
saying which is missing. With ``LANGTREE_SCREENSHOTS=DIR`` they also save screenshots of
a few pages there (``make test-browser``: ``build/screenshots``), to look at.
"""

import functools
import http.server
import importlib.util
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

ROOT = Path(__file__).parent.parent
WIDTHS = {"desktop": 1280, "phone": 390}
SCREENSHOT_PAGES = ["api/", "dsl/", "cookbook/"]

# Every code element the reader cannot see whole: a block whose content is wider than its
# box and that does not scroll, or code that sticks out of a box that hides its overflow
# (a table cell, an admonition) with no scrolling box in between.
CLIPPED_CODE_JS = """
() => {
  const scrolls = (style) => style.overflowX === "auto" || style.overflowX === "scroll";
  const hides = (style) => style.overflowX === "hidden" || style.overflowX === "clip";
  const where = (element) => {
    let heading = null;
    for (const candidate of document.querySelectorAll("h1[id], h2[id], h3[id], h4[id]")) {
      if (candidate.compareDocumentPosition(element) & Node.DOCUMENT_POSITION_FOLLOWING) {
        heading = candidate.id;
      }
    }
    const text = element.textContent.trim().replace(/\\s+/g, " ").slice(0, 60);
    return `#${heading}: <${element.tagName.toLowerCase()}> ${JSON.stringify(text)}`;
  };
  const problems = [];
  const reported = new Set();
  for (const pre of document.querySelectorAll("pre")) {
    const boxes = [pre, pre.querySelector(":scope > code")].filter(Boolean);
    const stuck = boxes.filter(
      (box) => box.scrollWidth > box.clientWidth + 1 && !scrolls(getComputedStyle(box)),
    );
    // What a code element lets overflow, a scrolling pre around it still shows.
    const shown =
      scrolls(getComputedStyle(pre)) &&
      stuck.every((box) => box !== pre && !hides(getComputedStyle(box)));
    if (stuck.length && !shown) {
      problems.push(`${where(pre)} is wider than its box and does not scroll`);
      reported.add(pre);
    }
  }
  for (const code of document.querySelectorAll(".md-content code")) {
    if (scrolls(getComputedStyle(code)) || reported.has(code.closest("pre"))) continue;
    const box = code.getBoundingClientRect();
    const right = box.left + Math.max(code.scrollWidth, box.width);
    for (let parent = code.parentElement; parent; parent = parent.parentElement) {
      const style = getComputedStyle(parent);
      if (scrolls(style)) break;
      if (hides(style) && right > parent.getBoundingClientRect().right + 1) {
        problems.push(`${where(code)} is cut off by <${parent.tagName.toLowerCase()}
          class="${parent.className}">`.replace(/\\s+/g, " "));
        break;
      }
    }
  }
  return problems;
}
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built strictly (any warning fails) from the working tree."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed: install the 'docs' extra (make does)")
    target = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(target)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert build.returncode == 0, build.stderr
    return target


def test_api_page_shows_doctests_as_code(site: Path) -> None:
    html = (site / "api" / "index.html").read_text()
    outside_code = re.sub(r"<pre\b.*?</pre>|<code\b.*?</code>", "", html, flags=re.DOTALL)

    assert '<span class="gp">&gt;&gt;&gt; </span>' in html  # a highlighted pycon prompt
    assert "&gt;&gt;&gt;" not in outside_code


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The site served on 127.0.0.1 for the length of the module; its base URL."""
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files without logging each request to stderr."""

    def log_message(self, format: str, *args: object) -> None:
        pass


def built_pages() -> list[str]:
    """Every page of the site, one per document in docs/, as its path below the site's
    root (``api/``), known before the site is built."""
    documents = sorted((ROOT / "docs").glob("*.md"))
    return ["" if doc.stem == "index" else f"{doc.stem}/" for doc in documents]


def save_screenshots(page: "Page", stem: Path) -> None:
    """The top of the page, and the first code block that scrolls with the screen around
    it (whole pages run to tens of thousands of pixels)."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=f"{stem}.png")
    wide = page.locator("pre > code").evaluate_all(
        "codes => codes.findIndex(code => code.scrollWidth > code.clientWidth + 1)"
    )
    if wide >= 0:
        page.locator("pre > code").nth(wide).scroll_into_view_if_needed()
        page.screenshot(path=f"{stem}-wide-code.png")


@pytest.mark.browser
@pytest.mark.allow_hosts(["127.0.0.1"])
@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())
@pytest.mark.parametrize("page_path", built_pages(), ids=lambda path: path.strip("/") or "home")
def test_no_code_block_is_clipped(
    browser: "Browser", served: str, site: Path, page_path: str, width: int
) -> None:
    assert (site / page_path / "index.html").exists()
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        page.goto(served + page_path, wait_until="load")
        problems = page.evaluate(CLIPPED_CODE_JS)
        screenshots = os.environ.get("LANGTREE_SCREENSHOTS")
        if screenshots and page_path in SCREENSHOT_PAGES:
            save_screenshots(page, Path(screenshots) / f"{page_path.strip('/')}-{width}")
    finally:
        page.close()

    assert problems == []


CLIPPED_PAGE = """
<div class="md-content" style="width: 200px">
  <pre id="hidden" style="overflow: hidden"><code>{long}</code></pre>
  <pre id="scrolls" style="overflow: auto"><code>{long}</code></pre>
  <table><tr><td style="overflow: hidden; max-width: 100px">
    <code id="cell" style="white-space: nowrap">{long}</code>
  </td></tr></table>
</div>
""".format(long="x" * 200)


@pytest.mark.browser
def test_the_check_finds_clipped_code(browser: "Browser") -> None:
    page = browser.new_page(viewport={"width": 390, "height": 900})
    try:
        page.set_content(CLIPPED_PAGE)
        problems = page.evaluate(CLIPPED_CODE_JS)
    finally:
        page.close()

    assert [problem.split(":", 1)[1].split(" is ")[1] for problem in problems] == [
        "wider than its box and does not scroll",
        'cut off by <td class="">',
    ]
