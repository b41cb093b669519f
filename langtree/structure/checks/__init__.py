"""Rules over a whole tree that return diagnostics.

The checks `validate()` runs (`analysis`), paths that are valid but unusual
(`scopes`), commands that stand where they are prompt text (`stray_commands`) and
commands inside a node generated whole (`whole_nodes`).
"""

# The room's modules serve its own stage, which imports them directly; what other
# stages and users may import, the stage's __init__ exports.
__all__: list[str] = []
