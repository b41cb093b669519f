"""The engine: a run's step instances scheduled by their data flow.

A run is set up and checked before its first call (`setup`, `precheck`,
`arguments`), its step instances laid out (`instances`, `element_flows`,
`known_parts`, `resampling`) and started as soon as what they wait for is known
(`engine`, `waits`, `commands`, `transforms`), on LangTree's own event loop (`loop`);
`outcome` ends the run and `runnable` offers it as a LangChain runnable. `json_view`
is the JSON view of a run's values that transforms, events and `RunResult` share.

A run is made of four parts, each complete once it is set up: what it is given
(`RunBasis`, in `setup`), what it records and whom it tells (`records`), how it
calls its models (`run_calls`) and where its steps stand (`Schedule`, in `instances`).
"""

# The room's modules serve its own stage, which imports them directly; what other
# stages and users may import, the stage's __init__ exports.
__all__: list[str] = []
