"""``--config SPEC``: the settings ``RunStructure(config)`` takes, from a file or a module.

SPEC is a ``.json`` file holding one object, the settings by name, or
``module:attribute`` naming a dict of them (or a ``TypeMappingConfig`` or a
``StructureConfig``) in an importable module or a ``.py`` file, as ``--model`` names a
provider: ``CONFIG = {"outline": "root", "prompt_template": LEAN_TEMPLATE}``. The settings
are checked as ``RunStructure`` checks them, before the tree is loaded.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from langtree import RunStructure
from langtree.cli._inputs import json_object
from langtree.cli._named import named_object
from langtree.errors import LangTreeError, StructureError
from langtree.structure import ConfigInput, StructureConfig, TypeMappingConfig

EXAMPLE = '{"outline": "root", "token_budget": 4000}'
"""Settings as a ``--config`` file holds them, for the hints."""


def add_config_option(command: argparse.ArgumentParser, *, run: bool = False) -> None:
    """Give ``command`` the ``--config SPEC`` option (``run``: say that its run settings
    give way to the command's own)."""
    overridden = "; the run settings below override its run settings" if run else ""
    command.add_argument(
        "--config",
        metavar="SPEC",
        help="the settings of RunStructure(config) by name (outline, field_descriptions, "
        "instructions, prompt_template, token_budget, default_modifier, ...): a .json file "
        f"holding them as one object, or module:attribute naming a dict of them{overridden}",
    )


def read_config(spec: str | None) -> ConfigInput:
    """The settings that ``--config`` names, checked (``None`` without ``--config``).

    Raises:
        LangTreeError: The file cannot be read or is not a JSON object, the module does
            not import or lacks the attribute, or ``RunStructure`` refuses the settings
            (each problem is listed, prefixed with ``--config SPEC``).
    """
    if spec is None:
        return None
    if spec.lstrip().startswith("{"):
        # JSON written on the command line: read as module:attribute, it would be refused
        # as a module that does not import.
        raise LangTreeError(
            "--config takes a .json file or module:attribute, not the settings themselves: "
            f"{spec!r}\n  hint: write them to a file and give its path, e.g. --config "
            "settings.json"
        )
    config = _file_config(Path(spec)) if spec.lower().endswith(".json") else _named_config(spec)
    _check_settings(spec, config)
    return config


def _file_config(path: Path) -> Mapping[str, object]:
    values = json_object(
        path,
        "--config settings",
        f"write the settings by name, e.g. {EXAMPLE}",
        large_hint="give --config the file of the settings, which take a few lines",
    )
    return {str(key): value for key, value in values.items()}


def _named_config(spec: str) -> ConfigInput:
    found = named_object(
        "--config",
        spec,
        malformed=f"--config takes a .json file or module:attribute, got {spec!r}\n"
        "  hint: e.g. --config settings.json, or --config my_settings:CONFIG (a dict of "
        "RunStructure's settings)",
    )
    if not isinstance(found, Mapping | TypeMappingConfig | StructureConfig):
        raise LangTreeError(
            f"--config {spec!r} is a {type(found).__name__!r}, not a dict of settings\n"
            f"  hint: name a dict of RunStructure's settings, e.g. CONFIG = {EXAMPLE}"
        )
    return found


def _check_settings(spec: str, config: ConfigInput) -> None:
    try:
        RunStructure(config)
    except StructureError as error:
        problems = "\n".join(
            f"--config {spec!r}: {diagnostic.render()}" for diagnostic in error.diagnostics
        )
        raise LangTreeError(
            f"--config {spec!r}: RunStructure(config) refuses these settings:\n{problems}"
        ) from None
