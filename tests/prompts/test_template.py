"""The message template users may replace: rendered in Jinja2's sandbox, every failure a
``StructureError`` that points at the template's line."""

import pytest
from pydantic import Field

from langtree import RunStructure, StructureError, TreeNode
from langtree.prompts._template import DEFAULT_TEMPLATE, StepTemplate


class TaskGreeting(TreeNode):
    """Greet {name}."""

    name: str = Field(description="Who is greeted.")
    greeting: str = Field(description="One sentence.")


RECEIVES = (
    "the template receives context, document, field_names, fields, instructions, node_path, step_id"
)
SANDBOX_HINT = (
    "templates run in Jinja2's sandbox: use the values the template receives, not "
    "Python's internals"
)


def human(line: str) -> str:
    """A template whose human block's second line is ``line``."""
    return (
        "{% block system %}Write the fields.{% endblock %}\n"
        "{% block human %}{{ document }}\n"
        f"{line}\n"
        "{% endblock %}\n"
    )


def render_error(template: str) -> str:
    structure = RunStructure({"prompt_template": template})
    structure.add(TaskGreeting)
    with pytest.raises(StructureError) as raised:
        structure.prompts({TaskGreeting: {"name": "Ada"}})
    return str(raised.value)


def problem(message: str, line: str, hint: str) -> str:
    marker = "^" + "~" * (len(line) - 1)
    return (
        f"LangTree found 1 problem:\n\nerror: {message}\n    {line}\n    {marker}\n  hint: {hint}"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        pytest.param(
            "{{ cycler.__init__.__globals__.os.getcwd() }}",
            "access to attribute '__init__' of 'type' object is unsafe.",
            id="cycler-globals",
        ),
        pytest.param(
            "{{ lipsum.__globals__['os'].system('true') }}",
            "access to attribute '__globals__' of 'function' object is unsafe.",
            id="lipsum-globals",
        ),
        pytest.param(
            "{{ document.__class__.__mro__[1].__subclasses__() }}",
            "access to attribute '__class__' of 'str' object is unsafe.",
            id="subclasses",
        ),
        pytest.param(
            "{{ document.upper.__self__ }}",
            "access to attribute '__self__' of 'builtin_function_or_method' object is unsafe.",
            id="bound-method-owner",
        ),
    ],
)
def test_a_template_cannot_reach_python_internals(line: str, message: str) -> None:
    assert render_error(human(line)) == problem(
        f"The prompt template fails to render at line 3: {message}", line, SANDBOX_HINT
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        pytest.param("{{ 1 / 0 }}", "ZeroDivisionError: division by zero", id="zero-division"),
        pytest.param(
            "{{ fields + 1 }}",
            'TypeError: can only concatenate list (not "int") to list',
            id="type-error",
        ),
        pytest.param(
            "{% include 'footer.md' %}",
            "TypeError: no loader for this environment specified",
            id="include-without-loader",
        ),
        pytest.param("{{ nope }}", "'nope' is undefined", id="undefined"),
        pytest.param(
            "{{ document.nope }}", "'str object' has no attribute 'nope'", id="no-attribute"
        ),
    ],
)
def test_any_failure_while_rendering_is_a_structure_error(line: str, message: str) -> None:
    assert render_error(human(line)) == problem(
        f"The prompt template fails to render at line 3: {message}", line, RECEIVES
    )


def test_a_template_that_does_not_compile_names_its_line() -> None:
    line = "{% block human %}{{ document }{% endblock %}"
    source = "{% block system %}S{% endblock %}\n" + line + "\n"

    with pytest.raises(StructureError) as raised:
        StepTemplate(source)

    assert str(raised.value) == problem(
        "The prompt template does not compile at line 2: unexpected '}'",
        line,
        "fix the Jinja2 syntax on that line; langtree.prompts._template.DEFAULT_TEMPLATE is a "
        "template that compiles",
    )


def test_the_default_template_renders_in_the_sandbox() -> None:
    (_, human_message) = StepTemplate(DEFAULT_TEMPLATE).render(
        {
            "document": "# Greeting\n",
            "fields": ["Greeting"],
            "field_names": ["greeting"],
            "node_path": "task.greeting",
            "step_id": "task.greeting:greeting",
        }
    )

    assert human_message.content == "# Greeting\n\n# Output\n\nWrite Greeting.\n"
