"""Shared test configuration: Hypothesis profiles.

``ci`` is deterministic (same examples every run) and is loaded when the ``CI`` environment
variable is set; ``dev`` keeps Hypothesis' defaults apart from the deadline, which a shared,
noisy machine would trip spuriously.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=200)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if "CI" in os.environ else "dev")
