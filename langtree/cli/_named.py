"""Objects an option names as ``module:attribute`` (``--model``, ``--config``)."""

from __future__ import annotations

from types import ModuleType

from langtree.errors import LangTreeError, StructureError
from langtree.structure import load_modules


def named_object(option: str, spec: str, *, malformed: str) -> object:
    """The attribute that ``spec`` (``module:attribute``, the value of ``option``) names.

    The module is a dotted module name or a ``.py`` file, imported as ``langtree check``
    imports one; the attribute follows the last colon.

    Args:
        option: The option, as the user typed it (``"--model"``), for the messages.
        spec: The option's value.
        malformed: The message when ``spec`` is not ``module:attribute``.

    Raises:
        LangTreeError: ``spec`` is malformed, the module does not import, or it has no
            such attribute (or its value is ``None``).
    """
    module_name, colon, attribute = spec.rpartition(":")
    if not colon or not module_name or not attribute:
        raise LangTreeError(malformed)
    modules = _imported(option, spec, module_name)
    found = getattr(modules[0], attribute, None) if len(modules) == 1 else None
    if found is None:
        raise LangTreeError(f"{option} {spec!r}: {module_name!r} has no attribute {attribute!r}")
    return found


def _imported(option: str, spec: str, module_name: str) -> list[ModuleType]:
    """The modules of ``module_name``; a failed import is reported as ``option``'s."""
    try:
        return load_modules(module_name)
    except StructureError as error:
        rendered = "\n".join(diagnostic.render_compiler() for diagnostic in error.diagnostics)
        raise LangTreeError(
            f"{option} {spec!r}: cannot import {module_name!r}:\n{rendered}"
        ) from None
    except LangTreeError as error:
        raise LangTreeError(f"{option} {spec!r}: cannot import {module_name!r}: {error}") from None
