"""The installed LangTree's version, read once for the package root, the command line's
``--version`` and the OpenTelemetry tracer's instrumentation scope."""

from importlib.metadata import PackageNotFoundError, version

__all__ = ["DISTRIBUTION", "__version__"]

DISTRIBUTION = "langtree-llm"
"""LangTree's name on the package index; the import name is ``langtree``, which another
project's distribution holds there."""

try:
    __version__ = version(DISTRIBUTION)
except PackageNotFoundError:  # imported from a source tree that is not installed
    __version__ = "0.0.0+unknown"
