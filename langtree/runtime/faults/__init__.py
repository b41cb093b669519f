"""What fails in a model call, what is retried, and how fast calls may go.

The kinds of failure (`faults`) and the errors a run raises (`failure`), the retry
policy (`retry`), the pause a provider asks for (`cooldown`) and the run's rate
limits (`rate_limit`).
"""

# The room's modules serve its own stage, which imports them directly; what other
# stages and users may import, the stage's __init__ exports.
__all__: list[str] = []
