"""docs/architecture.md names the repository's folders and files as they are.

Every path the page writes in backticks exists, and every room (a package folder inside
a stage) is on the page, so that the page and the layout cannot drift apart silently.
"""

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
PAGE = ROOT / "docs" / "architecture.md"
# A backticked span that reads as a path: a folder (ends in "/") or a file with a suffix.
PATH = re.compile(r"`((?:[\w.-]+/)+|(?:[\w.-]+/)*[\w-]+\.(?:py|md|yml|toml))`")


def named_paths(text: str) -> list[str]:
    return PATH.findall(text)


def test_every_path_the_page_names_exists() -> None:
    named = named_paths(PAGE.read_text())

    missing = sorted({path for path in named if not (ROOT / path).exists()})

    assert len(named) > 50
    assert missing == []


def test_every_room_is_on_the_page() -> None:
    named = set(named_paths(PAGE.read_text()))
    rooms = sorted(
        f"{folder.relative_to(ROOT).as_posix()}/"
        for folder in (ROOT / "langtree").glob("*/*/")
        if (folder / "__init__.py").exists()
    )

    assert [room for room in rooms if room not in named] == []


def test_paths_are_told_from_other_spans() -> None:
    text = (
        "`langtree/runtime/faults/` and `langtree/_api.py`, `docs/dsl.md`, `mkdocs.yml`; "
        "not `run()/arun()`, `@each`/`@all`, `RunResult` or `--max-concurrency`"
    )

    assert named_paths(text) == [
        "langtree/runtime/faults/",
        "langtree/_api.py",
        "docs/dsl.md",
        "mkdocs.yml",
    ]
