"""The bytes of a PNG image, as the asset tests read and send them."""

PNG = b"\x89PNG\r\n\x1a\n"
"""A PNG file's signature: enough bytes for LangTree to take the file for an image."""
