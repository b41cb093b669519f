"""A run setting is declared once, by `RunSettings`; what repeats it must agree with it.

`RunOptions` (the keyword options of ``run``, ``arun``, ``run_many``, ``build``...) is a
``TypedDict`` that type checkers read, so it is spelled out: it must name the same
settings, in the same order, with types that take what the settings hold (and the dicts
some settings are converted from). Each setting's description is the first clause of
its entry in `RunSettings`' docstring; the entries of `RunOptions` and the help of the
command line's flags start with it. Every setting has a flag of ``langtree run`` or is
one that only ``--config`` gives, with the reason. The docstrings of the methods that
take the options name no setting that does not exist, and point to `RunOptions`.
"""

import argparse
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest

from langtree._api import RunStructure
from langtree.cli import _flags as flags
from langtree.cli._flags import RUN_FLAGS, RunFlag, add_run_flags, run_options
from langtree.ray import run_on_ray
from langtree.runtime._settings import DICT_SETTINGS, RUN_SETTING_KEYS, RunOptions, RunSettings

SETTINGS = [item.name for item in fields(RunSettings)]
SETTING_TYPES = typing.get_type_hints(RunSettings)
OPTION_TYPES = typing.get_type_hints(RunOptions)


def section(doc: str | None, title: str) -> dict[str, str]:
    """The entries of a Google-style docstring section (``Args:``, ``Attributes:``) by
    name, each entry's lines joined by spaces."""
    lines = inspect.cleandoc(doc or "").splitlines()
    entries: dict[str, str] = {}
    name = ""
    for line in lines[lines.index(f"{title}:") + 1 :]:
        if line and not line.startswith(" "):
            break
        if line.startswith("    ") and not line.startswith("     "):
            name, _, text = line.strip().partition(": ")
            entries[name] = text
        elif line.strip():
            entries[name] += " " + line.strip()
    return entries


def description(entry: str) -> str:
    """An entry's description: its first clause, before a parenthesis, a semicolon or
    the end of its first sentence."""
    match = re.match(r"(.+?)(?: \(|;|\.\s|\.$)", entry)
    assert match is not None, entry
    return match.group(1)


def members(kind: object) -> set[object]:
    """The types a union is made of (a type that is no union: itself)."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return {member for arg in typing.get_args(kind) for member in members(arg)}
    return {kind}


def described(setting: str) -> str:
    """The description of a setting (``"max_concurrency"``), or of a setting of one that
    holds several (``"usage_limits.calls"``), by its holder's docstring."""
    name, _, part = setting.partition(".")
    if not part:
        return description(section(RunSettings.__doc__, "Attributes")[name])
    holders = [
        kind
        for kind in members(SETTING_TYPES[name])
        if isinstance(kind, type) and is_dataclass(kind) and part in {f.name for f in fields(kind)}
    ]
    assert len(holders) == 1, setting
    return description(section(holders[0].__doc__, "Attributes")[part])


def run_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_run_flags(parser)
    return parser


def flag_settings() -> dict[str, str]:
    """Each flag of ``langtree run`` that gives a setting, with that setting: a flag of
    `RUN_FLAGS`, or one whose value is stored under a setting's name (``--journal``)."""
    by_dest = {flag.dest: flag.setting for flag in RUN_FLAGS}
    found = {}
    for action in run_parser()._actions:
        setting = by_dest.get(action.dest, action.dest)
        if setting.partition(".")[0] in RUN_SETTING_KEYS:
            found[action.option_strings[0]] = setting
    return found


# -- RunOptions ------------------------------------------------------------------------


def test_options_name_the_settings_in_their_order() -> None:
    assert list(OPTION_TYPES) == SETTINGS


@pytest.mark.parametrize("setting", SETTINGS)
def test_option_takes_what_the_setting_holds(setting: str) -> None:
    # An option given as None keeps the config's setting (RunSettings.updated), so the
    # options do not offer it: leaving the key out says the same.
    held = members(SETTING_TYPES[setting]) - {type(None)}
    converted = {Mapping[str, object]} if setting in DICT_SETTINGS else set()

    assert members(OPTION_TYPES[setting]) == held | converted


