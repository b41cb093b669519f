"""Assets in prompts: placeholders in the text, content blocks beside it.

Where a prompt shows a value that is or holds an :class:`~langtree.structure.assets.Asset`,
the text shows ``[image 1: Front view]`` (kind, number within the prompt, title when it
has one) and the human message becomes a list of LangChain standard content blocks: the
text, then one block per asset in the order of their numbers. An asset shown twice keeps
its number and is sent once. Its bytes never enter the text.

The blocks are langchain-core's (1.x) multimodal blocks: ``{"type": "image", "url": ...}``
or ``{"type": "image", "base64": ..., "mime_type": ...}``; ``video`` and ``audio`` alike;
a document is a ``{"type": "file", ...}`` block whose title is its ``extras`` file name.
A path is read when the prompt is assembled.

Token counts add an estimate per asset (:data:`ASSET_TOKENS`), since how a provider
counts an image or a page depends on its resolution, which LangTree does not read.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from langtree.errors import ExecutionError
from langtree.prompts.values import rebuild
from langtree.structure.assets import Asset, AssetKind, asset_field_names
from langtree.structure.defaults import type_adapter
from langtree.structure.tree import Node

__all__ = [
    "ASSET_TOKENS",
    "AssetCollector",
    "asset_tokens",
    "content_blocks",
    "unsupported_assets",
    "with_assets",
]

ASSET_TOKENS: Mapping[AssetKind, int] = {"image": 85, "document": 258, "audio": 258, "video": 258}
"""Tokens counted per asset: an image as OpenAI's low-detail image (85), any other asset
as one page or a second or so of media (258, what Gemini counts for an image or a PDF
page). A lower bound rather than a count: budgets with assets need slack."""

_BLOCK_TYPES: Mapping[AssetKind, str] = {
    "image": "image",
    "video": "video",
    "audio": "audio",
    "document": "file",
}


class AssetCollector:
    """Numbers the assets of one prompt as its values are rendered."""

    def __init__(self) -> None:
        self.assets: list[Asset] = []

    def swap(self, value: object) -> object:
        """``value`` with each asset in it replaced by its placeholder text (a list of
        assets by their placeholders, one a line)."""
        if isinstance(value, Asset):
            return self._placeholder(value)
        if isinstance(value, list | tuple) and value and all(isinstance(v, Asset) for v in value):
            return "\n".join(self._placeholder(asset) for asset in value)
        if not _may_hold_asset(value):
            return value
        return rebuild(value, self._swapped_level)

    def _swapped_level(self, value: object) -> object:
        if isinstance(value, Asset):
            return self._placeholder(value)
        if isinstance(value, BaseModel) and _may_hold_asset(value):
            return {name: getattr(value, name) for name in type(value).model_fields}
        if isinstance(value, Mapping):
            return {str(key): item for key, item in value.items()}
        if isinstance(value, list | tuple):
            return list(value)
        return value

    def _placeholder(self, asset: Asset) -> str:
        if asset not in self.assets:
            self.assets.append(asset)
        number = self.assets.index(asset) + 1
        title = f": {asset.title}" if asset.title else ""
        return f"[{asset.kind} {number}{title}]"


def _may_hold_asset(value: object) -> bool:
    """Whether ``value`` is a container or a model (which may hold assets)."""
    return isinstance(value, Mapping | list | tuple | BaseModel)


def with_assets(node: Node, values: Mapping[str, object]) -> Mapping[str, object]:
    """A node instance's values with its asset fields' values as assets (inputs given
    as text or dicts, e.g. from JSON, are validated into :class:`Asset`).

    Raises:
        ExecutionError: A value does not fit its asset field.
    """
    names = asset_field_names(node.node_class)
    fields = [f for f in node.fields if f.name in names and f.name in values]
    if not fields:
        return values
    converted = dict(values)
    for node_field in fields:
        try:
            converted[node_field.name] = type_adapter(node_field.annotation).validate_python(
                values[node_field.name]
            )
        except ValueError as error:
            raise ExecutionError(
                f"The asset field {node.tag}.{node_field.name} cannot hold "
                f"{values[node_field.name]!r:.60}: {error}\n"
                "  hint: pass an Asset, or a URL, a path or a data: URI"
            ) from None
    return converted


def content_blocks(assets: list[Asset] | tuple[Asset, ...]) -> list[dict[str, Any]]:
    """One LangChain standard content block per asset, in order.

    Raises:
        ExecutionError: A path cannot be read.

    >>> content_blocks([Asset(url="https://example.com/a.png")])
    [{'type': 'image', 'mime_type': 'image/png', 'url': 'https://example.com/a.png'}]
    """
    return [_block(asset) for asset in assets]


def _block(asset: Asset) -> dict[str, Any]:
    block: dict[str, Any] = {"type": _BLOCK_TYPES[asset.kind], "mime_type": asset.media_type}
    if asset.url is not None:
        block["url"] = asset.url
    else:
        block["base64"] = base64.b64encode(_bytes(asset)).decode("ascii")
    if asset.kind == "document" and asset.title:
        block["extras"] = {"filename": asset.title}
    return block


def _bytes(asset: Asset) -> bytes:
    if asset.data is not None:
        return asset.data
    assert asset.path is not None, "an asset has a url, a path or data"
    try:
        return asset.path.read_bytes()
    except OSError as error:
        raise ExecutionError(
            f"Cannot read the asset {str(asset.path)!r}: {error.strerror or error}\n"
            "  hint: paths are read when the prompt is assembled, relative to the "
            "working directory"
        ) from None


def asset_tokens(assets: list[Asset] | tuple[Asset, ...]) -> int:
    """The tokens counted for the assets of one prompt (see :data:`ASSET_TOKENS`)."""
    return sum(ASSET_TOKENS[asset.kind] for asset in assets)


_PROFILE_KEYS: Mapping[AssetKind, str] = {
    "image": "image_inputs",
    "video": "video_inputs",
    "audio": "audio_inputs",
    "document": "pdf_inputs",
}


def unsupported_assets(
    assets: tuple[Asset, ...], profile: Mapping[str, object] | None
) -> str | None:
    """Why a model whose profile is ``profile`` cannot take ``assets``, or ``None``.

    Only what the profile states counts (``image_inputs=False``); a profile that says
    nothing about a kind, or no profile, lets the provider decide.

    >>> unsupported_assets((Asset(url="https://example.com/a.png"),), {"image_inputs": False})
    "image 1 needs 'image_inputs', which the model's profile says it lacks"
    """
    if not profile:
        return None
    for number, asset in enumerate(assets, start=1):
        key = _PROFILE_KEYS[asset.kind]
        if asset.kind == "document" and asset.media_type != "application/pdf":
            continue
        if profile.get(key) is False:
            title = f" ({asset.title!r})" if asset.title else ""
            lacks = "which the model's profile says it lacks"
            return f"{asset.kind} {number}{title} needs {key!r}, {lacks}"
    return None
