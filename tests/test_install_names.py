"""Every install line LangTree shows its users names its distribution on the package
index, as ``pyproject.toml`` declares it, with extras that it defines.

The import name and the command are ``langtree``; the distribution is not, because
``langtree`` on the index is another project (README, "Installing"). A ``pip install``
of LangTree anywhere in the README, the docs, the code's hints or the tests must install
LangTree.
"""

import re
import tomllib
from pathlib import Path

from langtree._version import DISTRIBUTION

ROOT = Path(__file__).parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# `pip install langtree...`, `pip install 'langtree...[extra]'`, or a requirement string
# such as Ray's runtime_env `"pip": ["langtree...[ray]"]`: the name and its extras.
INSTALL = re.compile(r"""pip install ['"]?(langtree[\w.-]*)(?:\[([\w,]+)\])?""")
REQUIREMENT = re.compile(r"""["'](langtree[\w.-]*)\[([\w,]+)\]["']""")


def shown_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for folder in ("langtree", "tests", "benchmarks", "examples"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return [path for path in files if path != Path(__file__)]  # this file shows patterns


def install_lines() -> list[tuple[str, str, list[str]]]:
    """Where each install of LangTree is shown, the name it installs and its extras."""
    found = []
    for path in shown_files():
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            for match in [*INSTALL.finditer(line), *REQUIREMENT.finditer(line)]:
                extras = match.group(2).split(",") if match.group(2) else []
                where = f"{path.relative_to(ROOT)}:{number}"
                found.append((where, match.group(1), extras))
    return found


def test_the_distribution_is_not_named_as_the_import() -> None:
    assert PROJECT["name"] == DISTRIBUTION == "langtree-llm"
    assert PROJECT["scripts"] == {"langtree": "langtree.cli:main"}


def test_the_readme_first_install_line_installs_the_distribution() -> None:
    readme = (ROOT / "README.md").read_text()

    assert "\npip install langtree-llm " in readme


def test_every_install_line_names_the_distribution_and_an_extra_it_defines() -> None:
    lines = install_lines()
    wrong = [
        f"{where}: {name}[{','.join(extras)}]"
        for where, name, extras in lines
        if name != PROJECT["name"] or not set(extras) <= set(PROJECT["optional-dependencies"])
    ]

    # The files hold install lines for the base package and for its extras.
    assert {len(extras) > 0 for _, _, extras in lines} == {True, False}
    assert wrong == []
