"""The text a model receives is made in one stage: the prompts stage.

The runtime asks `langtree.prompts` for every text it sends (the retry feedback, the
output schema's descriptions, JSON mode's form) and reads no prompt text itself, so it
compiles no regular expression but those over text no model receives. And ``{name}`` is
recognised by one pattern, `langtree.structure.commands._placeholders.PLACEHOLDER`, which every
stage that reads placeholders imports.
"""

import ast
import importlib
import pkgutil
import re
from pathlib import Path, PurePosixPath

import langtree
from langtree.structure.commands._placeholders import PLACEHOLDER

PACKAGE = Path(langtree.__file__).parent
RUNTIME = PACKAGE / "runtime"

REGEX_USERS = {
    PurePosixPath("_json_view.py"): "instance paths (task.shop.reviews[0]) of the run's values",
    PurePosixPath("page/_tree.py"): "the numbers in instance paths, to sort them as numbers",
    PurePosixPath("_progress_bar.py"): "terminal colour codes in the progress line",
    PurePosixPath("_refusals.py"): "a provider's error message, which says it refused an input",
}
"""The runtime modules that use ``re``, each over text no model receives, and why."""


def imports_re(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import) and any(alias.name == "re" for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "re":
            return True
    return False


def allowed(path: Path) -> bool:
    """Whether ``path`` ends with an allowed module's path (wherever its folder moves)."""
    return any(path.parts[-len(entry.parts) :] == entry.parts for entry in REGEX_USERS)


def test_the_runtime_uses_regular_expressions_only_on_text_no_model_receives() -> None:
    users = sorted(
        str(path.relative_to(RUNTIME)) for path in RUNTIME.rglob("*.py") if imports_re(path)
    )

    assert [user for user in users if not allowed(RUNTIME / user)] == []
    assert len(users) == len(REGEX_USERS), f"an allowed module no longer uses re: {users}"


def module_patterns() -> list[tuple[str, re.Pattern[str]]]:
    """The compiled patterns the package's modules hold (alone or in a table), with the
    name each module holds it under."""
    found = []
    for info in pkgutil.walk_packages(langtree.__path__, "langtree."):
        if info.name.rpartition(".")[2] == "__main__":  # running it would start the CLI
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            values = value.values() if isinstance(value, dict) else (value,)
            found += [
                (f"{info.name}.{name}", pattern)
                for pattern in values
                if isinstance(pattern, re.Pattern) and isinstance(pattern.pattern, str)
            ]
    return found


def inline_patterns() -> list[tuple[str, str]]:
    """The literal patterns passed to ``re`` functions anywhere in the package, with the
    module that passes each."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found.append((str(path.relative_to(PACKAGE)), node.args[0].value))
    return found


def reads_a_placeholder(pattern: str | re.Pattern[str]) -> bool:
    match = re.search(pattern, "Write about {topic}.")
    return match is not None and match.group(0) == "{topic}"


def test_one_pattern_reads_placeholders() -> None:
    compiled = [(where, p) for where, p in module_patterns() if reads_a_placeholder(p)]
    inline = [where for where, pattern in inline_patterns() if reads_a_placeholder(pattern)]

    others = [where for where, pattern in compiled if pattern is not PLACEHOLDER]
    assert others == []
    assert "langtree.structure.commands._placeholders.PLACEHOLDER" in [
        where for where, _ in compiled
    ]
    assert inline == ["structure/commands/_placeholders.py"]
