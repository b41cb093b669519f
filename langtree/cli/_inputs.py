"""Reading a run's inputs (``--input``) and external variables (``--var``).

A file a user names is read as `langtree._local_files` reads one: only a regular file
(a folder, a named pipe or a device is refused without waiting), and only up to
`MAX_INPUT_BYTES`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from langtree import RunStructure
from langtree._local_files import (
    FileMissing,
    FileRefusal,
    FileTooLarge,
    FileUnreadable,
    NotAFile,
    read_regular,
)
from langtree.dsl import suggest
from langtree.errors import LangTreeError
from langtree.structure import NodeField, render_type, task_tag

MAX_INPUT_DEPTH = 100
"""The most levels of objects and arrays ``--input`` may nest (deeper values would exhaust
Python's recursion limit in the libraries that copy and serialise them)."""

MAX_INPUT_BYTES = 100 * 1024 * 1024
"""The largest ``--input`` or ``--config`` JSON file, and the longest line of a dataset,
read: 100 MiB, as for the runs ``langtree show`` reads. No model takes as much in one
request, so a larger file is a wrong path, or content that belongs in an asset's file."""

MAX_INPUT_MIB = MAX_INPUT_BYTES // (1024 * 1024)
"""`MAX_INPUT_BYTES` in MiB, for the messages."""

LARGE_INPUTS_HINT = (
    "give large content as an Asset's path (read from asset_folders), not inline: no model "
    f"takes {MAX_INPUT_MIB} MiB in one request"
)
"""How to fix inputs (a file or a row) larger than `MAX_INPUT_BYTES`."""

TOO_DEEP = (
    f"its values are nested more than {MAX_INPUT_DEPTH} levels deep\n"
    "  hint: inputs are task values: objects and arrays a few levels deep"
)


def read_inputs(
    path: Path | None, structure: RunStructure, task_name: str, *, unwrap: bool = False
) -> dict[object, object]:
    """The inputs by task; with ``task_name``, the file holds that task's values.

    With ``unwrap``, a file keyed by the task's class name or tag gives that entry.
    """
    if task_name and task_tag(task_name) not in structure.tasks:
        found = ", ".join(cls.__name__ for cls in structure.tasks.values()) or "none"
        raise LangTreeError(f"No task {task_name!r} found; the tasks are {found}")
    if path is None:
        return {}
    values = json_object(path, "inputs", _inputs_hint(structure, task_name))
    if not task_name:
        return values
    tag = task_tag(task_name)
    if unwrap:
        for key in (task_name, tag):
            if key in values:
                return {tag: values[key]}
    return {tag: values}


def require_inputs(
    structure: RunStructure, inputs: dict[object, object], task_name: str, path: Path | None
) -> None:
    """Refuse a run whose tasks need inputs that ``inputs`` (read from ``path``) lack.

    With ``task_name``, only that task runs, and the file holds its own values.

    Raises:
        LangTreeError: Naming each missing field with its type, and how to give it.
    """
    missing = structure.missing_inputs(inputs)
    if task_name:
        missing = {tag: fields for tag, fields in missing.items() if tag == task_tag(task_name)}
    if not missing:
        return
    lines = [
        f"  - {structure.tasks[tag].__name__}.{node_field.name}: "
        f"{render_type(node_field.annotation)}"
        for tag, fields in missing.items()
        for node_field in fields
    ]
    example = _missing_example(structure, missing, by_task=not task_name)
    how = "pass them with --input FILE.json" if path is None else f"add them to {str(path)!r}"
    raise LangTreeError(
        "Missing input(s): no step generates them and nothing else gives them a value\n"
        + "\n".join(lines)
        + f"\n  hint: {how}, e.g. {example}"
    )


def _missing_example(
    structure: RunStructure, missing: dict[str, tuple[NodeField, ...]], *, by_task: bool
) -> str:
    """The missing fields as the JSON an input file holds, ``"..."`` for each value."""
    values = {
        structure.tasks[tag].__name__: {node_field.name: "..." for node_field in fields}
        for tag, fields in missing.items()
    }
    return json.dumps(values if by_task else next(iter(values.values())))


def _inputs_hint(structure: RunStructure, task_name: str) -> str:
    if task_name:
        return f'write {task_name}\'s own values, e.g. {{"field": "value"}}'
    names = [cls.__name__ for cls in structure.tasks.values()] or ["TaskName"]
    return f'write the values by task, e.g. {{"{names[0]}": {{"field": "value"}}}}'


def json_object(
    path: Path, subject: str, hint: str, *, large_hint: str = LARGE_INPUTS_HINT
) -> dict[object, object]:
    """The JSON object ``path`` holds (UTF-8, with or without a byte order mark).

    Args:
        path: The file.
        subject: What the file holds, for the messages (``"inputs"``).
        hint: How to write the object, for a file that holds something else.
        large_hint: How to fix a file larger than `MAX_INPUT_BYTES`.

    Raises:
        LangTreeError: The file is missing, is not a regular file, holds more than
            `MAX_INPUT_BYTES`, cannot be read, is not UTF-8 JSON, nests values more than
            ``MAX_INPUT_DEPTH`` levels deep, or holds something other than an object.
    """
    cannot = f"Cannot read {subject} from {str(path)!r}"
    data = read_regular(path, MAX_INPUT_BYTES)
    if not isinstance(data, bytes):
        raise LangTreeError(f"{cannot}: {refusal_text(data, subject, large_hint=large_hint)}")
    values = json_value(utf8_text(data, cannot), cannot)
    if not isinstance(values, dict):
        raise LangTreeError(
            f"{subject[:1].upper()}{subject[1:]} in {str(path)!r} must be a JSON object, "
            f"not {_json_kind(values)}\n  hint: {hint}"
        )
    return values


def refusal_text(refusal: FileRefusal, subject: str, *, large_hint: str = LARGE_INPUTS_HINT) -> str:
    """Why a file of ``subject`` (``"inputs"``) is not read, and the hint, to follow
    ``Cannot read inputs from 'path': ``."""
    match refusal:
        case FileMissing():
            return (
                "there is no such file\n"
                "  hint: check the path (a relative one starts from the working folder)"
            )
        case NotAFile(kind="a folder"):
            return (
                "it is a folder, not a file\n"
                "  hint: give the path of a file in it, not of the folder"
            )
        case NotAFile(kind=kind):
            return (
                f"it is {kind}, not a file\n  hint: save the {subject} to a file and give its "
                "path: langtree reads them only from a regular file (a pipe or a device may "
                "block or never end)"
            )
        case FileTooLarge(size=None):
            return (
                f"it holds more than the {MAX_INPUT_BYTES:,} bytes ({MAX_INPUT_MIB} MiB) that "
                f"langtree reads\n  hint: {large_hint}"
            )
        case FileTooLarge(size=size):
            return (
                f"it holds {size:,} bytes, more than the {MAX_INPUT_BYTES:,} ({MAX_INPUT_MIB} "
                f"MiB) that langtree reads\n  hint: {large_hint}"
            )
        case FileUnreadable(error=error):
            return f"{error.strerror or error}\n  hint: check that this process may read the file"


def utf8_text(data: bytes, cannot: str, *, first: bool = True) -> str:
    """The text of UTF-8 ``data``, without the byte order mark that may begin a file
    (``first``: the data begins the file).

    Raises:
        LangTreeError: ``cannot: why``: the data is not UTF-8.
    """
    try:
        return data.decode("utf-8-sig" if first else "utf-8")
    except UnicodeDecodeError as error:
        raise LangTreeError(
            f"{cannot}: it is not UTF-8 text (byte {error.object[error.start]:#04x} at "
            f"position {error.start})\n  hint: save the file as UTF-8"
        ) from None


def json_value(text: str, cannot: str) -> object:
    """The value JSON ``text`` holds.

    Raises:
        LangTreeError: ``cannot: why``: the text is not JSON, or nests values more than
            ``MAX_INPUT_DEPTH`` levels deep.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise LangTreeError(f"{cannot}: {error}") from None
    except RecursionError:
        raise LangTreeError(f"{cannot}: {TOO_DEEP}") from None
    if _deeper_than(value, MAX_INPUT_DEPTH):
        raise LangTreeError(f"{cannot}: {TOO_DEEP}")
    return value


def _deeper_than(value: object, levels: int) -> bool:
    """Whether ``value`` nests objects and arrays more than ``levels`` deep (no recursion)."""
    pending = [(value, 1)]
    while pending:
        item, level = pending.pop()
        children = list(item.values()) if isinstance(item, dict) else item
        if isinstance(children, list):
            if level > levels:
                return True
            pending.extend((child, level + 1) for child in children)
    return False


def _json_kind(value: object) -> str:
    kinds = {list: "an array", str: "a string", bool: "true or false", int: "a number"}
    return kinds.get(type(value), "a number" if isinstance(value, float) else "null")


def add_variables_option(command: argparse.ArgumentParser) -> None:
    """Give ``command`` the ``--var NAME=VALUE`` option (`variables_from()` reads it)."""
    command.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an external prompt variable (repeatable)",
    )


def variables_from(pairs: list[str]) -> dict[str, object]:
    """The external variables that the ``--var NAME=VALUE`` options give.

    Raises:
        LangTreeError: An option is not ``NAME=VALUE``, or gives a variable a second,
            different value (one of the two would go unused, unsaid).
    """
    variables: dict[str, object] = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals:
            raise LangTreeError(f"--var takes NAME=VALUE, got {pair!r}")
        if variables.get(name, value) != value:
            raise LangTreeError(
                f"--var {name!r} is given twice, as {variables[name]!r} and as {value!r}\n"
                "  hint: give each variable once"
            )
        variables[name] = value
    return variables


def warn_unused_variables(structure: RunStructure, variables: Mapping[str, object]) -> None:
    """Say on standard error which ``--var`` no task's text uses (its value would reach
    no prompt), and the closest variable that one does use."""
    used = structure.external_variables()
    listed = ", ".join(repr(name) for name in used)
    others = (
        f"the tasks' external variables are {listed}"
        if used
        else "the tasks use no external variable"
    )
    for name in variables:
        if name not in used:
            print(
                f"langtree: warning: --var {name!r}: no task's text uses {{{name}}}; "
                f"{suggest(name, used, fallback=others)}",
                file=sys.stderr,
            )
