"""Images, documents, audio and video given to a step as inputs: `Asset`.

A field typed ``Asset`` (or ``list[Asset]``, ``Asset | None``) holds a file the model
reads rather than text: the prompt shows a short placeholder where the value stands and
the file goes with the human message as a multimodal content block (see
`langtree.prompts._attachments`). Assets are inputs only: a field that holds one is
known (DESIGN D2), never part of a step's output, and ``validate()`` refuses a node that a
step would generate whole while one of its fields holds assets (`check_assets()`).
"""

from __future__ import annotations

import base64
import binascii
import functools
import mimetypes
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Literal, TypeAlias, get_args
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict, model_validator

from langtree.errors import Diagnostic
from langtree.structure.tree._registry import NodeRegistry
from langtree.structure.tree._tree import Node, NodeField
from langtree.structure.tree._tree_node import display_name
from langtree.structure.types._annotations import strip_annotated

__all__ = ["Asset", "AssetKind", "asset_field_names", "check_assets", "holds_asset"]

AssetKind: TypeAlias = Literal["image", "video", "audio", "document"]
"""What a model reads an asset as, from its media type's top-level type."""

_KINDS: Mapping[str, AssetKind] = {"image": "image", "video": "video", "audio": "audio"}


class Asset(BaseModel):
    """A file a step's model receives as a content block: from a URL, a local path, bytes
    or a ``data:`` URI.

    Exactly one of ``url``, ``path`` and ``data`` is set. A string given where an asset
    is expected is read as a ``data:`` URI, an ``http(s)://`` URL, or else a local path;
    a ``data:`` URI given as ``url`` becomes ``data``. ``media_type`` is guessed from the
    URI, or from the suffix of the URL or path, and must be given otherwise.

    Attributes:
        url: Where the model's provider fetches the file.
        path: A local file, read each time a prompt that shows it is assembled, and
            only from the folders the run's ``asset_folders`` names (see
            ``langtree.prompts._asset_files``).
        data: The file's bytes (base64 in JSON).
        media_type: The IANA media type, e.g. ``image/png`` or ``application/pdf``.
        title: Shown in the prompt's placeholder, and a document's file name.

    Examples:
        >>> Asset(path="photos/kettle.jpg", title="Kettle").kind
        'image'
        >>> Asset.model_validate("data:application/pdf;base64,JVBERi0=").data
        b'%PDF-'
    """

    model_config = ConfigDict(
        frozen=True, extra="forbid", ser_json_bytes="base64", val_json_bytes="base64"
    )

    url: str | None = None
    path: Path | None = None
    data: bytes | None = None
    media_type: str
    title: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _read_source(cls, value: object) -> object:
        if isinstance(value, str):
            value = _from_text(value)
        if not isinstance(value, Mapping):
            return value
        fields = dict(value)
        url = fields.get("url")
        if isinstance(url, str) and url.startswith("data:"):
            fields.pop("url")
            fields.update(_from_text(url))
        elif isinstance(fields.get("data"), str) and str(fields["data"]).startswith("data:"):
            fields.update(_from_text(str(fields["data"])))
        return _with_media_type(fields)

    @model_validator(mode="after")
    def _one_source(self) -> Asset:
        given = [name for name in ("url", "path", "data") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                f"an Asset takes exactly one of url, path and data, got {len(given)}"
                + (f" ({', '.join(given)})" if given else "")
            )
        return self

    @property
    def kind(self) -> AssetKind:
        """``image``, ``video`` or ``audio`` by the media type, else ``document``."""
        return _KINDS.get(self.media_type.partition("/")[0], "document")