def test_options_document_every_setting_in_its_words() -> None:
    settings = section(RunSettings.__doc__, "Attributes")
    options = section(RunOptions.__doc__, "Attributes")

    assert list(settings) == SETTINGS
    assert {name: description(text) for name, text in options.items()} == {
        name: description(text) for name, text in settings.items()
    }


@pytest.mark.parametrize("setting", SETTINGS)
def test_options_say_the_defaults_the_settings_hold(setting: str) -> None:
    # "(default 16)": a figure the entry says as the setting holds it.
    said = re.findall(r"\(default (\d+)\)", section(RunOptions.__doc__, "Attributes")[setting])

    assert said in ([], [str(getattr(RunSettings(), setting))])


# -- the command line ------------------------------------------------------------------


@pytest.mark.parametrize("flag", list(flag_settings()))
def test_flag_help_starts_with_its_setting_s_description(flag: str) -> None:
    action = next(item for item in run_parser()._actions if flag in item.option_strings)
    words = described(flag_settings()[flag])

    assert action.help is not None
    assert action.help.startswith(words[0].lower() + words[1:]), action.help


def test_every_setting_has_a_flag_or_is_given_only_in_config() -> None:
    with_flags = {setting.partition(".")[0] for setting in flag_settings().values()}
    config_only = set(flags.CONFIG_ONLY_SETTINGS)

    assert with_flags & config_only == set()
    assert sorted(with_flags | config_only) == sorted(RUN_SETTING_KEYS)
    assert all(reason.strip() for reason in flags.CONFIG_ONLY_SETTINGS.values())


@pytest.mark.parametrize("flag", RUN_FLAGS, ids=lambda flag: flag.flag)
def test_flag_reaches_its_setting(flag: RunFlag, tmp_path: Path) -> None:
    # --journal and --cache, for the ages of their answers.
    given = ["--journal", str(tmp_path / "j.sqlite"), "--cache", str(tmp_path / "c.sqlite")]
    arguments = run_parser().parse_args([*given, flag.flag, flag.example])

    options = run_options(arguments, RunSettings())

    name, _, part = flag.setting.partition(".")
    value = options[name]  # type: ignore[literal-required]
    assert (getattr(value, part) if part else value) == flag.kind(flag.example)


# -- the docstrings of what takes the options --------------------------------------------


def takes_options(function: Callable[..., object]) -> bool:
    return any(
        parameter.kind is inspect.Parameter.VAR_KEYWORD
        and "Unpack[RunOptions]" in str(parameter.annotation)
        for parameter in inspect.signature(function).parameters.values()
    )


TAKERS = [
    *(
        function
        for _, function in inspect.getmembers(RunStructure, inspect.isfunction)
        if takes_options(function)
    ),
    run_on_ray,
]
DOCUMENTED = [
    (f"{function.__qualname__}(**options)", section(function.__doc__, "Args")["**options"])
    for function in TAKERS
    if "Args:" in (function.__doc__ or "")
] + [("RunStructure(config)", section(RunStructure.__doc__, "Args")["config"])]


def test_takers_are_found() -> None:
    names = sorted(function.__name__ for function in TAKERS)

    assert names == [
        "arun",
        "arun_many",
        "astream",
        "build",
        "run",
        "run_many",
        "run_on_ray",
        "stream",
    ]


@pytest.mark.parametrize(("where", "entry"), DOCUMENTED, ids=[where for where, _ in DOCUMENTED])
def test_options_entry_names_only_settings(where: str, entry: str) -> None:
    # A name in double backticks, alone or given a value (``max_concurrency=8``).
    named = re.findall(r"``([a-z_][a-z0-9_]*)(?:=[^`]*)?``", entry)

    assert "`RunOptions`" in entry
    assert [name for name in named if name not in RUN_SETTING_KEYS] == []
