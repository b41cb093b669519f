"""The call-style commands (``input()``, ``llm(...)``, ``resample(...)``,
``transform(...)``): one module each, declaring the command's signature and kind.

A command is a `CommandKind` (`kind`) in a module of its own named for it
(`input_command`, `llm_command`, `resample_command`, `transform_command`), which the
table (`table`) collects: the parser is handed the signatures, and every stage after it
reads a command's kind from the table. Where the commands may stand is checked from their
kinds (`placement`), and the fields that transforms compute against the mappings
(`transform_targets`).
"""

# The room's modules serve its own stage, which imports them directly; what other
# stages and users may import, the stage's __init__ exports.
__all__: list[str] = []
