"""The layout of a step's messages: one Jinja2 template with a ``system`` and a ``human``
block, replaceable through ``RunStructure({"prompt_template": "..."})``.

The template receives ``document`` (the assembled Markdown), which is ``instructions``
(the texts of the classes, down to the step's fields) followed by ``context`` (the
``# Context`` section of known values, empty when nothing is known or when a docstring
places ``{COLLECTED_CONTEXT}`` inside the instructions), and ``fields`` (the titles of
the fields to write), ``field_names``, ``node_path`` and ``step_id``. The default asks
for structured output without repeating the schema, which the model receives natively;
`SYSTEM_INSTRUCTIONS_TEMPLATE` (``RunStructure({"instructions": "system"})``) moves the
instructions into the system message, where they are the same bytes for every call of a
step and so a prefix providers can cache. `LEAN_TEMPLATE` sends what a hand-written
prompt would: the instructions as the system message, the context as the human message,
no preamble and no request line (see docs/prompts.md, "Lean prompts").

A template is code its author runs on every step, so it runs in Jinja2's sandbox: it may
use the values it receives, never Python's internals (``__class__``, ``__globals__``).
Whatever goes wrong in it, at compile time or while rendering, is a
`StructureError` that shows the template's line.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from langtree.errors import Diagnostic, StructureError

__all__ = [
    "DEFAULT_TEMPLATE",
    "LEAN_TEMPLATE",
    "SYSTEM_INSTRUCTIONS_TEMPLATE",
    "StepTemplate",
    "template_source",
]

DEFAULT_TEMPLATE = """\
{% block system -%}
You write one part of a larger structured document. The task below describes the whole
document down to the part you write; the context holds what is already known. Write only
the requested fields, as structured output.
{%- endblock %}
{% block human -%}
{{ document }}
# Output

Write {{ fields | join(", ") }}.
{% endblock %}
"""

SYSTEM_INSTRUCTIONS_TEMPLATE = """\
{% block system -%}
You write one part of a larger structured document. The task below describes the whole
document down to the part you write; the next message holds what is already known. Write
only the requested fields, as structured output.

{{ instructions }}
{%- endblock %}
{% block human -%}
{{ context }}
# Output

Write {{ fields | join(", ") }}.
{% endblock %}
"""

LEAN_TEMPLATE = """\
{% block system -%}
{{ instructions }}
{%- endblock %}
{% block human -%}
{{ context or "Write " ~ fields | join(", ") ~ "." }}
{%- endblock %}
"""
"""The instructions alone as the system message; the context as the human message, or a
request naming the fields when nothing is known (a human message is never empty)."""


def template_source(prompt_template: str | None, instructions: str) -> str:
    """The template a structure renders: the user's, else the default for where its
    instructions go (``"human"`` or ``"system"``)."""
    if prompt_template is not None:
        return prompt_template
    return SYSTEM_INSTRUCTIONS_TEMPLATE if instructions == "system" else DEFAULT_TEMPLATE


class StepTemplate:
    """A compiled message template.

    Args:
        source: Jinja2 source defining the blocks ``system`` and ``human``.

    Raises:
        StructureError: The source does not compile or lacks a block.
    """

    def __init__(self, source: str = DEFAULT_TEMPLATE) -> None:
        self._source = source
        self._template = _compile(source)

    def render(self, values: Mapping[str, object]) -> tuple[BaseMessage, ...]:
        """The system and human messages for one step; the human message alone when the
        system block renders empty (an empty message carries nothing, and some providers
        refuse empty text).

        Raises:
            StructureError: The template fails on these values: an unknown name, an
                attribute the sandbox refuses, or any exception its code raises.
        """
        context = self._template.new_context(dict(values))
        try:
            system = "".join(self._template.blocks["system"](context)).strip()
            human = "".join(self._template.blocks["human"](context)).strip() + "\n"
        except Exception as error:  # the template is the user's code: every error is reported
            raise self._render_error(error, values) from error
        if not system:
            return (HumanMessage(content=human),)
        return (SystemMessage(content=system), HumanMessage(content=human))

    def _render_error(self, error: Exception, values: Mapping[str, object]) -> StructureError:
        if isinstance(error, SecurityError):
            hint = _SANDBOX_HINT
        else:
            hint = f"the template receives {', '.join(sorted(values))}"
        what = str(error) if isinstance(error, jinja2.TemplateError) else _described(error)
        line = _template_line(error)
        where = f" at line {line}" if line is not None else ""
        return _template_error(
            f"The prompt template fails to render{where}: {what}",
            hint=hint,
            source_line=_source_line(self._source, line),
        )


@functools.lru_cache(maxsize=8)
def _compile(source: str) -> jinja2.Template:
    environment = SandboxedEnvironment(
        autoescape=False, keep_trailing_newline=True, undefined=jinja2.StrictUndefined
    )
    try:
        template = environment.from_string(source)
    except jinja2.TemplateSyntaxError as error:
        raise _template_error(
            f"The prompt template does not compile at line {error.lineno}: {error.message}",
            hint=_SYNTAX_HINT,
            source_line=_source_line(source, error.lineno),
        ) from None
    except Exception as error:  # the template is the user's code: every error is reported
        raise _template_error(
            f"The prompt template does not compile: {_described(error)}", hint=_SYNTAX_HINT
        ) from error
    missing = {"system", "human"} - set(template.blocks)
    if missing:
        raise _template_error(f"The prompt template lacks the block(s) {sorted(missing)}")
    return template


def _template_line(error: BaseException) -> int | None:
    """The template line the innermost template frame of ``error``'s traceback ran."""
    line = None
    trace = error.__traceback__
    while trace is not None:
        template = trace.tb_frame.f_globals.get("__jinja_template__")
        if isinstance(template, jinja2.Template):
            line = template.get_corresponding_lineno(trace.tb_lineno)
        trace = trace.tb_next
    return line


def _source_line(source: str, line: int | None) -> str:
    lines = source.splitlines()
    return lines[line - 1].strip() if line is not None and 0 < line <= len(lines) else ""


def _described(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


_BLOCKS_HINT = (
    "define '{% block system %}...{% endblock %}' and '{% block human %}...{% endblock %}'; "
    "see langtree.prompts._template.DEFAULT_TEMPLATE"
)
_SYNTAX_HINT = (
    "fix the Jinja2 syntax on that line; langtree.prompts._template.DEFAULT_TEMPLATE is a "
    "template that compiles"
)
_SANDBOX_HINT = (
    "templates run in Jinja2's sandbox: use the values the template receives, not "
    "Python's internals"
)


def _template_error(
    message: str, hint: str = _BLOCKS_HINT, source_line: str = ""
) -> StructureError:
    diagnostic = Diagnostic(
        severity="error",
        message=message,
        hint=hint,
        source_line=source_line,
        length=len(source_line),
    )
    return StructureError([diagnostic])
