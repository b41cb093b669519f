"""One step instance's model call, from its messages to its validated answer.

The provider's models and their settings (`provider`), the structured-output
method a model is bound with (`methods`, `json_mode`, `schema`, `chat_base` for
LangTree's own chat models), the call itself (`call`), and how a reply is read
(`replies`, `refusals`, `metadata`).
"""

# The room's modules serve its own stage, which imports them directly; what other
# stages and users may import, the stage's __init__ exports.
__all__: list[str] = []
