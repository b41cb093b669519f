"""Many rows through one tree: `run_many()` in one process.

`dataset` runs the rows and reports each; `shared` holds what the rows of a
dataset share (models, journal, cache, limits). Runs on Ray are `langtree.ray`.
"""

# The room's modules serve its own stage, which imports them directly; what other
# stages and users may import, the stage's __init__ exports.
__all__: list[str] = []
