"""The layout of a step's messages: one Jinja2 template with a ``system`` and a ``human``
block, replaceable through ``RunStructure({"prompt_template": "..."})``.

The template receives ``document`` (the assembled Markdown), ``fields`` (the titles of
the fields to write), ``field_names``, ``node_path`` and ``step_id``. The default asks for
structured output without repeating the schema, which the model receives natively.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import jinja2
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from langtree.errors import Diagnostic, StructureError

__all__ = ["DEFAULT_TEMPLATE", "StepTemplate"]

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


class StepTemplate:
    """A compiled message template.

    Args:
        source: Jinja2 source defining the blocks ``system`` and ``human``.

    Raises:
        StructureError: The source does not compile or lacks a block.
    """

    def __init__(self, source: str = DEFAULT_TEMPLATE) -> None:
        self._template = _compile(source)

    def render(self, values: Mapping[str, object]) -> tuple[BaseMessage, ...]:
        """The system and human messages for one step.

        Raises:
            StructureError: The template fails on these values (an unknown name, a
                filter that does not apply).
        """
        context = self._template.new_context(dict(values))
        try:
            system = "".join(self._template.blocks["system"](context)).strip()
            human = "".join(self._template.blocks["human"](context)).strip() + "\n"
        except jinja2.TemplateError as error:
            names = ", ".join(sorted(values))
            raise _template_error(
                f"The prompt template fails to render: {error}",
                hint=f"the template receives {names}",
            ) from None
        return (SystemMessage(content=system), HumanMessage(content=human))


@functools.lru_cache(maxsize=8)
def _compile(source: str) -> jinja2.Template:
    environment = jinja2.Environment(
        autoescape=False, keep_trailing_newline=True, undefined=jinja2.StrictUndefined
    )
    try:
        template = environment.from_string(source)
    except jinja2.TemplateSyntaxError as error:
        raise _template_error(f"The prompt template does not compile: {error.message}") from None
    missing = {"system", "human"} - set(template.blocks)
    if missing:
        raise _template_error(f"The prompt template lacks the block(s) {sorted(missing)}")
    return template


_BLOCKS_HINT = (
    "define '{% block system %}...{% endblock %}' and '{% block human %}...{% endblock %}'; "
    "see langtree.prompts.template.DEFAULT_TEMPLATE"
)


def _template_error(message: str, hint: str = _BLOCKS_HINT) -> StructureError:
    return StructureError([Diagnostic(severity="error", message=message, hint=hint)])
