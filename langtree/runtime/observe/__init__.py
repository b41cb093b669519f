"""What users read and watch of a run: its result, events, progress and usage.

The result and how it shows (`result`, `result_display`), token usage and limits
(`usage`), what wrote each value (`provenance`), streamed events (`events`),
progress (`progress`, `progress_bar`) and OpenTelemetry spans (`otel`).
"""

# The room's modules serve its own stage, which imports them directly; what other
# stages and users may import, the stage's __init__ exports.
__all__: list[str] = []
