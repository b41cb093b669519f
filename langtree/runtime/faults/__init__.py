"""What fails in a model call, what is retried, and how fast calls may go.

The kinds of failure (`faults`) and the errors a run raises (`failure`), the retry
policy (`retry`), the pause a provider asks for (`cooldown`) and the run's rate
limits (`rate_limit`).
"""
