"""Answers kept across runs: the journal, the response cache and their keys.

A call's key (`call_key`), the journal that records and replays answers
(`journal`, `journal_file`, `salvage` for a damaged one), the response cache
(`cache`) and the answers given as files (`answer_files`).
"""

# The room's modules serve its own stage, which imports them directly; what other
# stages and users may import, the stage's __init__ exports.
__all__: list[str] = []
