"""The base class of every node in a prompt tree, and the texts its subclasses keep.

A node class's docstring and its fields' descriptions hold prompt text and command lines
(``! ...``). The commands are for LangTree alone, so a ``TreeNode`` subclass hands the
rest of the world its texts without them: ``model_fields[name].description`` and
``model_json_schema()`` (which LangChain's structured output, OpenAI's ``response_format``
and FastAPI read) show the prose, command lines removed and the rest dedented as in a
prompt (DESIGN D10). The texts as written stay with LangTree: `written_texts()`.

``cls.__doc__`` is left as written. It is Python's documentation of the class, the text
``help()``, IDEs, doctest and Sphinx show, and they should agree with the source; the
JSON schema's ``description``, the docstring that is handed to other programs, is the
prose.
"""

from __future__ import annotations

import inspect
import sys
import weakref
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from langtree.dsl import extract_commands, split_lines
from langtree.errors import CommandParseError
from langtree.structure.call_commands._table import call_signatures

__all__ = ["TreeNode", "WrittenTexts", "display_name", "without_commands", "written_texts"]


@dataclass(frozen=True, slots=True, kw_only=True)
class WrittenTexts:
    """A node class's texts as its author wrote them, commands included.

    Attributes:
        docstring: The class's docstring (``cls.__doc__``).
        descriptions: Each field's description, by field name in declaration order.
    """

    docstring: str | None
    descriptions: dict[str, str | None]


_WRITTEN: weakref.WeakKeyDictionary[type, dict[str, str | None]] = weakref.WeakKeyDictionary()
"""The descriptions as written, kept when a class's fields lose their commands."""


def written_texts(cls: type[BaseModel]) -> WrittenTexts:
    """The docstring and field descriptions of ``cls`` as written, commands included.

    A ``TreeNode`` subclass's fields show their descriptions without commands; this is
    where LangTree reads them. A field a class inherits has the text its base wrote.

    Examples:
        >>> from pydantic import Field
        >>> class Note(TreeNode):
        ...     text: str = Field(description="! llm('fast')\\nThe note.")
        >>> Note.model_fields["text"].description
        'The note.'
        >>> written_texts(Note).descriptions
        {'text': "! llm('fast')\\nThe note."}
    """
    descriptions = _WRITTEN.get(cls)
    if descriptions is None:
        descriptions = _descriptions_as_written(cls)
    return WrittenTexts(docstring=cls.__doc__, descriptions=dict(descriptions))


def without_commands(text: str | None) -> str | None:
    """``text`` as pydantic shows it: command lines removed, the rest dedented.

    A text without command lines stays as it is; one that held only commands becomes
    ``None``. When a command does not parse (LangTree reports it when the class is added),
    only the lines that start with ``!`` go.

    Examples:
        >>> without_commands("! @parallel\\n    Summarise the report.")
        'Summarise the report.'
        >>> without_commands("! resample(3)") is None
        True
    """
    if not isinstance(text, str) or not any(
        line.lstrip().startswith("!") for line in split_lines(text)
    ):
        return text
    try:
        prose = extract_commands(text, signatures=call_signatures()).text
    except CommandParseError:
        kept = (line for line in split_lines(text) if not line.lstrip().startswith("!"))
        prose = inspect.cleandoc("\n".join(kept))
    return prose or None


def display_name(cls: type) -> str:
    """A class's name as users wrote it: nested classes keep their outer class
    (``TaskReport.Section``), a class defined inside a function drops the function.

    Examples:
        >>> display_name(TreeNode)
        'TreeNode'
    """
    return cls.__qualname__.rsplit("<locals>.", 1)[-1]


def _adopt(cls: type[BaseModel]) -> None:
    """Keep the descriptions of ``cls`` as written (once), then remove their commands."""
    if cls not in _WRITTEN:
        _WRITTEN[cls] = _descriptions_as_written(cls)
    for info in cls.__pydantic_fields__.values():
        info.description = without_commands(info.description)