def _from_text(text: str) -> dict[str, object]:
    """The fields a string stands for: a ``data:`` URI, a URL, or a path."""
    if not text.startswith("data:"):
        scheme = urlsplit(text).scheme
        return {"url": text} if scheme in ("http", "https") else {"path": text}
    header, comma, payload = text[5:].partition(",")
    if not comma:
        raise ValueError("a data: URI needs a ',' before its data")
    parameters = header.split(";")
    fields: dict[str, object] = {"media_type": parameters[0]} if parameters[0] else {}
    if parameters[-1] == "base64":
        try:
            fields["data"] = base64.b64decode(payload, validate=True)
        except binascii.Error as error:
            raise ValueError(f"the data: URI's base64 does not decode: {error}") from None
    else:
        fields["data"] = unquote(payload).encode()
    return fields


def _with_media_type(fields: dict[str, object]) -> dict[str, object]:
    if fields.get("media_type") is not None:
        return fields
    source = fields.get("path") or fields.get("url")
    name = urlsplit(source).path if isinstance(source, str) else source
    guessed = mimetypes.guess_type(str(name))[0] if isinstance(name, str | Path) else None
    if guessed is None:
        raise ValueError(
            "the asset's media type cannot be guessed"
            + (f" from {str(source)!r}" if source is not None else "")
            + ": pass media_type, e.g. media_type='image/png'"
        )
    return {**fields, "media_type": guessed}


# -- fields that hold assets ----------------------------------------------------------------


def holds_asset(annotation: object) -> bool:
    """Whether values of ``annotation`` may hold an `Asset` (at any depth).

    Examples:
        >>> holds_asset(list[Asset]), holds_asset(Asset | None), holds_asset(str)
        (True, True, False)
    """
    return any(item is Asset for item in _types_within(annotation))


@functools.lru_cache(maxsize=1024)
def asset_field_names(node_class: type[BaseModel]) -> frozenset[str]:
    """The fields of a class that may hold assets (once per class: prompts ask for every
    node they show, on every call)."""
    return frozenset(
        name for name, info in node_class.model_fields.items() if holds_asset(info.annotation)
    )


def _types_within(annotation: object) -> Iterator[object]:
    stack = [annotation]
    while stack:
        item = strip_annotated(stack.pop())
        yield item
        stack.extend(argument for argument in get_args(item) if argument is not Ellipsis)


def check_assets(
    registry: NodeRegistry, generated: Mapping[str, tuple[str, ...]]
) -> list[Diagnostic]:
    """An error for every asset field that a step would generate.

    Args:
        registry: The nodes.
        generated: The fields each step generates, by node tag (a node field's nested
            nodes are generated whole with it).
    """
    diagnostics: list[Diagnostic] = []
    for tag, names in generated.items():
        holder = registry.get(tag)
        assert holder is not None, "steps are drafted from the registry's nodes"
        for name in names:
            node_field = holder.field(name)
            assert node_field is not None
            diagnostics += [
                _generated_asset(node, inner, holder, name)
                for node, inner in _asset_fields_below(registry, holder, node_field)
            ]
    return diagnostics


def _asset_fields_below(
    registry: NodeRegistry, holder: Node, node_field: NodeField
) -> Iterator[tuple[Node, NodeField]]:
    """``node_field`` if it holds assets, and the asset fields of the nodes below it."""
    if holds_asset(node_field.annotation):
        yield holder, node_field
    child = registry.child(holder, node_field.name)
    pending = [child] if child is not None else []
    while pending:
        node = pending.pop()
        pending.extend(registry.children(node.tag))
        yield from ((node, f) for f in node.fields if holds_asset(f.annotation))


def _generated_asset(node: Node, node_field: NodeField, holder: Node, name: str) -> Diagnostic:
    where = f"{display_name(node.node_class)}.{node_field.name}"
    step = f"{display_name(holder.node_class)}.{name}"
    inside = "" if where == step else f", inside the node generated whole by {step!r}"
    return Diagnostic(
        severity="error",
        message=f"{where!r} holds assets, which are inputs only: a step would generate it{inside}",
        hint=f"supply {node_field.name!r} in the inputs (or by a command), or give "
        f"{name!r} a value so that the fields below it get steps of their own",
        class_name=node.origin.class_name,
        field_name=node_field.name,
        file=node.origin.file,
        line=node.origin.line,
    )
