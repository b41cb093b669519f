"""Answers kept across runs: the journal, the response cache and their keys.

A call's key (`call_key`), the journal that records and replays answers
(`journal`, `journal_file`, `salvage` for a damaged one), the response cache
(`cache`) and the answers given as files (`answer_files`).
"""