def _descriptions_as_written(cls: type[BaseModel]) -> dict[str, str | None]:
    """The descriptions before ``cls`` removes their commands: its own fields' as they
    are, an inherited field's as its base wrote it (pydantic copies the base's field,
    whose description already lost its commands)."""
    own = _own_annotations(cls)
    return {
        name: info.description if name in own else _inherited(cls, name, info.description)
        for name, info in cls.__pydantic_fields__.items()
    }


def _inherited(cls: type[BaseModel], name: str, description: str | None) -> str | None:
    # Pydantic takes an inherited field from the first base that has it.
    for base in cls.__bases__:
        if issubclass(base, BaseModel) and name in base.__pydantic_fields__:
            return written_texts(base).descriptions[name]
    return description


if sys.version_info >= (3, 14):
    import annotationlib

    def _own_annotations(cls: type) -> Collection[str]:
        # Forward references stay unevaluated: only the names count.
        return annotationlib.get_annotations(cls, format=annotationlib.Format.FORWARDREF)

else:

    def _own_annotations(cls: type) -> Collection[str]:
        return inspect.get_annotations(cls)


def _clean_schema(json_schema: JsonSchemaValue) -> None:
    """Remove the command lines from a model schema's description and its properties'."""
    described = [json_schema, *json_schema.get("properties", {}).values()]
    for schema in described:
        text = schema.get("description")
        if isinstance(text, str):
            prose = without_commands(text)
            if prose is None:
                del schema["description"]
            else:
                schema["description"] = prose


# Defined last: pydantic calls __pydantic_on_complete__ while it creates the class itself.
class TreeNode(BaseModel):
    """The base class of every node in a prompt tree: a Pydantic model whose subclasses
    describe the data a run produces.

    A root task is a subclass named `Task<Name>`, added with `RunStructure.add()`; the
    classes its fields hold, alone or in lists, are the nodes below it. In a subclass the
    docstring is the node's prompt text and `Field(description=...)` each field's; lines
    starting with `!` in either are DSL commands, which never reach a prompt. A field is
    known when the caller supplies it, when it has a default other than `None` (or a
    `default_factory`), or when a command writes it; a model generates every other field.

    A subclass is an ordinary Pydantic model otherwise. What it hands to other programs is
    the prose: `model_json_schema()` (which LangChain's structured output and OpenAI's
    `response_format` read) and `model_fields[name].description` hold the texts with their
    command lines removed, while `__doc__` stays as written. This docstring is Python's and
    no subclass's: a subclass without a docstring has `__doc__` `None`, and no prompt text
    of its own.

    Examples:
        >>> from pydantic import Field
        >>> class TaskSummary(TreeNode):
        ...     '''
        ...     ! @parallel
        ...     Summarise the article in two sentences.
        ...     '''
        ...     article: str = Field(description="The article to summarise.")
        ...     summary: str = Field(description="! llm('fast')\\nTwo plain sentences.")
        >>> schema = TaskSummary.model_json_schema()
        >>> schema["description"], schema["properties"]["summary"]["description"]
        ('Summarise the article in two sentences.', 'Two plain sentences.')
    """

    @classmethod
    def __pydantic_on_complete__(cls) -> None:
        # Called once the fields are final: when the class is created, or on the
        # model_rebuild() that resolves a forward reference, which makes those fields
        # anew from their definitions, commands and all.
        super().__pydantic_on_complete__()
        _adopt(cls)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        # A class still waiting for a forward reference shows its prose meanwhile.
        if not cls.__pydantic_complete__:
            _adopt(cls)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler, /
    ) -> JsonSchemaValue:
        # Pydantic built the core schema from the descriptions as written, and takes the
        # docstring as it is: remove the commands from what the JSON schema shows.
        json_schema = handler(core_schema)
        _clean_schema(handler.resolve_ref_schema(json_schema))
        return json_schema
