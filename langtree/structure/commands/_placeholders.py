"""Runtime variables (``{name}``) and template variables in prompt texts (DESIGN D9).

``{name}`` resolves to a ``prompt`` mapping into the node, else a field of the node, else a
field of an ancestor. In a root task's own text a name that resolves nowhere is an
*external variable* the caller supplies at run time (a warning lists it); below the root it
is an error. ``{PROMPT_SUBTREE}`` and ``{COLLECTED_CONTEXT}`` stand alone on their line with
blank lines around them. Other braces (JSON examples, ``{{literal}}``) are plain text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from langtree.dsl import TEMPLATE_VARIABLES, Extraction, reserved_runtime_name
from langtree.errors import Diagnostic
from langtree.structure.commands._variables import AssemblyVariables
from langtree.structure.tree._origins import Origin
from langtree.structure.tree._registry import NodeRegistry
from langtree.structure.tree._tree import Node

__all__ = [
    "PLACEHOLDER",
    "TEMPLATE_VARIABLES",
    "Placeholder",
    "check_placeholders",
    "external_variables",
    "find_placeholders",
    "placeholder_diagnostic",
]

PLACEHOLDER = re.compile(
    r"\{\{(?P<escaped>[A-Za-z_][A-Za-z0-9_]*)\}\}"
    r"|(?<!\{)\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}(?!\})"
)
"""The one pattern of ``{name}``, which every stage that reads placeholders uses: a
placeholder ``{name}`` (group ``name``), or ``{{name}}`` (group ``escaped``), the
literal text ``{name}``. Any other brace is text: a JSON example, ``{a.b}``,
``{{"a": 1}}``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Placeholder:
    """A ``{name}`` in a text: its name and where it stands (line of the text, column)."""

    name: str
    line: int
    column: int


def find_placeholders(text: str) -> list[Placeholder]:
    """Every ``{name}`` in a text; doubled braces and other brace text are not placeholders.

    Examples:
        >>> [p.name for p in find_placeholders('Hi {name}! JSON: {"a": 1}, literal {{x}}')]
        ['name']
    """
    found: list[Placeholder] = []
    for number, line in enumerate(text.split("\n"), start=1):
        found.extend(
            Placeholder(name=match["name"], line=number, column=match.start() + 1)
            for match in PLACEHOLDER.finditer(line)
            if match["name"] is not None
        )
    return found


def check_placeholders(
    registry: NodeRegistry,
    prompt_variables: Mapping[str, set[str]],
    variables: AssemblyVariables | None = None,
) -> Iterator[Diagnostic]:
    """Check every placeholder of every node's texts.

    Args:
        registry: The nodes.
        prompt_variables: For each node tag, the names that ``prompt`` mappings make
            resolvable in it (numbered names included).
        variables: The assembly variables, to say so when a ``{name}`` names one.
    """
    for node in registry:
        checker = _NodeChecker(registry, node, prompt_variables.get(node.tag, set()), variables)
        yield from checker.check(node.extraction, node.origin, docstring=True)
        for node_field in node.fields:
            yield from checker.check(node_field.extraction, node_field.origin, docstring=False)


class _NodeChecker:
    def __init__(
        self,
        registry: NodeRegistry,
        node: Node,
        prompt_names: set[str],
        variables: AssemblyVariables | None,
    ) -> None:
        self.node = node
        self.names = prompt_names | _field_names_up(registry, node)
        self.variables = variables

    def check(
        self, extraction: Extraction, origin: Origin, *, docstring: bool
    ) -> Iterator[Diagnostic]:
        lines = extraction.text.split("\n")
        seen: set[str] = set()
        for placeholder in find_placeholders(extraction.text):
            problem = self._problem(placeholder, lines, docstring=docstring)
            if problem is None and placeholder.name in TEMPLATE_VARIABLES:
                problem = _repeated(placeholder.name, seen)
            if problem is not None:
                message, hint, warning = problem
                yield placeholder_diagnostic(
                    extraction, origin, placeholder, message, hint, warning=warning
                )

    def _problem(
        self, placeholder: Placeholder, lines: list[str], *, docstring: bool
    ) -> tuple[str, str, bool] | None:
        name = placeholder.name
        if name in TEMPLATE_VARIABLES:
            return _template_problem(name, lines, placeholder.line, docstring=docstring)
        reserved = reserved_runtime_name(name)
        if reserved is not None:
            hint = (
                "rename the variable without a double underscore"
                if "__" in name
                else "use a lower-case name, or {PROMPT_SUBTREE} / {COLLECTED_CONTEXT}"
            )
            return f"Runtime variable {{{name}}} {reserved}", hint, False
        if name in self.names:
            return None
        if self._assembly(name):
            return (
                f"{{{name}}} names the assembly variable {name!r}; assembly variables "
                "configure commands and are not prompt text",
                f"give the node a field with a default, e.g. '{name}: str = ...', or map a "
                f"value into it with 'prompt.{name}=...'",
                False,
            )
        if self.is_external(name):
            return (
                f"{{{name}}} is an external variable: supply it at run time",
                f"pass variables={{'{name}': ...}} to run() or prompts()",
                True,
            )
        return (
            f"Runtime variable {{{name}}} resolves to nothing in {self.node.tag!r}",
            f"add a field {name!r}, map a value into it with 'prompt.{name}=...', or write "
            "the literal braces as {{" + name + "}}",
            False,
        )

    def is_external(self, name: str) -> bool:
        """Whether ``{name}`` in the node's texts is an external variable: a name that
        resolves to nothing in a root task's texts, for the caller to supply."""
        return (
            self.node.parent is None
            and name not in TEMPLATE_VARIABLES
            and reserved_runtime_name(name) is None
            and name not in self.names
            and not self._assembly(name)
        )

    def _assembly(self, name: str) -> bool:
        return self.variables is not None and self.variables.lookup(self.node.tag, name) is not None


