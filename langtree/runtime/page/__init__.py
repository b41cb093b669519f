"""A page to look at a run: one self-contained HTML file, made from a `RunResult`
(``to_html()``, ``write_html()``), from the JSON that ``RunResult.to_json()`` wrote, or
from a journal (``langtree show``).

The page shows the tree of tasks and nodes; at each node its values with what wrote
them, and each step instance with its calls: prompt, answer, attempts, latency, tokens
and model; failures marked and listed at the top; and the plan drawn as an inline SVG.
It has no script and fetches nothing, so it works offline, opened from a file.
"""

from langtree.runtime.page.files import DEFAULT_MAX_RUN_BYTES, read_run, write_page
from langtree.runtime.page.render import page_html
from langtree.runtime.page.saved import SavedRun, saved_run

__all__ = ["DEFAULT_MAX_RUN_BYTES", "SavedRun", "page_html", "read_run", "saved_run", "write_page"]
