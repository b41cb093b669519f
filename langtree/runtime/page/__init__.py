"""A page to look at a run: one self-contained HTML file, made from a `RunResult`
(``to_html()``, ``write_html()``), from the JSON that ``RunResult.to_json()`` wrote, or
from a journal (``langtree show``).

The page shows the tree of tasks and nodes; at each node its values with what wrote
them, and each step instance with its calls: prompt, answer, attempts, latency, tokens
and model; failures marked and listed at the top; and the plan drawn as an inline SVG.
It has no script and fetches nothing, so it works offline, opened from a file.
"""

# The room's modules serve its own stage, which imports them directly; what other
# stages and users may import, the stage's __init__ exports.
__all__: list[str] = []
