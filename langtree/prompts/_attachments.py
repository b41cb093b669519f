"""Assets in prompts: placeholders in the text, content blocks beside it.

Where a prompt shows a value that is or holds an `Asset`,
the text shows ``[image 1: Front view]`` (kind, number within the prompt, title when it
has one) and the human message becomes a list of LangChain standard content blocks: the
text, then one block per asset in the order of their numbers. An asset shown twice keeps
its number and is sent once. Its bytes never enter the text.

The blocks are langchain-core's (1.x) multimodal blocks: ``{"type": "image", "url": ...}``
or ``{"type": "image", "base64": ..., "mime_type": ...}``; ``video`` and ``audio`` alike;
a document is a ``{"type": "file", ...}`` block whose title is its ``extras`` file name.
A path is read when the prompt is assembled, under the run's rules for local files
(`langtree.prompts._asset_files`). A run's trace keeps the messages without the assets'
bytes (`without_asset_bytes()`): each block names its asset by its placeholder instead.

Token counts add an estimate per asset (`ASSET_TOKENS`), since how a provider
counts an image or a page depends on its resolution, which LangTree does not read.

Before any call, a run checks what the caller must give: every required asset field of
every node instance has a value (`check_given_assets()`), every local file it names may
be read (`check_asset_files()`), and, through a model's profile, which kinds the model
reads (`lacked_input()`). Errors name an asset by the field it was given in
(`AssetSources`), e.g. ``'TaskDescribe.photo'``.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from langtree.errors import ExecutionError
from langtree.prompts._asset_files import AssetFiles, refused_files_error
from langtree.prompts._given_inputs import listed, missing_given
from langtree.prompts._state import RunState
from langtree.prompts._values import rebuild
from langtree.structure import (
    Asset,
    AssetKind,
    Node,
    NodeRegistry,
    asset_field_names,
    display_name,
    type_adapter,
)

__all__ = [
    "ASSET_TOKENS",
    "AssetCollector",
    "AssetSource",
    "AssetSources",
    "asset_tokens",
    "check_asset_files",
    "check_given_assets",
    "content_blocks",
    "lacked_input",
    "lacked_inputs",
    "placeholder",
    "unsupported_assets",
    "with_assets",
    "without_asset_bytes",
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
        return placeholder(asset, self.assets.index(asset) + 1)


def placeholder(asset: Asset, number: int) -> str:
    """What a prompt's text shows in place of its asset ``number``.

    Examples:
        >>> placeholder(Asset(url="https://example.com/a.png", title="Front"), 2)
        '[image 2: Front]'
    """
    title = f": {asset.title}" if asset.title else ""
    return f"[{asset.kind} {number}{title}]"


def _may_hold_asset(value: object) -> bool:
    """Whether ``value`` is a container or a model (which may hold assets)."""
    return isinstance(value, Mapping | list | tuple | BaseModel)


def with_assets(node: Node, values: Mapping[str, object]) -> Mapping[str, object]:
    """A node instance's values with its asset fields' values as assets (inputs given
    as text or dicts, e.g. from JSON, are validated into `Asset`).

    An optional asset field that nothing gave (``photo: Asset | None = None``) is known
    as ``None``, as every asset field is (DESIGN D2): ``{photo}`` and the context show
    ``null`` rather than a placeholder that nothing fills.

    Raises:
        ExecutionError: A value does not fit its asset field.
    """
    names = asset_field_names(node.node_class)
    if not names:
        return values
    converted = dict(values)
    for node_field in node.fields:
        if node_field.name not in names:
            continue
        if node_field.name not in values:
            if _defaults_to_none(node, node_field.name):
                converted[node_field.name] = None
            continue
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


def _defaults_to_none(node: Node, name: str) -> bool:
    info = node.node_class.model_fields[name]
    return not info.is_required() and info.default_factory is None and info.default is None


def content_blocks(
    assets: Sequence[Asset], read_file: Callable[[Asset], bytes]
) -> list[dict[str, Any]]:
    """One LangChain standard content block per asset, in order.

    Args:
        assets: The prompt's assets, in the order of their numbers.
        read_file: The bytes of an asset given by its path (see `AssetFiles`).

    Raises:
        ExecutionError: A path cannot be read (``read_file`` raises it).

    Examples:
        >>> content_blocks([Asset(url="https://example.com/a.png")], read_file=lambda _: b"")
        [{'type': 'image', 'mime_type': 'image/png', 'url': 'https://example.com/a.png'}]
    """
    return [_block(asset, read_file) for asset in assets]


def _block(asset: Asset, read_file: Callable[[Asset], bytes]) -> dict[str, Any]:
    block: dict[str, Any] = {"type": _BLOCK_TYPES[asset.kind], "mime_type": asset.media_type}
    if asset.url is not None:
        block["url"] = asset.url
    else:
        data = asset.data if asset.data is not None else read_file(asset)
        block["base64"] = base64.b64encode(data).decode("ascii")
    if asset.kind == "document" and asset.title:
        block["extras"] = {"filename": asset.title}
    return block


def without_asset_bytes(
    messages: tuple[BaseMessage, ...], assets: Sequence[Asset]
) -> tuple[BaseMessage, ...]:
    """The messages as a run's trace keeps them: each asset's block without its bytes
    (``base64``), naming the asset by its placeholder in ``extras`` instead.

    The caller holds the asset already (or its file does): a second copy, a third
    larger in base64, would stay with every trace record of the run.

    Args:
        messages: The messages sent, whose asset blocks follow `content_blocks()`.
        assets: The prompt's assets, in the order of their blocks.
    """
    return tuple(_without_bytes(message, assets) for message in messages)


def _without_bytes(message: BaseMessage, assets: Sequence[Asset]) -> BaseMessage:
    content = message.content
    if isinstance(content, str) or not any(_holds_bytes(block) for block in content):
        return message
    numbered = iter(enumerate(assets, start=1))
    kept: list[str | dict[Any, Any]] = []
    for block in content:
        # Blocks other than text are the assets' blocks, one per asset, in number order.
        if not isinstance(block, dict) or block.get("type") == "text":
            kept.append(block)
            continue
        number, asset = next(numbered)
        if not _holds_bytes(block):
            kept.append(block)
            continue
        extras = {**block.get("extras", {}), "asset": placeholder(asset, number)}
        kept.append({**{k: v for k, v in block.items() if k != "base64"}, "extras": extras})
    return message.model_copy(update={"content": kept})


def _holds_bytes(block: object) -> bool:
    return isinstance(block, dict) and "base64" in block


def asset_tokens(assets: list[Asset] | tuple[Asset, ...]) -> int:
    """The tokens counted for the assets of one prompt (see `ASSET_TOKENS`)."""
    return sum(ASSET_TOKENS[asset.kind] for asset in assets)


_PROFILE_KEYS: Mapping[AssetKind, str] = {
    "image": "image_inputs",
    "video": "video_inputs",
    "audio": "audio_inputs",
    "document": "pdf_inputs",
}


def lacked_inputs(profile: Mapping[str, object] | None) -> frozenset[str]:
    """The profile keys of the inputs that ``profile`` says the model lacks.

    Examples:
        >>> sorted(lacked_inputs({"image_inputs": False, "pdf_inputs": True}))
        ['image_inputs']
    """
    return frozenset(key for key in _PROFILE_KEYS.values() if (profile or {}).get(key) is False)


def lacked_input(asset: Asset, profile: Mapping[str, object] | None) -> str | None:
    """The profile key that ``asset`` needs and that ``profile`` says the model lacks
    (``image_inputs``, ``video_inputs``, ``audio_inputs``, or ``pdf_inputs`` for a PDF),
    or ``None``.

    Only what the profile states counts (``image_inputs=False``); a profile that says
    nothing about a kind, or no profile, lets the provider decide. Documents other than
    PDFs have no key in a profile.

    Examples:
        >>> lacked_input(Asset(url="https://example.com/a.png"), {"image_inputs": False})
        'image_inputs'
    """
    if not profile or (asset.kind == "document" and asset.media_type != "application/pdf"):
        return None
    key = _PROFILE_KEYS[asset.kind]
    return key if profile.get(key) is False else None


def unsupported_assets(
    assets: tuple[Asset, ...], profile: Mapping[str, object] | None
) -> str | None:
    """Why a model whose profile is ``profile`` cannot take ``assets``, or ``None``.

    Examples:
        >>> unsupported_assets((Asset(url="https://example.com/a.png"),), {"image_inputs": False})
        "image 1 needs 'image_inputs', which the model's profile says it lacks"
    """
    for number, asset in enumerate(assets, start=1):
        key = lacked_input(asset, profile)
        if key is not None:
            title = f" ({asset.title!r})" if asset.title else ""
            lacks = "which the model's profile says it lacks"
            return f"{asset.kind} {number}{title} needs {key!r}, {lacks}"
    return None


# -- where a run's assets come from ---------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class AssetSource:
    """Where an asset was given: a node's field, or an external variable.

    Attributes:
        label: How errors name it: ``'TaskDescribe.photo'``, ``"variables['logo']"``.
        node: The node whose field holds it (``None`` for a variable).
        field_name: That field.
    """

    label: str
    node: Node | None = None
    field_name: str | None = None


class AssetSources:
    """Where each asset of a run's values stands first: the asset fields of the node
    instances (nodes in registry order), then the external variables.

    An asset field whose value does not fit is passed over: the prompt that shows it
    reports it (see `with_assets()`).
    """

    def __init__(
        self, registry: NodeRegistry, state: RunState, variables: Mapping[str, object]
    ) -> None:
        self._sources: dict[Asset, AssetSource] = {}
        for node in registry:
            names = asset_field_names(node.node_class)
            for address in state.instances(node.tag) if names else ():
                try:
                    values = with_assets(node, state.instance(address) or {})
                except ExecutionError:
                    continue
                for name in (f.name for f in node.fields if f.name in names):
                    label = f"{display_name(node.node_class)}.{name}"
                    source = AssetSource(label=label, node=node, field_name=name)
                    self._add(values.get(name), source)
        for name, value in variables.items():
            self._add(value, AssetSource(label=f"variables[{name!r}]"))

    def _add(self, value: object, source: AssetSource) -> None:
        for asset in _assets_in(value):
            self._sources.setdefault(asset, source)

    def __iter__(self) -> Iterator[tuple[Asset, AssetSource]]:
        """Each asset with where it stands first, in the order they were found."""
        return iter(self._sources.items())

    def of(self, asset: Asset) -> AssetSource:
        """Where ``asset`` was given; one that no field or variable holds (a value of a
        field typed ``Any``, say) is named by its title, URL, path or media type."""
        source = self._sources.get(asset)
        if source is not None:
            return source
        path = str(asset.path) if asset.path is not None else None
        return AssetSource(label=asset.title or asset.url or path or f"{asset.media_type} data")


def _assets_in(value: object) -> list[Asset]:
    """The assets ``value`` holds, in the order a prompt numbers them."""
    collector = AssetCollector()
    collector.swap(value)
    return collector.assets


# -- required assets --------------------------------------------------------------------------


def check_given_assets(registry: NodeRegistry, state: RunState) -> None:
    """Raise when a required asset field of a node instance has no value.

    Assets are inputs only (DESIGN D2): no step writes one, so a required asset field
    that the inputs, its default and the commands leave empty would fail the run only
    after every call. Instances not known before the run (``[*]``) are not checked.

    Raises:
        ExecutionError: Naming every such field, by its instance path.
    """
    missing = missing_given(registry, state, lambda node: asset_field_names(node.node_class))
    if not missing:
        return
    name = missing[0][1].rpartition(".")[2]
    raise ExecutionError(
        f"Missing asset(s): {listed(missing)}; assets are inputs, and no input, "
        "default or command gives these\n"
        "  hint: pass each in the inputs (an Asset, or a URL, a path or a data: URI), or "
        f"make the field optional with a default of None ({name}: Asset | None = None)"
    )


# -- local files -------------------------------------------------------------------------------


def check_asset_files(sources: AssetSources, files: AssetFiles) -> None:
    """Raise when a local file that an asset of the run names would not be read.

    Each file is opened and its type and size checked, none read (see `AssetFiles`),
    so that a path outside the named folders, a device, a pipe or a file over the size
    cap stops the run before its first call rather than at the step that shows it.

    Raises:
        ExecutionError: Naming every such file and where its asset was given.
    """
    refusals = [
        refusal
        for asset, source in sources
        if asset.path is not None
        and (refusal := files.refusal(asset.path, source.label)) is not None
    ]
    if refusals:
        raise refused_files_error(refusals)
