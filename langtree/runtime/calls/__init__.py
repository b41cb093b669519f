"""One step instance's model call, from its messages to its validated answer.

The provider's models and their settings (`provider`), the structured-output
method a model is bound with (`methods`, `json_mode`, `schema`, `chat_base` for
LangTree's own chat models), the call itself (`call`), and how a reply is read
(`replies`, `refusals`, `metadata`).
"""