def external_variables(
    registry: NodeRegistry,
    prompt_variables: Mapping[str, set[str]],
    variables: AssemblyVariables | None = None,
) -> set[str]:
    """The names of the external variables the root tasks' texts use (each of which
    `check_placeholders` warns about).

    Args:
        registry: The nodes.
        prompt_variables: For each node tag, the names that ``prompt`` mappings make
            resolvable in it (numbered names included).
        variables: The assembly variables (a ``{name}`` naming one is an error, not an
            external variable).
    """
    names: set[str] = set()
    for node in registry:
        if node.parent is None:
            checker = _NodeChecker(registry, node, prompt_variables.get(node.tag, set()), variables)
            for extraction in (node.extraction, *(f.extraction for f in node.fields)):
                found = find_placeholders(extraction.text)
                names.update(p.name for p in found if checker.is_external(p.name))
    return names


def _repeated(name: str, seen: set[str]) -> tuple[str, str, bool] | None:
    """A template variable that stands a second time in the same text."""
    if name not in seen:
        seen.add(name)
        return None
    return (
        f"{{{name}}} stands more than once in this docstring",
        f"keep one {{{name}}}: the content goes where the first one stands",
        False,
    )


def _template_problem(
    name: str, lines: list[str], line: int, *, docstring: bool
) -> tuple[str, str, bool] | None:
    if not docstring:
        return (
            f"{{{name}}} belongs in a class docstring, not in a field's description",
            "move it to the docstring",
            False,
        )
    alone = lines[line - 1].strip() == f"{{{name}}}"
    blank_before = line == 1 or not lines[line - 2].strip()
    blank_after = line == len(lines) or not lines[line].strip()
    if alone and blank_before and blank_after:
        return None
    return (
        f"{{{name}}} must stand alone on its line, with a blank line before and after it",
        f"write it as a paragraph of its own: 'text\\n\\n{{{name}}}\\n\\nmore text'",
        False,
    )


def _field_names_up(registry: NodeRegistry, node: Node) -> set[str]:
    names: set[str] = set()
    current: Node | None = node
    while current is not None:
        names.update(f.name for f in current.fields)
        current = registry.get(current.parent) if current.parent else None
    return names


def placeholder_diagnostic(
    extraction: Extraction,
    origin: Origin,
    placeholder: Placeholder,
    message: str,
    hint: str,
    *,
    warning: bool = False,
) -> Diagnostic:
    """A diagnostic that marks ``placeholder`` in the source line of its text."""
    text_line = extraction.line_map[placeholder.line - 1] if extraction.line_map else 1
    source_line = extraction.source_lines[text_line - 1] if extraction.source_lines else ""
    prompt_line = extraction.text.split("\n")[placeholder.line - 1]
    column = placeholder.column + _indent(source_line) - _indent(prompt_line)
    return origin.diagnostic(
        message,
        hint=hint,
        text_line=text_line,
        column=column,
        source_line=source_line,
        length=len(placeholder.name) + 2,
        warning=warning,
    )


def _indent(line: str) -> int:
    """How many blank characters a line starts with (dedenting removes only those)."""
    return len(line) - len(line.lstrip())
